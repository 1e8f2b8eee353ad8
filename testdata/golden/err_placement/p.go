// Package p puts directives where they do not belong.
//
//agora:schedule every=1m
package p

import "context"

// Job does nothing.
//
//agora:schedule every=1m
type Job struct{}

// Run returns nil.
//
//agora:schedule every=1m
func (*Job) Run(context.Context) error { return nil }

// Default is a job.
//
//agora:schedule every=1m
var Default = &Job{}

// BuildGeneric builds any pipeline.
//
//agora:schedule every=1m
func BuildGeneric[P any](context.Context) (*Job, error) { return &Job{}, nil }

//agora:schedule every=1m

// BuildDetached is separated from its directive by a blank line.
func BuildDetached(context.Context) (*Job, error) { return &Job{}, nil }

// BuildInside has a directive in its body.
func BuildInside(context.Context) (*Job, error) {
	//agora:schedule every=1m
	return &Job{}, nil
}

// BuildWorker carries the worker directive.
//
//agora:worker health_port=8080
func BuildWorker(context.Context) (*Job, error) { return &Job{}, nil }

//agora:schedule every=1m
