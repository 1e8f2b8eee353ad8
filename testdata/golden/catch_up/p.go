// Package catchup declares cron pipelines with catch-up policies.
package catchup

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildBilling runs every missed hourly slot, oldest first.
//
//agora:schedule cron="0 * * * *" catch_up=all
func BuildBilling(context.Context) (*Job, error) { return &Job{}, nil }

// BuildReport runs the newest missed slot once.
//
//agora:schedule cron="30 6 * * *" catch_up=latest grace=5m
func BuildReport(context.Context) (*Job, error) { return &Job{}, nil }

// BuildTicker skips missed slots, with a tighter grace than the default.
//
//agora:schedule cron="*/5 * * * * *" catch_up=skip grace=2s
func BuildTicker(context.Context) (*Job, error) { return &Job{}, nil }
