// Package p declares dependencies that cannot work.
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildHourly runs on the hour.
//
//agora:schedule cron="0 * * * *"
func BuildHourly(context.Context) (*Job, error) { return &Job{}, nil }

// BuildDaily waits for a pipeline of another schedule.
//
//agora:schedule cron="0 3 * * *" after=hourly
func BuildDaily(context.Context) (*Job, error) { return &Job{}, nil }

// BuildConsumer is continuous: it has no slots to wait for.
//
//agora:schedule continuous after=hourly
func BuildConsumer(context.Context) (*Job, error) { return &Job{}, nil }

// BuildOnce runs once: no slots either.
//
//agora:schedule once after=hourly
func BuildOnce(context.Context) (*Job, error) { return &Job{}, nil }

// BuildSelf waits for itself, twice for hourly, and for nobody.
//
//agora:schedule cron="0 * * * *" after="self,hourly,hourly,,bad id"
func BuildSelf(context.Context) (*Job, error) { return &Job{}, nil }

// BuildTimeout has a timeout and nothing to wait for.
//
//agora:schedule cron="0 * * * *" after_timeout=10m
func BuildTimeout(context.Context) (*Job, error) { return &Job{}, nil }

// BuildZero has a zero timeout.
//
//agora:schedule cron="0 * * * *" after=hourly after_timeout=0s
func BuildZero(context.Context) (*Job, error) { return &Job{}, nil }

// BuildFast runs more often than once a second.
//
//agora:schedule every=500ms after=hourly
func BuildFast(context.Context) (*Job, error) { return &Job{}, nil }

// BuildRollup runs 15 minutes after its last run ended: its slots drift.
//
//agora:schedule every=15m after=hourly
func BuildRollup(context.Context) (*Job, error) { return &Job{}, nil }

// BuildPing and BuildPong wait for each other.
//
//agora:schedule cron="0 * * * *" after=pong
func BuildPing(context.Context) (*Job, error) { return &Job{}, nil }

// BuildPong waits for ping.
//
//agora:schedule cron="0 * * * *" after=ping
func BuildPong(context.Context) (*Job, error) { return &Job{}, nil }
