// Package p already has a hand-written worker.go.
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
