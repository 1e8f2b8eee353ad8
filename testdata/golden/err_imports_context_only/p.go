// Package p imports only context.
package p

import "context"

// Job runs.
type Job struct{}

// Run returns nil.
func (Job) Run(context.Context) error { return nil }

// Build takes a context but returns no pipeline.
//
//agora:schedule every=1m
func Build(ctx context.Context) error { return nil }

// BuildJob returns a Job, but without an error.
//
//agora:schedule id=job once
func BuildJob(ctx context.Context) Job { return Job{} }
