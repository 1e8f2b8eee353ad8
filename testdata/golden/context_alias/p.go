// Package p reaches context.Context only through an alias in another
// package: it imports neither context nor the runtime, and its factory is
// still a factory.
package p

import "github.com/agora-etl/agora/testdata/golden/context_alias/ctxalias"

// Job runs.
type Job struct{}

// Run returns nil.
func (*Job) Run(ctxalias.Context) error { return nil }

// BuildJob returns a Job.
//
//agora:schedule every=1m
func BuildJob(ctxalias.Context) (*Job, error) { return &Job{}, nil }
