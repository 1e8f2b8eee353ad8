// Command e2e is run end to end by the golden suite against a Redis: every
// run prints its lease on stdout.
//
//agora:worker main graceful_shutdown=5s
package main

import (
	"context"
	"fmt"

	"github.com/agora-etl/agora/runtime"
)

// Ticker prints its lease.
type Ticker struct{ name string }

// Run prints "ran <pipeline> <run number> <fencing token>".
func (t *Ticker) Run(ctx context.Context) error {
	lease, _ := runtime.LeaseFromContext(ctx)
	fmt.Printf("ran %s %d %d\n", t.name, lease.RunNumber, lease.FencingToken)
	return nil
}

// BuildTick runs every second.
//
//agora:schedule id=tick every=1s
func BuildTick(context.Context) (*Ticker, error) { return &Ticker{name: PipelineTick}, nil }

// BuildSetup runs once.
//
//agora:schedule id=setup once
func BuildSetup(context.Context) (*Ticker, error) { return &Ticker{name: PipelineSetup}, nil }
