// Package p writes deadlines that are not usable.
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildZero has a zero deadline.
//
//agora:schedule every=1h deadline=0s
func BuildZero(context.Context) (*Job, error) { return &Job{}, nil }

// BuildNegative has a negative deadline.
//
//agora:schedule cron="0 * * * *" deadline=-15m
func BuildNegative(context.Context) (*Job, error) { return &Job{}, nil }

// BuildWord has no duration.
//
//agora:schedule every=1h deadline=soon
func BuildWord(context.Context) (*Job, error) { return &Job{}, nil }

// BuildConsumer is continuous: it has no fire times to count from.
//
//agora:schedule continuous deadline=15m
func BuildConsumer(context.Context) (*Job, error) { return &Job{}, nil }

// BuildOnce runs once: it has no fire times to count from either.
//
//agora:schedule once deadline=15m
func BuildOnce(context.Context) (*Job, error) { return &Job{}, nil }

// BuildTypo misspells the key.
//
//agora:schedule every=1h dedline=15m
func BuildTypo(context.Context) (*Job, error) { return &Job{}, nil }

// BuildFast runs more often than once a second: its runs have no slot.
//
//agora:schedule every=500ms deadline=1s
func BuildFast(context.Context) (*Job, error) { return &Job{}, nil }
