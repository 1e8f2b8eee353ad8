// Package p writes values that do not parse.
package p

import "context"

// Job does nothing.
type Job struct{}

// Run returns nil.
func (*Job) Run(context.Context) error { return nil }

// BuildDuration has a bad duration.
//
//agora:schedule every=5x
func BuildDuration(context.Context) (*Job, error) { return &Job{}, nil }

// BuildZero has a zero interval and a negative backoff.
//
//agora:schedule every=0s backoff=-5s
func BuildZero(context.Context) (*Job, error) { return &Job{}, nil }

// BuildCronFields has too few fields.
//
//agora:schedule cron="* * *"
func BuildCronFields(context.Context) (*Job, error) { return &Job{}, nil }

// BuildCronRange has a minute out of range.
//
//agora:schedule cron="61 * * * *"
func BuildCronRange(context.Context) (*Job, error) { return &Job{}, nil }

// BuildCronNever names a day that does not exist.
//
//agora:schedule cron="0 0 30 2 *"
func BuildCronNever(context.Context) (*Job, error) { return &Job{}, nil }

// BuildMaxErrors stops after -1 errors.
//
//agora:schedule once max_errors=-1
func BuildMaxErrors(context.Context) (*Job, error) { return &Job{}, nil }

// BuildMaxErrorsWord writes a word.
//
//agora:schedule once max_errors=three
func BuildMaxErrorsWord(context.Context) (*Job, error) { return &Job{}, nil }

// BuildBadID has a space and a slash in its id.
//
//agora:schedule once id="orders hourly"
func BuildBadID(context.Context) (*Job, error) { return &Job{}, nil }

// BuildSlashID has a slash.
//
//agora:schedule once id=orders/hourly
func BuildSlashID(context.Context) (*Job, error) { return &Job{}, nil }

// BuildFlagValue gives a flag a value and a key none.
//
//agora:schedule continuous=true backoff
func BuildFlagValue(context.Context) (*Job, error) { return &Job{}, nil }

// BuildTwice gives backoff twice.
//
//agora:schedule once backoff=1s backoff=2s
func BuildTwice(context.Context) (*Job, error) { return &Job{}, nil }

// BuildCatchUpWord names no policy.
//
//agora:schedule cron="0 * * * *" catch_up=sometimes
func BuildCatchUpWord(context.Context) (*Job, error) { return &Job{}, nil }

// BuildNegativeGrace has a negative grace.
//
//agora:schedule cron="0 * * * *" grace=-1s
func BuildNegativeGrace(context.Context) (*Job, error) { return &Job{}, nil }

// BuildCatchUpEvery gives an every pipeline a catch-up policy and a grace.
//
//agora:schedule every=1h catch_up=all grace=10s
func BuildCatchUpEvery(context.Context) (*Job, error) { return &Job{}, nil }

// BuildBadZone names a zone that does not exist.
//
//agora:schedule cron="0 * * * *" timezone=Europe/Berlln
func BuildBadZone(context.Context) (*Job, error) { return &Job{}, nil }

// BuildZonedEvery gives an every pipeline a time zone.
//
//agora:schedule every=1h timezone=UTC
func BuildZonedEvery(context.Context) (*Job, error) { return &Job{}, nil }

// BuildTwoZones names the zone twice.
//
//agora:schedule cron="CRON_TZ=UTC 0 * * * *" timezone=UTC
func BuildTwoZones(context.Context) (*Job, error) { return &Job{}, nil }
