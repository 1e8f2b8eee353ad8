// Package p is not a main package, but the flags file passes -main.
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
