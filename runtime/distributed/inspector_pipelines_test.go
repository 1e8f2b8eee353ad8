package distributed

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

func TestInspectorPipelinesSummarizesScheduleLeaseHistoryAndPause(t *testing.T) {
	r := newReal(t)
	cs, in := r.inspected([]string{"w1", "w2"}, []string{"hourly", "minutely", "stream"},
		map[string]string{"hourly": `cron="0 * * * *"`, "minutely": "every=1m0s", "stream": "continuous"})
	ctx := context.Background()
	slot := inspectAt.Truncate(time.Hour).Unix()
	finishRun(t, cs[0], "hourly", slot-3600, history.OutcomeSucceeded, "", inspectAt.Add(-time.Hour))
	finishRun(t, cs[1], "hourly", slot, history.OutcomeStale, "fencing: stale writer", inspectAt.Add(-20*time.Second))
	finishRun(t, cs[0], "minutely", inspectAt.Unix()-40, history.OutcomeFailed, "boom", inspectAt.Add(-40*time.Second))
	stream := mustAcquire(t, cs[1], "stream", runtime.RunNumberAuto)
	if err := cs[0].Pause(ctx, "minutely", "ops"); err != nil {
		t.Fatal(err)
	}
	if err := cs[0].Pause(ctx, "retired", "ops"); err != nil { // no live worker runs it
		t.Fatal(err)
	}

	o, err := in.Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Workers) != 2 || o.Workers[0].ID != "w1" {
		t.Fatalf("Overview workers = %+v", o.Workers)
	}
	ps := o.Pipelines
	if len(ps) != 4 || ps[0].PipelineID != "hourly" || ps[1].PipelineID != "minutely" || ps[2].PipelineID != "retired" || ps[3].PipelineID != "stream" {
		t.Fatalf("Overview pipelines = %+v", ps)
	}
	nextHour := inspectAt.Truncate(time.Hour).Add(time.Hour)
	h := ps[0]
	if h.Schedule != `cron="0 * * * *"` || len(h.Workers) != 2 || h.NextFire == nil || !h.NextFire.Equal(nextHour) ||
		h.NextRun == nil || !h.NextRun.Equal(nextHour) || h.LastOutcome != history.OutcomeStale || h.LastError != "fencing: stale writer" ||
		h.LastSuccess == nil || !h.LastSuccess.Equal(inspectAt.Add(-time.Hour)) || h.StaleRefusals != 1 ||
		h.LastCompleted == nil || h.LastCompleted.Unix() != slot-3600 || h.Paused || h.Lease.Held {
		t.Fatalf("hourly = %+v", h)
	}
	m := ps[1]
	if !m.Paused || m.PausedBy != "ops" || m.PausedAt == nil || !m.PausedAt.Equal(inspectAt) || m.NextFire != nil ||
		m.NextRun != nil || m.LastOutcome != history.OutcomeFailed || m.LastSuccess != nil {
		t.Fatalf("minutely = %+v (paused: no next run)", m)
	}
	if rt := ps[2]; !rt.Paused || len(rt.Workers) != 0 || rt.Workers == nil || rt.Schedule != "" || rt.NextRun != nil {
		t.Fatalf("retired = %+v", rt)
	}
	s := ps[3]
	if !s.Lease.Held || s.Lease.Holder != "w2" || !s.Lease.HolderAlive || s.Lease.FencingToken != stream.FencingToken || s.NextRun != nil || s.NextFire != nil {
		t.Fatalf("stream = %+v", s)
	}
	only, err := in.Pipelines(ctx)
	if err != nil || len(only) != 4 {
		t.Fatalf("Pipelines = %d rows, %v", len(only), err)
	}
}

