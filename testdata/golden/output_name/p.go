// Package named writes its generated code to agora_worker.go.
package named

import (
	"context"

	"github.com/agora-etl/agora/runtime"
)

// BuildPing builds a pipeline.
//
//agora:schedule every=30s
func BuildPing(context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
}
