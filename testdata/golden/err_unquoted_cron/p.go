// Package p writes cron expressions without quotes.
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildHourly forgets the quotes.
//
//agora:schedule cron=0 * * * * backoff=30s
func BuildHourly(context.Context) (*Job, error) { return &Job{}, nil }

// BuildWeekdays forgets them around names and ranges too.
//
//agora:schedule id=weekdays cron=30 9 * * MON-FRI max_errors=3
func BuildWeekdays(context.Context) (*Job, error) { return &Job{}, nil }

// BuildOneField writes a one-field expression, quoted.
//
//agora:schedule cron="0"
func BuildOneField(context.Context) (*Job, error) { return &Job{}, nil }

// BuildDescriptor needs no quotes: @hourly has no spaces.
//
//agora:schedule id=descriptor cron=@hourly typo=1
func BuildDescriptor(context.Context) (*Job, error) { return &Job{}, nil }
