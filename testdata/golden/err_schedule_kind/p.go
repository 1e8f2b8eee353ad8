// Package p declares no kind, or two.
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildNone has no schedule kind.
//
//agora:schedule id=none backoff=30s
func BuildNone(context.Context) (*Job, error) { return &Job{}, nil }

// BuildTwo has two.
//
//agora:schedule every=1m cron="0 * * * *"
func BuildTwo(context.Context) (*Job, error) { return &Job{}, nil }

// BuildThree has three.
//
//agora:schedule once continuous every=5m
func BuildThree(context.Context) (*Job, error) { return &Job{}, nil }

// BuildBare is only the directive.
//
//agora:schedule
func BuildBare(context.Context) (*Job, error) { return &Job{}, nil }
