// Package p runs on one worker only, so every upstream must be here.
//
//agora:worker distributed=off
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildExtract reads.
//
//agora:schedule cron="0 * * * *"
func BuildExtract(context.Context) (*Job, error) { return &Job{}, nil }

// BuildLoad misspells its upstream.
//
//agora:schedule cron="0 * * * *" after=extrac
func BuildLoad(context.Context) (*Job, error) { return &Job{}, nil }
