// Package coordinatortest is the contract every runtime.Coordinator keeps,
// as a test suite: run it against a coordinator of your own, or a wrapper
// of one, and it checks what the pool relies on.
//
//	func TestContract(t *testing.T) {
//		coordinatortest.Run(t, func(t *testing.T) runtime.Coordinator {
//			return newMyCoordinator(t) // closed by t.Cleanup
//		})
//	}
//
// newCoordinator is called once per worker of a subtest, each time with
// the subtest's t, and returns a coordinator not started yet; the suite
// starts and stops it. The coordinators one subtest makes form one fleet:
// they share their leases (the same Redis, under a key prefix of that
// subtest's own, for example), while two subtests share nothing. A
// coordinator whose instances share nothing (the local one) says so with
// Alone, and the cases that need two workers are left out.
//
// What is checked: leases are exclusive per pipeline, across the fleet
// and on one worker; fencing tokens strictly increase per pipeline (or
// are all 0, with Unfenced); a released slot can be asked for again, a
// completed one (CompleteLease) is refused with runtime.ErrSlotCompleted,
// and so are the slots before it and a completed Once run (completion is
// no capability: a coordinator that cannot complete fails, Strict or
// not); RunNumberAuto numbers runs increasingly and blocks no slot; a
// counted run (a positive number of the caller's, such as 42) carries its
// number, is no slot, and neither blocks nor is blocked by a completed
// slot or counted run; renewal keeps the lease and fails without one; a
// lost lease (WithLoseLease) is reported once and no longer validates;
// Stop gives every lease back. Then each capability the coordinator has
// (runtime.Capabilities): in-memory leases (LocalLeaser) agree with the
// methods they stand for, batches decide as single requests would, a
// deferred request still gets a free lease, lease-ahead decides nothing
// or grants only its slot, health and status reports, lease holders, the
// last completed slot, and the run history.
//
// The suite asks for slots ten minutes behind the wall clock and never
// waits for a lease to expire, so it runs in well under a second per
// coordinator on loopback.
package coordinatortest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// Option adjusts Run to the coordinator under test.
type Option func(*config)

type config struct {
	alone    bool
	unfenced bool
	strict   bool
	lose     func(t *testing.T, c runtime.Coordinator, pipelineID string)
}

// Alone says the coordinators newCoordinator makes share no state (each
// decides for its own process only, like runtime.LocalCoordinator): the
// cases that need two workers of one fleet are not run.
func Alone() Option { return func(c *config) { c.alone = true } }

// Strict fails, instead of skipping, every case whose capability the
// coordinator lacks: for a coordinator that has them all (the Redis one),
// so that a wrapper of it that lost one is caught. LocalLeaser, which
// only a coordinator whose leases live in memory has, is not asked for.
func Strict() Option { return func(c *config) { c.strict = true } }

// Unfenced says the coordinator's leases carry fencing token 0, as the
// local coordinator's do. Without it every grant must carry a token
// greater than every earlier one of its pipeline.
func Unfenced() Option { return func(c *config) { c.unfenced = true } }

// WithLoseLease gives the suite a way to make c lose the lease it holds
// for pipelineID, as an expiry or a takeover would (delete it from the
// backend, say). The suite then checks that the loss is reported once,
// through the lost-lease callback or RenewLease, and that the lease no
// longer validates. Without it the lost-lease case is not run.
func WithLoseLease(lose func(t *testing.T, c runtime.Coordinator, pipelineID string)) Option {
	return func(c *config) { c.lose = lose }
}

// callTimeout bounds every call the suite makes.
const callTimeout = 10 * time.Second

// Run runs the contract against the coordinators newCoordinator makes,
// one subtest per rule.
func Run(t *testing.T, newCoordinator func(t *testing.T) runtime.Coordinator, opts ...Option) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	s := suite{cfg: cfg, newCoordinator: newCoordinator}
	for _, c := range s.cases() {
		t.Run(c.name, func(t *testing.T) {
			if c.fleet && cfg.alone {
				t.Skip("coordinators made for the suite share no state (Alone)")
			}
			if c.needsLose && cfg.lose == nil {
				t.Skip("no way to lose a lease was given (WithLoseLease)")
			}
			c.run(t, s.fleet(t))
		})
	}
}

// suite is Run's configuration.
type suite struct {
	cfg            config
	newCoordinator func(t *testing.T) runtime.Coordinator
}

// testCase is one rule of the contract.
type testCase struct {
	name      string
	fleet     bool // needs two workers sharing state
	needsLose bool // needs WithLoseLease
	run       func(t *testing.T, f *fleet)
}

// fleet makes the workers of one subtest.
type fleet struct {
	t    *testing.T
	s    suite
	n    int
	base int64 // the subtest's first slot, Unix seconds
	// tokens is the last fencing token granted per pipeline, by any worker.
	tokens map[string]int64
}

func (s suite) fleet(t *testing.T) *fleet {
	// Ten minutes back: a coordinator may refuse a slot that has not
	// begun by its clock (the Redis one does), and a subtest's state is
	// new, so no state epoch is later than these slots.
	return &fleet{t: t, s: s, base: time.Now().Unix() - 600, tokens: map[string]int64{}}
}

// slot returns the run number of the subtest's ith slot.
func (f *fleet) slot(i int) int64 { return runtime.SlotRunUnix(f.base + int64(i)) }

// worker makes a coordinator, starts it as the next worker with
// pipelineIDs, and stops it when the subtest ends.
func (f *fleet) worker(pipelineIDs ...string) *worker {
	f.t.Helper()
	f.n++
	c := f.s.newCoordinator(f.t)
	if c == nil {
		f.t.Fatal("newCoordinator returned nil")
	}
	w := &worker{t: f.t, f: f, c: c, id: "worker-" + strconv.Itoa(f.n), caps: c.Capabilities()}
	w.lost = make(chan runtime.Lease, 16)
	c.SetLeaseLostCallback(func(pipelineID string, lease runtime.Lease) {
		if pipelineID != lease.PipelineID {
			f.t.Errorf("lost-lease callback for %q with a lease of %q", pipelineID, lease.PipelineID)
		}
		w.lost <- lease
	})
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := c.Start(ctx, w.id, pipelineIDs); err != nil {
		f.t.Fatalf("%s: Start: %v", w.id, err)
	}
	f.t.Cleanup(func() {
		if w.stopped {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		if err := c.Stop(ctx); err != nil {
			f.t.Errorf("%s: Stop: %v", w.id, err)
		}
	})
	return w
}
