package coordinatortest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/coordinatortest"
)

// brokenEnv names, in a child process, the breakage its coordinator has.
const brokenEnv = "AGORA_COORDINATORTEST_BROKEN"

// staleTokens hands out one token for every grant.
type staleTokens struct{ *memCoord }

func (c staleTokens) TryAcquireLease(ctx context.Context, id string, run int64) (bool, error) {
	ok, err := c.memCoord.TryAcquireLease(ctx, id, run)
	if ok {
		c.f.mu.Lock()
		c.f.tokens[id] = 0
		c.f.mu.Unlock()
	}
	return ok, err
}

// forgetful completes like it releases: slots run again.
type forgetful struct{ *memCoord }

func (c forgetful) CompleteLease(ctx context.Context, id string) error {
	return c.ReleaseLease(ctx, id)
}

// noCompletion cannot complete a lease at all, as a coordinator that
// remembers no completed slots would say. Completion is no capability to
// go without: the suite fails it, Strict or not.
type noCompletion struct{ *memCoord }

func (noCompletion) CompleteLease(context.Context, string) error {
	return errors.ErrUnsupported
}

// lossy is a wrapper written without embedding: it forwards the methods
// it knows and none of the capabilities.
type lossy struct{ runtime.Coordinator }

func (lossy) Capabilities() runtime.Capabilities { return runtime.Capabilities{} }

// TestBrokenCoordinatorHelper runs the suite, in a child process, against
// the coordinator broken as brokenEnv says.
func TestBrokenCoordinatorHelper(t *testing.T) {
	kind := os.Getenv(brokenEnv)
	if kind == "" {
		t.Skip("run by TestSuiteCatchesBrokenCoordinators")
	}
	m := &memFleets{fleets: map[string]*memFleet{}}
	var opts []coordinatortest.Option
	if kind == "lossy" {
		opts = append(opts, coordinatortest.Strict())
	}
	coordinatortest.Run(t, func(t *testing.T) runtime.Coordinator {
		c := m.coordinator(t).(*memCoord)
		switch kind {
		case "tokens":
			return staleTokens{c}
		case "complete":
			return forgetful{c}
		case "nocomplete":
			return noCompletion{c}
		}
		return lossy{c}
	}, opts...)
}

// The suite fails a coordinator that breaks the contract, naming what it
// broke (one that cannot complete a lease included), and Strict fails a
// wrapper that lost the capabilities.
func TestSuiteCatchesBrokenCoordinators(t *testing.T) {
	for kind, want := range map[string]string{
		"tokens":     "is not above the last one granted",
		"complete":   "want false, ErrSlotCompleted",
		"nocomplete": "CompleteLease(\"p\"): unsupported operation",
		"lossy":      "Strict: it should have every capability",
	} {
		t.Run(kind, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestBrokenCoordinatorHelper$")
			cmd.Env = append(os.Environ(), brokenEnv+"="+kind)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a coordinator broken by %s:\n%s", kind, out)
			}
			if !strings.Contains(string(out), want) {
				t.Fatalf("the suite failed %s without saying %q:\n%s", kind, want, out)
			}
		})
	}
}