// TestInspectorPipelinesShowTheFleetsFailures: a failing pipeline shows
// the fleet's count, backoff and last error, and its next run where the
// backoff puts it; one stopped after too many failures has no next run.
func TestInspectorPipelinesShowTheFleetsFailures(t *testing.T) {
	r := newReal(t)
	cs, in := r.inspected([]string{"w1"}, []string{"cronp", "everyp", "stopped"},
		map[string]string{"cronp": `cron="0 * * * *"`, "everyp": "every=1s", "stopped": "every=1s"})
	c := cs[0]
	c.ShareFailures(map[string]runtime.FailureRules{
		"cronp": {ErrorBackoff: time.Minute}, "everyp": {ErrorBackoff: time.Minute}, "stopped": {MaxConsecutiveErrors: 1}})
	ctx := context.Background()
	for _, id := range []string{"cronp", "everyp", "stopped"} {
		mustAcquire(t, c, id, liveSlot())
		if err := c.FinishRun(ctx, history.Record{PipelineID: id, Outcome: history.OutcomeFailed, Error: "boom " + id, End: inspectAt}); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := in.Pipelines(ctx)
	if err != nil || len(ps) != 3 {
		t.Fatalf("Pipelines = %+v, %v", ps, err)
	}
	for _, p := range ps[:2] { // cronp, everyp
		if p.ConsecutiveErrors != 1 || p.BackoffUntil == nil || p.FailedStop || p.LastError != "boom "+p.PipelineID ||
			p.BackoffUntil.Sub(inspectAt) <= 55*time.Second || p.BackoffUntil.Sub(inspectAt) > time.Minute ||
			p.NextRun == nil || !p.NextRun.Equal(*p.BackoffUntil) {
			t.Errorf("%s = %+v; want 1 error, backing off a minute, next run at its end", p.PipelineID, p)
		}
	}
	if s := ps[2]; s.ConsecutiveErrors != 1 || !s.FailedStop || s.BackoffUntil != nil || s.NextRun != nil || s.LastError != "boom stopped" {
		t.Errorf("stopped = %+v; want stopped with no next run", s)
	}
}

// TestInspectorPipelinesShowTheLastMissedDeadline: the slot the fleet
// reported as missing its deadline is on the pipeline's row in Overview,
// Summaries and its own page; a pipeline with none shows none; a deadline
// key of foreign data shows no slot and is named in Lease.Problem.
func TestInspectorPipelinesShowTheLastMissedDeadline(t *testing.T) {
	r := newReal(t)
	cs, in := r.inspected([]string{"w1"}, []string{"fine", "junk", "late", "wrongtype"},
		map[string]string{"fine": "every=1m0s", "junk": "every=1m0s", "late": "every=1m0s", "wrongtype": "every=1m0s"})
	ctx := context.Background()
	slot := inspectAt.Truncate(time.Hour).Unix()
	if !missed(t, cs[0], "late", slot) {
		t.Fatal("MissedDeadline(late) = false; want reported")
	}
	k := keysFor(cs[0].s)
	if err := r.client(0).Set(ctx, k.deadline("junk"), "12345678901234567", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.client(0).HSet(ctx, k.deadline("wrongtype"), "x", "1").Err(); err != nil {
		t.Fatal(err)
	}
	check := func(view string, ps []PipelineInfo) {
		t.Helper()
		if len(ps) != 4 {
			t.Fatalf("%s: %d rows; want 4", view, len(ps))
		}
		for _, p := range ps {
			switch p.PipelineID {
			case "late":
				if p.LastDeadlineMissed == nil || p.LastDeadlineMissed.Unix() != slot || p.LastDeadlineMissed.Location() != time.UTC || p.Lease.Problem != "" {
					t.Errorf("%s: late = %v (problem %q); want %v", view, p.LastDeadlineMissed, p.Lease.Problem, time.Unix(slot, 0).UTC())
				}
			case "fine":
				if p.LastDeadlineMissed != nil || p.Lease.Problem != "" {
					t.Errorf("%s: fine = %v (problem %q); want none", view, p.LastDeadlineMissed, p.Lease.Problem)
				}
			default: // foreign data: no slot, the key named
				if p.LastDeadlineMissed != nil || !strings.Contains(p.Lease.Problem, k.deadline(p.PipelineID)) {
					t.Errorf("%s: %s = %v (problem %q); want no slot and the key named", view, p.PipelineID, p.LastDeadlineMissed, p.Lease.Problem)
				}
			}
		}
	}
	o, err := in.Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	check("Overview", o.Pipelines)
	s, err := in.Summaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	check("Summaries", s.Pipelines)
	var page []PipelineInfo
	for _, id := range []string{"fine", "junk", "late", "wrongtype"} {
		info, _, _, err := in.Pipeline(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		page = append(page, info)
	}
	check("Pipeline", page)
	b, err := json.Marshal(o.Pipelines[0]) // fine
	if err != nil || strings.Contains(string(b), "deadline") {
		t.Errorf("JSON of a pipeline with no missed deadline = %s, %v; want no deadline field", b, err)
	}
}
