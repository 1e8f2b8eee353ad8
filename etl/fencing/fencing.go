// Package fencing holds what agora's database sinks share to refuse stale
// writers: the sentinel errors, the token a run writes with, and the rule
// that compares it with the token a resource last accepted.
//
// A resource (by default a sink's table) remembers, in a table
// agora_fencing(resource text primary key, token bigint not null) of the
// same database, the highest fencing token that wrote to it. Every fenced
// write locks that row in the transaction that writes the data, refuses the
// transaction when the run's token is lower than the stored one, and
// otherwise stores the run's token and commits it together with the data.
// A token equal to the stored one is the same run writing its next batch
// and is accepted.
package fencing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/agora-etl/agora/runtime"
)

// Table is the name of the table that holds each resource's highest token.
const Table = "agora_fencing"

// ErrStaleWriter is wrapped by the error of a write refused because a
// newer fencing token has already written to the resource: another worker
// has taken the pipeline over, and this run must stop writing.
var ErrStaleWriter = errors.New("fencing: stale writer: a newer fencing token has already written to the resource")

// ErrUnfenced is wrapped by the error of a write refused because the run
// holds no fenced lease (fencing token 0, as under FallbackToLocal or
// outside a distributed pool) and unfenced writes were not allowed.
var ErrUnfenced = errors.New("fencing: the run holds no fenced lease (fencing token 0)")

// StaleWriterError is the error of a refused stale write. It wraps
// ErrStaleWriter.
type StaleWriterError struct {
	// Resource is the fenced resource, such as a table name.
	Resource string
	// Token is the refused run's fencing token.
	Token int64
	// Stored is the higher token the resource had already accepted.
	Stored int64
}

// Error names the resource and both tokens.
func (e *StaleWriterError) Error() string {
	return fmt.Sprintf("%v: resource %q: run token %d < stored token %d", ErrStaleWriter, e.Resource, e.Token, e.Stored)
}

// Unwrap returns ErrStaleWriter.
func (e *StaleWriterError) Unwrap() error { return ErrStaleWriter }

// refusals counts stale writes refused by this process.
var refusals atomic.Int64

// Refusals returns how many writes this process has refused as stale, over
// every sink and FencedTx call.
func Refusals() int64 { return refusals.Load() }

// Check compares a run's token with the one the resource stored. It
// returns nil when token is at least stored, and otherwise a
// *StaleWriterError, which it counts and logs at WARN with both tokens.
func Check(ctx context.Context, logger *slog.Logger, resource string, token, stored int64) error {
	if token >= stored {
		return nil
	}
	refusals.Add(1)
	if logger == nil {
		logger = slog.Default()
	}
	logger.LogAttrs(ctx, slog.LevelWarn, "stale writer refused: a newer fencing token has already written",
		slog.String("resource", resource), slog.Int64("fencing_token", token), slog.Int64("stored_token", stored))
	return &StaleWriterError{Resource: resource, Token: token, Stored: stored}
}

// Token returns the fencing token of the run ctx belongs to. A run without
// a fenced lease gets ErrUnfenced, unless allowUnfenced, in which case the
// token is 0, unfenced is true, and the caller writes without fencing and
// says so with WarnUnfenced.
func Token(ctx context.Context, resource string, allowUnfenced bool) (token int64, unfenced bool, err error) {
	lease, _ := runtime.LeaseFromContext(ctx)
	if lease.Fenced() {
		return lease.FencingToken, false, nil
	}
	if !allowUnfenced {
		// Without a coordinator a run holds no fenced lease: naming the
		// variable that configures one says how to get fencing back.
		return 0, false, fmt.Errorf("resource %q: %w; set AGORA_DISTRIBUTED_REDIS_URL so runs hold fenced leases, or allow_unfenced = true to write without fencing", resource, ErrUnfenced)
	}
	return 0, true, nil
}

// WarnUnfenced logs at WARN that a write to resource goes ahead without
// fencing, so an unfenced write is never silent. Sinks call it once per
// run.
func WarnUnfenced(ctx context.Context, logger *slog.Logger, resource string) {
	if logger == nil {
		logger = slog.Default()
	}
	lease, _ := runtime.LeaseFromContext(ctx)
	logger.LogAttrs(ctx, slog.LevelWarn, "unfenced write: the run holds no fenced lease and allow_unfenced is set, so a stale writer would not be refused",
		slog.String("resource", resource), slog.String("pipeline_id", lease.PipelineID))
}
