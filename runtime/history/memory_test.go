package history_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

// run is run k of pipeline id: a slot a second after the one before,
// ending 3 ms into it.
func run(id string, k int) history.Record {
	start := time.Unix(1_764_000_000+int64(k), 0)
	return history.Record{PipelineID: id, WorkerID: "w", RunNumber: start.Unix(), Start: start,
		End: start.Add(3 * time.Millisecond), Duration: 3 * time.Millisecond, Outcome: history.OutcomeSucceeded,
		Records: history.RecordCounts{In: int64(k)}}
}

func TestMemoryKeepsTheNewestWithinTheLimit(t *testing.T) {
	m := history.New(history.Policy{Limit: 3})
	for k := range 5 {
		m.Add(run("p", k))
	}
	m.Add(run("q", 9))
	now := time.Unix(1_764_000_010, 0)
	got := m.Newest("p", 0, now)
	if len(got) != 3 || got[0].Records.In != 4 || got[2].Records.In != 2 || got[0].PipelineID != "p" || got[0].WorkerID != "w" {
		t.Fatalf("limit 3 after 5 runs: %+v", got)
	}
	if got := m.Newest("p", 1, now); len(got) != 1 || got[0].Records.In != 4 {
		t.Fatalf("newest 1: %+v", got)
	}
	if got := m.Newest("q", 0, now); len(got) != 1 || got[0].Records.In != 9 {
		t.Fatalf("another pipeline's runs: %+v", got)
	}
	if got := m.Newest("none", 0, now); got == nil || len(got) != 0 {
		t.Fatalf("a pipeline that never ran: %#v, want an empty slice", got)
	}
}

func TestMemoryDropsRunsOlderThanMaxAge(t *testing.T) {
	m := history.New(history.Policy{MaxAge: time.Minute})
	for k := range 100 {
		m.Add(run("p", k))
	}
	// Run k ends at 1_764_000_000 + k s + 3 ms; a minute before now lets
	// the runs from k = 40 on through.
	got := m.Newest("p", 0, time.Unix(1_764_000_100, 0))
	if len(got) != 60 || got[59].Records.In != 40 {
		t.Fatalf("%d runs within a minute, oldest %+v", len(got), got[len(got)-1])
	}
	if p := m.Policy(); p.Limit != history.DefaultLimit || p.MaxAge != time.Minute {
		t.Errorf("Policy() = %+v", p)
	}
}

func TestMemoryOffKeepsNothing(t *testing.T) {
	m := history.New(history.Policy{Off: true, Limit: 5})
	m.Add(run("p", 1))
	if got := m.Newest("p", 0, time.Unix(1_764_000_010, 0)); len(got) != 0 {
		t.Fatalf("history off: %+v", got)
	}
	if p := m.Policy(); p != (history.Policy{Off: true}) {
		t.Errorf("Policy() = %+v", p)
	}
}

func TestMemoryZeroValueKeepsTheDefaults(t *testing.T) {
	var m history.Memory
	for k := range history.DefaultLimit + 5 {
		m.Add(run("p", k))
	}
	if got := m.Newest("p", 0, time.Unix(1_764_000_200, 0)); len(got) != history.DefaultLimit {
		t.Fatalf("%d runs kept, want %d", len(got), history.DefaultLimit)
	}
}

// TestMemoryConcurrentPipelines: pipelines record and are read from many
// goroutines at once (go test -race checks the locking).
func TestMemoryConcurrentPipelines(t *testing.T) {
	m := history.New(history.Policy{Limit: 10})
	var wg sync.WaitGroup
	for i := range 8 {
		id := "p" + strconv.Itoa(i%4) // two writers per pipeline
		wg.Go(func() {
			for k := range 200 {
				m.Add(run(id, k))
				if k%50 == 0 {
					_ = m.Newest(id, 3, time.Unix(1_764_000_300, 0))
				}
			}
		})
	}
	wg.Wait()
	for i := range 4 {
		if got := m.Newest("p"+strconv.Itoa(i), 0, time.Unix(1_764_000_300, 0)); len(got) != 10 {
			t.Errorf("pipeline %d: %d runs kept, want 10", i, len(got))
		}
	}
}

// TestMemoryAddAllocatesNothing: once a pipeline's buffer has grown,
// keeping a run allocates nothing, the lookup of its entry included.
func TestMemoryAddAllocatesNothing(t *testing.T) {
	m := history.New(history.Policy{})
	k := 0
	add := func() { m.Add(run("p", k)); k++ }
	for range 1000 {
		add()
	}
	if allocs := testing.AllocsPerRun(1000, add); allocs != 0 {
		t.Errorf("%v allocations per run", allocs)
	}
}
