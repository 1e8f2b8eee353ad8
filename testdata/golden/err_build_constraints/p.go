// Package p declares pipelines in files that some builds exclude.
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildEverywhere builds a Job in a file every build includes.
//
//agora:schedule id=everywhere every=1m
func BuildEverywhere(context.Context) (*Job, error) { return &Job{}, nil }
