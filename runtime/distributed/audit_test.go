package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/history"
)

func TestAuditRecordsPauseResumeTriggerNewestFirst(t *testing.T) {
	r := newReal(t)
	_, in := r.inspected([]string{"w1"}, []string{"a", "b"}, nil)
	ctx := context.Background()
	until := inspectAt.Add(2 * time.Hour)

	res, err := in.Pause(ctx, "a", "ops@host", WithReason("maintenance"), WithUntil(until), WithFrom("box/agora"))
	if err != nil || !strings.Contains(res.Message, "resumes by itself at "+until.Format(time.RFC3339)) {
		t.Fatalf("Pause = %+v, %v", res, err)
	}
	if p, err := in.Paused(ctx); err != nil || p["a"].Reason != "maintenance" || !p["a"].Until.Equal(until) || p["a"].By != "ops@host" {
		t.Fatalf("Paused = %+v, %v", p, err)
	}
	rows, err := in.Pipelines(ctx)
	if err != nil || len(rows) != 2 || !rows[0].Paused || rows[0].PausedReason != "maintenance" || rows[0].PausedUntil == nil || !rows[0].PausedUntil.Equal(until) {
		t.Fatalf("Pipelines = %+v, %v", rows, err)
	}
	if _, err := in.Resume(ctx, "a", WithActor("ann@desk")); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Resume(ctx, "a"); err != nil { // not paused: nothing to record
		t.Fatal(err)
	}
	if _, err := in.Trigger(ctx, "b", WithActor("fleet ui 10.0.0.7"), WithReason("late file")); err != nil {
		t.Fatal(err)
	}

	// The fake clock stands still: entries of the same time are ordered by
	// pipeline, then as appended (ZREVRANGE: the later member first is not
	// promised), so each pipeline is read on its own first.
	got, err := in.Audit(ctx, AuditQuery{PipelineIDs: []string{"a"}})
	if err != nil || len(got) != 2 {
		t.Fatalf("Audit(a) = %+v, %v", got, err)
	}
	var pause, resume AuditEntry
	for _, e := range got {
		switch e.Action {
		case AuditPause:
			pause = e
		case AuditResume:
			resume = e
		}
	}
	if pause.Actor != "ops@host" || pause.Reason != "maintenance" || !pause.Until.Equal(until) || pause.From != "box/agora" ||
		!pause.At.Equal(inspectAt) || pause.PipelineID != "a" {
		t.Fatalf("pause entry = %+v", pause)
	}
	if resume.Actor != "ann@desk" || resume.From == "" || !resume.Until.IsZero() {
		t.Fatalf("resume entry = %+v", resume)
	}
	all, err := in.Audit(ctx, AuditQuery{})
	if err != nil || len(all) != 3 {
		t.Fatalf("Audit() = %+v, %v", all, err)
	}
	if e := all[2]; e.PipelineID != "b" || e.Action != AuditTrigger || e.Actor != "fleet ui 10.0.0.7" || e.Reason != "late file" {
		t.Fatalf("trigger entry = %+v", e)
	}
	if one, err := in.Audit(ctx, AuditQuery{Limit: 1}); err != nil || len(one) != 1 {
		t.Fatalf("Audit(limit 1) = %+v, %v", one, err)
	}
	b, _ := json.Marshal(pause)
	for _, field := range []string{`"at":`, `"pipeline":"a"`, `"action":"pause"`, `"actor":"ops@host"`, `"from":"box/agora"`, `"reason":"maintenance"`, `"until":`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("entry JSON %s lacks %s", b, field)
		}
	}
	if b, _ := json.Marshal(resume); strings.Contains(string(b), "until") || strings.Contains(string(b), "reason") {
		t.Errorf("resume JSON %s has an empty until or reason", b)
	}
}

