// Package p misspells keys.
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildJob builds a Job.
//
//agora:schedule every=1m backof=30s max_error=3
func BuildJob(context.Context) (*Job, error) { return &Job{}, nil }

// BuildOther builds a Job.
//
//agora:schedule evry=1m retries=5
func BuildOther(context.Context) (*Job, error) { return &Job{}, nil }
