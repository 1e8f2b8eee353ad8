// Command consumer is a worker binary; -main generates its func main.
package main

import (
	"context"

	"github.com/agora-etl/agora/runtime"
)

// BuildConsumer builds the events consumer.
//
//agora:schedule continuous id=events.consumer
func BuildConsumer(context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
}
