package distributed

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestInspectorPauseResumeTrigger(t *testing.T) {
	r := newReal(t)
	cs, in := r.inspected([]string{"w1"}, []string{"a"}, nil)
	ctx := context.Background()

	res, err := in.Pause(ctx, "a", "ops@host")
	if err != nil || res != (ControlResult{PipelineID: "a", Action: "pause", Changed: true, Message: res.Message}) ||
		!strings.Contains(res.Message, "paused a") || !strings.Contains(res.Message, ControlPollInterval.String()) {
		t.Fatalf("Pause = %+v, %v", res, err)
	}
	if p, err := in.Paused(ctx); err != nil || p["a"].By != "ops@host" || !p["a"].At.Equal(inspectAt) {
		t.Fatalf("Paused = %+v, %v", p, err)
	}
	if _, err := in.Trigger(ctx, "a"); !errors.Is(err, ErrPipelinePaused) || !strings.Contains(err.Error(), `"a" is paused; resume it first`) {
		t.Fatalf("Trigger while paused: %v, want ErrPipelinePaused", err)
	}
	if res, err := in.Resume(ctx, "a"); err != nil || !res.Changed || res.Action != "resume" {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	if res, err := in.Resume(ctx, "a"); err != nil || res.Changed || res.Message != "a was not paused" {
		t.Fatalf("second Resume = %+v, %v", res, err)
	}
	if res, err := in.Trigger(ctx, "a"); err != nil || !res.Changed || res.Action != "trigger" {
		t.Fatalf("Trigger = %+v, %v", res, err)
	}
	if pending, err := cs[0].PendingTriggers(ctx); err != nil || !pending["a"].Equal(inspectAt) {
		t.Fatalf("PendingTriggers after Trigger = %v, %v", pending, err)
	}

	for name, call := range map[string]func() error{
		"Pause":   func() error { _, err := in.Pause(ctx, "nope", ""); return err },
		"Resume":  func() error { _, err := in.Resume(ctx, "nope"); return err },
		"Trigger": func() error { _, err := in.Trigger(ctx, "nope"); return err },
	} {
		if err := call(); !errors.Is(err, ErrUnknownPipeline) || !strings.Contains(err.Error(), "known: a") {
			t.Errorf("%s of an unknown pipeline: %v, want ErrUnknownPipeline", name, err)
		}
	}
	if p, _ := in.Paused(ctx); len(p) != 0 {
		t.Errorf("an unknown pipeline was paused: %v", p)
	}
}
