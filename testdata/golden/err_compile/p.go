// Package p does not compile.
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildJob builds a Job.
//
//agora:schedule every=1m
func BuildJob(context.Context) (*Job, error) { return &Job{}, nil }

// BuildBroken returns a type that does not exist.
//
//agora:schedule every=1m
func BuildBroken(context.Context) (*Missing, error) { return nil, nil }

func helper() int { return "not an int" }
