// Package stale has a broken generated file, and code that uses the names
// generated in it.
package stale

import (
	"context"

	"github.com/agora-etl/agora/runtime"
)

// Job is a pipeline.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildJob builds the job; it used to be called BuildOldJob.
//
//agora:schedule every=1m
func BuildJob(context.Context) (*Job, error) { return &Job{}, nil }

// ids uses a constant and a function of the generated file.
var ids = []string{PipelineJob}

var worker = GetWorker

var _ = func() *runtime.WorkerPool { return nil }
