// Package p misspells directives.
//
//agora:wroker health_port=8080
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildJob builds a Job.
//
//agora:schedul every=1m
func BuildJob(context.Context) (*Job, error) { return &Job{}, nil }

// BuildOther builds a Job.
//
//agora:cron every=1m
func BuildOther(context.Context) (*Job, error) { return &Job{}, nil } //agora:
