package distributed

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestRequestOpsAreAgorasOwn drives a coordinator on a real redis-server
// and a Redlock quorum through every kind of operation and checks that
// each request was timed under one of agora's operation names, never a
// Redis command or "other" (a request sent from an untagged context), and
// that the bucket bounds print as short decimals.
func TestRequestOpsAreAgorasOwn(t *testing.T) {
	rig := newQuorumRig(t, 3)
	c := rig.started(rig.options(5*time.Second), "w")
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	ctx := context.Background()
	mustAcquire(t, c, "p", 1)
	if err := c.RenewLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	lease, _ := c.CurrentLease("p")
	if ok, err := c.ValidateLease(ctx, "p", lease.FencingToken); err != nil || !ok {
		t.Fatalf("ValidateLease = %v, %v", ok, err)
	}
	if err := c.CompleteLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, c, "q", 1)
	if err := c.ReleaseLease(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	if err := c.Pause(ctx, "p", "ops"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resume(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if err := c.Trigger(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListWorkers(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LeaseStates(ctx, []string{"p"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.LeaseHolder(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.LastCompleted(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if err := c.Healthy(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	fams := gathered(t, reg)
	allowed := map[string]bool{}
	for op := opConnect; op < numOps; op++ {
		allowed[op.String()], allowed[quorumOpNames[op]] = true, true
	}
	var seen []string
	for _, m := range fams["agora_redis_request_duration_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() != "op" {
				continue
			}
			seen = append(seen, l.GetValue())
			if !allowed[l.GetValue()] {
				t.Errorf("op=%q: not one of agora's operations", l.GetValue())
			}
		}
		for _, b := range m.GetHistogram().GetBucket() {
			if s := strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64); len(s) > 8 {
				t.Errorf("bucket bound %s: want a short decimal", s)
			}
		}
	}
	for _, want := range []string{"connect", "acquire", "complete", "release", "heartbeat", "control", "quorum_validate",
		"inspect", "health", "stop", "quorum_acquire", "quorum_renew", "quorum_release"} {
		if !slices.Contains(seen, want) {
			t.Errorf("no request timed as %s; seen %s", want, strings.Join(seen, ", "))
		}
	}
}
