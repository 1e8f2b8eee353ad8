package distributed

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// runUnderLease mimics the pool: a run context that the lost-lease callback
// cancels.
func runUnderLease(c *RedisWorkerCoordinator) (context.Context, chan time.Time) {
	runCtx, cancel := context.WithCancel(context.Background())
	lostAt := make(chan time.Time, 1)
	c.SetLeaseLostCallback(func(string, runtime.Lease) {
		at := time.Now()
		cancel()
		lostAt <- at
	})
	return runCtx, lostAt
}

// waitLost returns when the lost-lease callback ran, failing the test with
// what if it does not within timeout.
func waitLost(t *testing.T, lostAt <-chan time.Time, timeout time.Duration, what string) time.Time {
	t.Helper()
	select {
	case at := <-lostAt:
		return at
	case <-time.After(timeout):
		t.Fatal(what)
		return time.Time{}
	}
}

func TestFaultRedisKilledMidLease(t *testing.T) {
	r := newReal(t)
	// TTL 1.5 s: renewal deadline 1 s, renewal every 0.5 s.
	c := r.started(r.options(1500*time.Millisecond), "a")
	runCtx, lostAt := runUnderLease(c)
	first := mustAcquire(t, c, "p", 1)
	// Wait for a renewal to go through, and note when it was sent: the
	// deadline counts from there.
	var lastSent time.Time
	waitUntil(t, 5*time.Second, "a renewal", func() bool {
		cur, _ := c.CurrentLease("p")
		lastSent = cur.ExpiresAt.Add(-1500 * time.Millisecond)
		return cur.ExpiresAt.After(first.ExpiresAt)
	})

	r.srv.Kill()
	// Never before the deadline (1 s after the last renewal that went
	// through; a later one only moves it on), and soon after it.
	at := waitLost(t, lostAt, 5*time.Second, "no lost callback after the kill")
	if after := at.Sub(lastSent); after < time.Second || after > 2200*time.Millisecond {
		t.Errorf("lease lost %s after the last renewal was sent; want just after the 1 s renewal deadline", after)
	}
	select {
	case <-runCtx.Done():
	default:
		t.Fatal("run context not cancelled")
	}
	if _, held := c.CurrentLease("p"); held {
		t.Fatal("lost lease still current")
	}
	if !strings.Contains(r.logs.String(), "renewal deadline passed") {
		t.Errorf("logs do not give the reason:\n%s", r.logs)
	}
}

func TestFaultRedisRestartedEmptyMidLeaseLosesAtOnce(t *testing.T) {
	r := newReal(t)
	c := r.started(r.options(3*time.Second), "a") // deadline 2 s, renewal every 1 s
	_, lostAt := runUnderLease(c)
	mustAcquire(t, c, "p", 1)
	restarted := time.Now()
	r.srv.Restart()
	at := waitLost(t, lostAt, 3*time.Second, "no lost callback")
	if after := at.Sub(restarted); after > 2500*time.Millisecond {
		t.Errorf("lost %s after the restart; the next renewal (≤ 1 s) should see the key gone", after)
	}
	if !strings.Contains(r.logs.String(), `reason="gone or held by another worker"`) {
		t.Errorf("lost for the wrong reason:\n%s", r.logs)
	}
}

func TestFaultRedisPausedFailsSafeAndNobodyHoldsTwice(t *testing.T) {
	r := newReal(t)
	a := r.started(r.options(1500*time.Millisecond), "a")
	b := r.started(r.options(1500*time.Millisecond), "b")
	_, lostAt := runUnderLease(a)
	old := mustAcquire(t, a, "p", 1)

	paused := time.Now()
	r.srv.Pause()
	asked := time.Now()
	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(1)); ok || err == nil {
		t.Fatalf("acquire against a paused server: %v, %v; want false and an error", ok, err)
	}
	// One request timeout (half the 1 s renewal deadline) bounds the whole
	// acquire, go-redis's own retries included: a stalled server must not
	// hold a run's start for a multiple of it.
	if took := time.Since(asked); took > 900*time.Millisecond {
		t.Errorf("acquire against a paused server took %s; want one 500 ms request timeout", took)
	}
	lost := waitLost(t, lostAt, 4*time.Second, "holder kept its lease through the pause")
	if after := lost.Sub(paused); after > 2*time.Second {
		t.Errorf("holder gave the lease up %s into the pause; want within the 1 s deadline", after)
	}
	r.srv.Resume()

	var newer runtime.Lease
	waitUntil(t, 5*time.Second, "b to take over after the TTL", func() bool {
		ok, _ := b.TryAcquireLease(ctx, "p", slotRun(1))
		if ok {
			newer, _ = b.CurrentLease("p")
		}
		return ok
	})
	if _, held := a.CurrentLease("p"); held {
		t.Fatal("a still holds the lease b acquired")
	}
	if newer.FencingToken <= old.FencingToken {
		t.Fatalf("takeover token %d not above %d", newer.FencingToken, old.FencingToken)
	}
}

