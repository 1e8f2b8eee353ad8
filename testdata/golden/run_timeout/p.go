// Package timeouts declares pipelines whose runs are bounded in time.
package timeouts

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildExport is cancelled when a run takes more than 10 minutes.
//
//agora:schedule cron="0 * * * *" timeout=10m
func BuildExport(context.Context) (*Job, error) { return &Job{}, nil }

// BuildConsumer bounds each continuous run to 90 seconds.
//
//agora:schedule continuous timeout=90s
func BuildConsumer(context.Context) (*Job, error) { return &Job{}, nil }
