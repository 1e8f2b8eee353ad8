// Command reports is a worker binary.
//
//agora:worker main health_port=9090 distributed=auto
package main

import (
	"context"

	"github.com/agora-etl/agora/runtime"
)

// BuildReport builds the daily report.
//
//agora:schedule id=daily-report cron="@daily"
func BuildReport(context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
}
