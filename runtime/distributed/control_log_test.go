package distributed

import (
	"context"
	"strings"
	"testing"
)

// Rule: a worker logs one INFO line when it sees one of its pipelines
// paused fleet-wide and one when it sees it resumed: once per change, not
// at every poll, and not for pipelines it does not run.
func TestControlLogsEachPauseAndResumeOnce(t *testing.T) {
	u := newUnit(t)
	c := u.started(u.options(), "worker-a")
	admin := u.started(u.options(), "admin")
	bg := context.Background()
	if err := admin.Pause(bg, "p", "ops@host\nsecond line"); err != nil {
		t.Fatal(err)
	}
	if err := admin.Pause(bg, "other", "ops"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := c.pollControl(bg); err != nil {
			t.Fatal(err)
		}
	}
	if n := u.logs.count(`msg="distributed: pipeline paused fleet-wide`); n != 1 {
		t.Fatalf("%d pause lines after three polls, want 1 (p, not other):\n%s", n, u.logs)
	}
	if !strings.Contains(u.logs.String(), `paused_by="ops@host\nsecond line"`) {
		t.Errorf("the pause line does not quote who paused:\n%s", u.logs)
	}
	if _, err := admin.Resume(bg, "p"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := c.pollControl(bg); err != nil {
			t.Fatal(err)
		}
	}
	if n := u.logs.count(`msg="distributed: pipeline resumed fleet-wide`); n != 1 {
		t.Fatalf("%d resume lines after three polls, want 1:\n%s", n, u.logs)
	}
	if !strings.Contains(u.logs.String(), "level=INFO msg=\"distributed: pipeline resumed fleet-wide") {
		t.Errorf("the resume line is not INFO:\n%s", u.logs)
	}
}
