// Package local never shares leases.
//
//agora:worker distributed=off
package local

import (
	"context"

	"github.com/agora-etl/agora/runtime"
)

// BuildCleanup builds the cleanup pipeline.
//
//agora:schedule every=10m
func BuildCleanup(context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
}