func TestAuditNewestFirstAcrossPipelines(t *testing.T) {
	r := newReal(t)
	clock := clocktest.NewFake(inspectAt)
	c, err := NewRedisWorkerCoordinator(Options{RedisURL: r.srv.URL(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"x", "y", "x"} {
		if err := c.AppendAudit(ctx, AuditEntry{At: inspectAt.Add(time.Duration(i) * time.Minute), PipelineID: id, Action: AuditTrigger, Actor: "me"}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.AuditLog(ctx, AuditQuery{})
	if err != nil || len(got) != 3 || got[0].PipelineID != "x" || got[1].PipelineID != "y" || got[2].PipelineID != "x" ||
		!got[0].At.Equal(inspectAt.Add(2*time.Minute)) {
		t.Fatalf("AuditLog = %+v, %v", got, err)
	}
}

func TestAuditIsBoundedByCountAndAge(t *testing.T) {
	r := newReal(t)
	clock := clocktest.NewFake(inspectAt)
	c, err := NewRedisWorkerCoordinator(Options{RedisURL: r.srv.URL(), Clock: clock,
		RunHistory: history.Policy{Limit: 3, MaxAge: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := c.AppendAudit(ctx, AuditEntry{At: inspectAt.Add(time.Duration(i) * time.Second), PipelineID: "p", Action: AuditTrigger}); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.client(0).ZCard(ctx, c.keys.audit("p")).Val(); n != 3 {
		t.Fatalf("%d entries kept, want the limit 3", n)
	}
	got, err := c.AuditLog(ctx, AuditQuery{PipelineIDs: []string{"p"}, Limit: 10})
	if err != nil || len(got) != 3 || !got[0].At.Equal(inspectAt.Add(4*time.Second)) || !got[2].At.Equal(inspectAt.Add(2*time.Second)) {
		t.Fatalf("AuditLog = %+v, %v", got, err)
	}
	if got[0].Actor == "" || got[0].From == "" {
		t.Errorf("defaults not filled: %+v", got[0])
	}

	// Two hours on, the old entries are past MaxAge: not read, and the
	// next append removes them.
	clock.Advance(2 * time.Hour)
	if got, err := c.AuditLog(ctx, AuditQuery{PipelineIDs: []string{"p"}}); err != nil || len(got) != 0 {
		t.Fatalf("AuditLog after MaxAge = %+v, %v", got, err)
	}
	if err := c.AppendAudit(ctx, AuditEntry{PipelineID: "p", Action: AuditPause}); err != nil {
		t.Fatal(err)
	}
	if n := r.client(0).ZCard(ctx, c.keys.audit("p")).Val(); n != 1 {
		t.Fatalf("%d entries after an append past MaxAge, want 1", n)
	}
}

func TestAuditSkipsForeignMembersAndKeys(t *testing.T) {
	r := newReal(t)
	_, in := r.inspected([]string{"w1"}, []string{"a"}, nil)
	c := in.c
	admin := r.client(0)
	if _, err := in.Pause(ctx, "a", "ops", WithReason("r")); err != nil {
		t.Fatal(err)
	}
	score := float64(inspectAt.UnixMilli())
	for _, m := range []string{"not json", `{"pipeline":"a"}`, `{"at":"2026-03-01T12:00:30Z","pipeline":"other","action":"pause"}`} {
		admin.ZAdd(ctx, c.keys.audit("a"), redis.Z{Score: score, Member: m})
	}
	admin.Set(ctx, c.keys.audit("z"), "a string", 0)
	got, err := in.Audit(ctx, AuditQuery{})
	if err != nil || len(got) != 1 || got[0].Action != AuditPause || got[0].Reason != "r" {
		t.Fatalf("Audit = %+v, %v", got, err)
	}
	if n := c.Status().(CoordinatorStatus).AuditSkipped; n != 3 {
		t.Errorf("AuditSkipped = %d, want 3", n)
	}
	if err := c.AppendAudit(ctx, AuditEntry{PipelineID: "z", Action: AuditTrigger}); !errors.Is(err, ErrForeignData) {
		t.Errorf("AppendAudit to a string key: %v, want ErrForeignData", err)
	}
}

func TestPauseUntilPassedCountsAsResumedAndIsDeletedOnce(t *testing.T) {
	r := newReal(t)
	cs, in := r.inspected([]string{"w1"}, []string{"p"}, nil)
	worker := cs[0]
	admin := r.client(0)

	// A pause in the past is refused by the Inspector: it would do nothing.
	if _, err := in.Pause(ctx, "p", "ops", WithUntil(inspectAt.Add(-time.Minute))); err == nil || !strings.Contains(err.Error(), "has passed") {
		t.Fatalf("Pause until the past: %v", err)
	}

	// A timed pause holds until its until, between polls too.
	clock := worker.clock.(*clocktest.Fake)
	until := inspectAt.Add(time.Minute)
	if _, err := in.Pause(ctx, "p", "ops", WithReason("maintenance"), WithUntil(until)); err != nil {
		t.Fatal(err)
	}
	if err := worker.pollControl(ctx); err != nil || !worker.Paused("p") {
		t.Fatalf("paused before until: %v, %v", worker.Paused("p"), err)
	}
	clock.Set(until)
	if worker.Paused("p") {
		t.Fatal("still paused at its until, before any poll")
	}

	// The first poll at or after until deletes it and records the resume.
	if err := worker.pollControl(ctx); err != nil || worker.Paused("p") {
		t.Fatalf("paused after until: %v, %v", worker.Paused("p"), err)
	}
	if admin.HExists(ctx, worker.keys.paused(), "p").Val() {
		t.Fatal("the expired pause flag was not deleted")
	}
	if err := worker.pollControl(ctx); err != nil {
		t.Fatal(err)
	}
	entries, err := worker.AuditLog(ctx, AuditQuery{PipelineIDs: []string{"p"}})
	if err != nil {
		t.Fatal(err)
	}
	var resumes []AuditEntry
	for _, e := range entries {
		if e.Action == AuditResume {
			resumes = append(resumes, e)
		}
	}
	if len(resumes) != 1 || resumes[0].Actor != "ops" || !resumes[0].Until.Equal(until) {
		t.Fatalf("resume entries = %+v, want one by ops", resumes)
	}

	// Every other reader counts an expired flag as resumed too, even one
	// not deleted yet (set by hand here).
	expired, _ := json.Marshal(PauseInfo{At: inspectAt, By: "ops", Until: inspectAt.Add(-time.Second)})
	admin.HSet(ctx, worker.keys.paused(), "p", expired)
	if p, err := in.Paused(ctx); err != nil || len(p) != 0 {
		t.Fatalf("Inspector.Paused with an expired flag = %+v, %v", p, err)
	}
	if _, err := in.Trigger(ctx, "p"); err != nil {
		t.Fatalf("Trigger after the pause ended: %v", err)
	}
}

func TestExpiredPauseIsDeletedOnlyIfUnchanged(t *testing.T) {
	r := newReal(t)
	cs, _ := r.inspected([]string{"w1"}, []string{"p"}, nil)
	c := cs[0]
	admin := r.client(0)
	newer := `{"at":"2026-03-01T12:00:30Z","by":"someone else"}`
	admin.HSet(ctx, c.keys.paused(), "p", newer)
	if c.deleteExpiredPause(ctx, "p", `{"at":"2026-03-01T11:00:00Z","until":"2026-03-01T11:30:00Z"}`) {
		t.Fatal("deleted a pause flag that changed since it was read")
	}
	if v := admin.HGet(ctx, c.keys.paused(), "p").Val(); v != newer {
		t.Fatalf("flag = %q, want the newer pause kept", v)
	}
	if !c.deleteExpiredPause(ctx, "p", newer) {
		t.Fatal("did not delete an unchanged flag")
	}
}

// TestControlRefusesAnOversizedReasonAndChangesNothing: a reason over
// MaxReasonBytes (or an actor over MaxActorBytes) is refused before
// anything is written: no pause, no trigger, no audit entry.
func TestControlRefusesAnOversizedReasonAndChangesNothing(t *testing.T) {
	r := newReal(t)
	_, in := r.inspected([]string{"w1"}, []string{"a"}, nil)
	ctx := context.Background()
	long := strings.Repeat("x", MaxReasonBytes+1)
	if _, err := in.Pause(ctx, "a", "", WithReason(long)); !errors.Is(err, ErrInvalidControl) || !strings.Contains(err.Error(), "the reason is 1025 bytes; at most 1024") {
		t.Fatalf("Pause with a %d-byte reason: %v", len(long), err)
	}
	if _, err := in.Trigger(ctx, "a", WithActor(strings.Repeat("y", MaxActorBytes+1))); !errors.Is(err, ErrInvalidControl) {
		t.Fatalf("Trigger with an oversized actor: %v", err)
	}
	if _, err := in.Resume(ctx, "a", WithReason(long)); !errors.Is(err, ErrInvalidControl) {
		t.Fatalf("Resume with an oversized reason: %v", err)
	}
	paused, err := in.Paused(ctx)
	if err != nil || len(paused) != 0 {
		t.Fatalf("paused after the refusals: %v, %v", paused, err)
	}
	entries, err := in.Audit(ctx, AuditQuery{})
	if err != nil || len(entries) != 0 {
		t.Fatalf("audit entries after the refusals: %+v, %v", entries, err)
	}
	if _, err := in.Pause(ctx, "a", "", WithReason(strings.Repeat("x", MaxReasonBytes))); err != nil {
		t.Fatalf("Pause with a reason of exactly %d bytes: %v", MaxReasonBytes, err)
	}
}
