package distributed

import (
	"fmt"
	"testing"
	"time"
)

// TestPreferenceViewNamesOnePreferredWorkerPerPipeline: whatever order the
// workers are listed in, exactly one of those that run a pipeline is its
// preferred worker, the choice spreads over the workers, and a pipeline
// only one worker runs is not deferred by anyone.
func TestPreferenceViewNamesOnePreferredWorkerPerPipeline(t *testing.T) {
	workers := []string{"a", "b", "c"}
	view, reversed := preferenceView{}, preferenceView{}
	for i := range 300 {
		p := fmt.Sprintf("p%d", i)
		view[p] = workers
		reversed[p] = []string{"c", "b", "a"}
	}
	view["alone"] = []string{"b"}
	share := map[string]int{}
	for i := range 300 {
		p := fmt.Sprintf("p%d", i)
		preferred := ""
		for _, w := range workers {
			yes, known := view.prefers(w, p)
			if !known {
				t.Fatalf("%s: the view does not know its workers", p)
			}
			if again, _ := reversed.prefers(w, p); again != yes {
				t.Fatalf("%s: %s preferred %v in one order and %v in the other", p, w, yes, again)
			}
			if yes {
				if preferred != "" {
					t.Fatalf("%s: both %s and %s preferred", p, preferred, w)
				}
				preferred = w
			}
		}
		if preferred == "" {
			t.Fatalf("%s: no preferred worker", p)
		}
		share[preferred]++
	}
	for _, w := range workers {
		if share[w] < 60 {
			t.Errorf("worker %s preferred for %d of 300 pipelines; want about a third: %v", w, share[w], share)
		}
	}
	for _, w := range []string{"a", "b", "c"} {
		if yes, known := view.prefers(w, "alone"); !yes || known {
			t.Errorf("a pipeline one worker runs: prefers(%s) = %v, %v; want true, false (nobody defers)", w, yes, known)
		}
	}
}

// TestStoppedWorkerLeavesThePreferenceIndex: a worker that stops takes its
// entry out of the index, so the others ask at once for its pipelines; one
// that only vanishes drops out when its entry expires.
func TestStoppedWorkerLeavesThePreferenceIndex(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	a.refreshPreference(ctx)
	members, err := u.mr.ZMembers("agora:distributed:preference")
	if err != nil || len(members) != 2 {
		t.Fatalf("index members %v (%v), want both workers", members, err)
	}
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	a.refreshPreference(ctx)
	members, _ = u.mr.ZMembers("agora:distributed:preference")
	if len(members) != 1 || workerOf(members[0]) != "a" {
		t.Fatalf("index members after b stopped: %v, want a only", members)
	}
	if a.notPreferred("p") {
		t.Error("a still defers p to a stopped worker")
	}
	// An entry not refreshed for the record TTL (a worker that died) is
	// dropped by anyone's next refresh.
	if _, err := u.mr.ZAdd("agora:distributed:preference", float64(u.clock.Now().Add(-time.Second).UnixMilli()), "ghost#ab"); err != nil {
		t.Fatal(err)
	}
	a.refreshPreference(ctx)
	if m, _ := u.mr.ZMembers("agora:distributed:preference"); len(m) != 1 {
		t.Fatalf("index members after the ghost's entry expired: %v, want a only", m)
	}
}
