package distributed

import (
	"context"
	"errors"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

// One sentinel per meaning: a lease this worker does not hold is the
// runtime's ErrLeaseNotHeld, whichever package's name a caller matches.
func TestLeaseNotHeldIsTheRuntimeSentinel(t *testing.T) {
	if ErrLeaseNotHeld != runtime.ErrLeaseNotHeld {
		t.Fatal("distributed.ErrLeaseNotHeld is not runtime.ErrLeaseNotHeld")
	}
	u := newUnit(t)
	a := u.started(u.options(), "a")
	for name, call := range map[string]func() error{
		"ReleaseLease":  func() error { return a.ReleaseLease(ctx, "p") },
		"CompleteLease": func() error { return a.CompleteLease(ctx, "p") },
		"RenewLease":    func() error { return a.RenewLease(ctx, "p") },
	} {
		err := call()
		if !errors.Is(err, runtime.ErrLeaseNotHeld) || !errors.Is(err, ErrLeaseNotHeld) {
			t.Errorf("%s of a lease never acquired: %v; want an error matching runtime.ErrLeaseNotHeld", name, err)
		}
	}
}

// An unknown pipeline is the runtime's ErrUnknownPipeline, for the
// inspector as for RunNow.
func TestInspectorLeasesOfAnUnknownPipelineIsTheRuntimeSentinel(t *testing.T) {
	if ErrUnknownPipeline != runtime.ErrUnknownPipeline {
		t.Fatal("distributed.ErrUnknownPipeline is not runtime.ErrUnknownPipeline")
	}
	r := newReal(t)
	_, in := r.inspected([]string{"w1"}, []string{"a"}, nil)
	_, err := in.Leases(context.Background(), "nope")
	if !errors.Is(err, runtime.ErrUnknownPipeline) || !errors.Is(err, ErrUnknownPipeline) {
		t.Fatalf(`Leases("nope"): %v; want an error matching runtime.ErrUnknownPipeline`, err)
	}
}
