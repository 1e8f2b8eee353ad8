// Package chain declares pipelines that wait for each other's slots.
package chain

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildExtract reads the hour's orders.
//
//agora:schedule cron="0 * * * *"
func BuildExtract(context.Context) (*Job, error) { return &Job{}, nil }

// BuildClean tidies the hour's files.
//
//agora:schedule cron="0 * * * *"
func BuildClean(context.Context) (*Job, error) { return &Job{}, nil }

// BuildLoad loads an hour once extract and clean completed it.
//
//agora:schedule cron="0 * * * *" after="extract, clean" after_timeout=20m
func BuildLoad(context.Context) (*Job, error) { return &Job{}, nil }

// BuildReport waits for load, and for a pipeline another worker of the
// fleet runs (distributed=auto lets it).
//
//agora:schedule cron="0 * * * *" after=load,billing-export
func BuildReport(context.Context) (*Job, error) { return &Job{}, nil }
