package distributed

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

func TestStatusReportsLeasesAndCounters(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	mustAcquire(t, a, "orders", 100)
	mustAcquire(t, a, "events", runtime.RunNumberAuto)
	_, _ = b.TryAcquireLease(ctx, "orders", slotRun(100))
	if err := a.CompleteLease(ctx, "events"); err != nil {
		t.Fatal(err)
	}

	st := a.Status().(CoordinatorStatus)
	if st.Mode != "redis" || st.WorkerID != "a" || !st.Running || !st.Reachable || st.Acquired != 2 || st.Completed != 1 {
		t.Fatalf("status = %+v", st)
	}
	if len(st.Leases) != 1 || st.Leases[0].PipelineID != "orders" || !st.Leases[0].Fenced || st.Leases[0].RunNumber != 100 {
		t.Fatalf("leases = %+v", st.Leases)
	}
	if got := b.Status().(CoordinatorStatus).Contended; got != 1 {
		t.Errorf("b contended = %d", got)
	}
	raw, err := json.Marshal(a.Status())
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"mode":"redis"`, `"leases":[{"pipeline_id":"orders"`, `"fallback_leases":0`, `"lease_ttl":"30s"`} {
		if !strings.Contains(string(raw), field) {
			t.Errorf("JSON %s lacks %s", raw, field)
		}
	}
}

func TestPasswordsNeverReachErrorsLogsOrStatus(t *testing.T) {
	const right, wrong = "c0rrect-h0rse", "wr0ng-batt3ry"
	u := newUnit(t)
	u.mr.RequireAuth(right)

	opts := u.options()
	opts.RedisURL = "redis://:" + wrong + "@" + u.mr.Addr() + "/0"
	bad := u.coordinator(opts)
	// A wrong password is a configuration error: Start refuses it.
	err := bad.Start(ctx, "bad", []string{"p"})
	if !errors.Is(err, ErrRedisRefused) {
		t.Fatalf("Start with a wrong password = %v, want ErrRedisRefused", err)
	}
	healthErr := bad.Healthy(ctx)
	raw, _ := json.Marshal(bad.Status())
	_, listErr := bad.ListWorkers(ctx)
	for what, text := range map[string]string{
		"start error": err.Error(), "health error": healthErr.Error(), "status": string(raw),
		"list error": listErr.Error(), "logs": u.logs.String(),
	} {
		if strings.Contains(text, wrong) || strings.Contains(text, right) {
			t.Errorf("%s shows a password: %s", what, text)
		}
	}
	if !strings.Contains(string(raw), `redis://:xxxxx@`) {
		t.Errorf("status does not show the redacted URL: %s", raw)
	}

	opts.RedisURL = "redis://:" + right + "@" + u.mr.Addr() + "/0"
	good := u.started(opts, "good")
	mustAcquire(t, good, "p", 1)
	if strings.Contains(u.logs.String(), right) {
		t.Error("logs show the password")
	}
}

func TestHealthyFailsFastOnAStalledServer(t *testing.T) {
	u := newUnit(t)
	opts := u.options()
	opts.LeaseTTL = 600 * time.Millisecond // op timeout = deadline/2 = 200 ms
	a := u.coordinator(opts)
	u.mr.Close()
	start := time.Now()
	if err := a.Healthy(ctx); err == nil {
		t.Fatal("healthy without a server")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Healthy took %s", took)
	}
}
