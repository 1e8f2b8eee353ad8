// Package deadlines declares pipelines whose slots must succeed in time.
package deadlines

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildHourly must have succeeded 15 minutes after each hour.
//
//agora:schedule cron="0 * * * *" deadline=15m
func BuildHourly(context.Context) (*Job, error) { return &Job{}, nil }

// BuildOften runs every 5 minutes, bounded in time, with a deadline longer
// than its interval: a slot may still be retried after the next one fired.
//
//agora:schedule every=5m timeout=1m deadline=7m30s backoff=30s
func BuildOften(context.Context) (*Job, error) { return &Job{}, nil }

// BuildPlain has no deadline: its registration sets no Deadline field.
//
//agora:schedule every=1h
func BuildPlain(context.Context) (*Job, error) { return &Job{}, nil }
