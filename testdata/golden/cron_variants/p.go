// Package crons uses every form of cron expression.
package crons

import (
	"context"

	"github.com/agora-etl/agora/runtime"
)

func nop(context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
}

// BuildSeconds runs every ten seconds.
//
//agora:schedule cron="*/10 * * * * *"
func BuildSeconds(ctx context.Context) (runtime.Pipeline, error) { return nop(ctx) }

// BuildHourly uses a descriptor.
//
//agora:schedule cron="@hourly"
func BuildHourly(ctx context.Context) (runtime.Pipeline, error) { return nop(ctx) }

// BuildZoned runs at 02:30 in Paris.
//
//agora:schedule cron="CRON_TZ=Europe/Paris 30 2 * * *"
func BuildZoned(ctx context.Context) (runtime.Pipeline, error) { return nop(ctx) }

// BuildEvery uses @every.
//
//agora:schedule cron="@every 10m"
func BuildEvery(ctx context.Context) (runtime.Pipeline, error) { return nop(ctx) }

// BuildRaw writes the expression as a raw string.
//
//agora:schedule cron=`0 9 * * MON-FRI`
func BuildRaw(ctx context.Context) (runtime.Pipeline, error) { return nop(ctx) }

// BuildBerlin reads its times in Europe/Berlin, like a CRON_TZ= prefix.
//
//agora:schedule cron="30 2 * * *" timezone=Europe/Berlin
func BuildBerlin(ctx context.Context) (runtime.Pipeline, error) { return nop(ctx) }