// TestFaultPausedOwnerLosesItsLease stops a worker process (SIGSTOP) while it
// holds a lease: once the TTL passes another worker takes over with a larger
// token, the old token no longer validates, and the stopped worker, when it
// continues, finds out and reports the loss.
func TestFaultPausedOwnerLosesItsLease(t *testing.T) {
	r := newReal(t)
	const ttl = 1200 * time.Millisecond
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultHelperOwner$", "-test.v")
	cmd.Env = append(os.Environ(), helperURLEnv+"="+r.srv.URL(), helperTTLEnv+"="+ttl.String())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(prefix string, timeout time.Duration) string {
		t.Helper()
		deadline := time.After(timeout)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("helper exited before printing %s", prefix)
				}
				if strings.HasPrefix(line, prefix) {
					return strings.TrimSpace(strings.TrimPrefix(line, prefix))
				}
			case <-deadline:
				t.Fatalf("helper did not print %s within %s", prefix, timeout)
			}
		}
	}
	oldToken, err := strconv.ParseInt(expect("TOKEN ", 15*time.Second), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	acquiredNear := time.Now()
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}

	b := r.started(r.options(ttl), "b")
	var newer runtime.Lease
	waitUntil(t, 5*time.Second, "b to acquire the stopped owner's lease", func() bool {
		ok, err := b.TryAcquireLease(ctx, "paused", runtime.RunNumberAuto)
		if err != nil {
			t.Fatalf("TryAcquireLease: %v", err)
		}
		if ok {
			newer, _ = b.CurrentLease("paused")
		}
		return ok
	})
	if waited := time.Since(acquiredNear); waited < ttl/2 {
		t.Errorf("took over after %s; the owner's lease should have lasted about the TTL (%s)", waited, ttl)
	}
	if newer.FencingToken <= oldToken {
		t.Fatalf("new token %d not above the stopped owner's %d", newer.FencingToken, oldToken)
	}
	if ok, err := b.ValidateLease(ctx, "paused", oldToken); ok || err != nil {
		t.Fatalf("ValidateLease(old token) = %v, %v; want false", ok, err)
	}
	if ok, _ := b.ValidateLease(ctx, "paused", newer.FencingToken); !ok {
		t.Fatal("new token does not validate")
	}

	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if got := expect("LOST ", 5*time.Second); got != strconv.FormatInt(oldToken, 10) {
		t.Fatalf("helper lost token %s, want %d", got, oldToken)
	}
	if ok, _ := b.ValidateLease(ctx, "paused", newer.FencingToken); !ok {
		t.Fatal("the resumed owner disturbed the new holder")
	}
}

const (
	helperURLEnv = "DISTRIBUTED_TEST_HELPER_URL"
	helperTTLEnv = "DISTRIBUTED_TEST_HELPER_TTL"
)

// TestFaultHelperOwner is not a test: TestFaultPausedOwnerLosesItsLease runs
// it in a child process as the lease owner it stops.
func TestFaultHelperOwner(t *testing.T) {
	url := os.Getenv(helperURLEnv)
	if url == "" {
		t.Skip("helper process for TestFaultPausedOwnerLosesItsLease")
	}
	ttl, err := time.ParseDuration(os.Getenv(helperTTLEnv))
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewRedisWorkerCoordinator(Options{RedisURL: url, LeaseTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lost := make(chan runtime.Lease, 1)
	c.SetLeaseLostCallback(func(_ string, l runtime.Lease) { lost <- l })
	if err := c.Start(ctx, "stopped-owner", []string{"paused"}); err != nil {
		t.Fatal(err)
	}
	lease := mustAcquire(t, c, "paused", runtime.RunNumberAuto)
	fmt.Printf("TOKEN %d\n", lease.FencingToken)
	select {
	case l := <-lost:
		fmt.Printf("LOST %d\n", l.FencingToken)
	case <-time.After(30 * time.Second):
		t.Fatal("never lost")
	}
}
