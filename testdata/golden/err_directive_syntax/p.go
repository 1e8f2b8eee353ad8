// Package p writes directives that do not split.
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildOpen leaves a string open.
//
//agora:schedule cron="0 * * * *
func BuildOpen(context.Context) (*Job, error) { return &Job{}, nil }

// BuildGlued glues a key to a quoted value.
//
//agora:schedule cron="0 * * * *"id=x
func BuildGlued(context.Context) (*Job, error) { return &Job{}, nil }

// BuildNoKey has a value without a key.
//
//agora:schedule =5m once
func BuildNoKey(context.Context) (*Job, error) { return &Job{}, nil }
