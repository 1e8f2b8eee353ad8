package runtime

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// ringRecord is run i of a varied history: on schedule and late, fenced,
// failed with a long error, with records, triggered, an outcome the ring
// has no code for, another worker, a clock set back during the run.
func ringRecord(i int) RunRecord {
	start := time.Unix(1_700_000_000+int64(i), int64(i%7)*1_234_567)
	d := time.Duration(i%5) * 3 * time.Millisecond
	rec := RunRecord{PipelineID: "p", WorkerID: "w", RunNumber: 1_700_000_000 + int64(i), FencingToken: int64(i / 3),
		Start: start, End: start.Add(d), Duration: d, Outcome: OutcomeSucceeded}
	switch i % 6 {
	case 1:
		rec.Outcome, rec.Error = OutcomeFailed, strings.Repeat("boom ", i)
	case 2:
		rec.Records = RecordCounts{In: int64(i), Out: int64(i) - 1, DeadLettered: 1, Filtered: 0}
		rec.Triggered = true
	case 3:
		rec.Outcome, rec.WorkerID = "custom_outcome", "other-worker"
	case 4:
		rec.End = start.Add(-time.Hour) // the wall clock was set back
		rec.RunNumber = int64(i)        // a numbered (not slot) run
	case 5:
		rec.Outcome, rec.PipelineID = OutcomeStale, "renamed"
	}
	return rec
}

// sameRun compares two records by instant, since the ring gives times
// back in the local zone without a monotonic reading.
func sameRun(t *testing.T, got, want RunRecord) {
	t.Helper()
	if !got.Start.Equal(want.Start) || !got.End.Equal(want.End) {
		t.Fatalf("times: got %v..%v, want %v..%v", got.Start, got.End, want.Start, want.End)
	}
	got.Start, got.End, want.Start, want.End = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestRunRingKeepsTheNewest(t *testing.T) {
	for _, limit := range []int{1, 3, 100} {
		var r runRing
		var all []RunRecord
		for i := range 250 {
			rec := ringRecord(i)
			all = append(all, rec)
			r.add(rec, limit)
			got := r.newest(0, nil)
			want := min(len(all), limit)
			if len(got) != want {
				t.Fatalf("limit %d after %d runs: %d kept, want %d", limit, i+1, len(got), want)
			}
			for j, g := range got {
				sameRun(t, g, all[len(all)-1-j])
			}
		}
		// Dropped runs take no more room than one run beside those kept.
		if kept := len(r.buf) - r.head; r.head > kept+1400 {
			t.Errorf("limit %d: %d bytes dropped, %d kept", limit, r.head, kept)
		}
	}
}

func TestRunRingLimitAndFilter(t *testing.T) {
	var r runRing
	for i := range 10 {
		r.add(ringRecord(i), 10)
	}
	got := r.newest(2, func(rec RunRecord) bool { return rec.RunNumber%2 == 0 })
	if len(got) != 2 || got[0].RunNumber != 1_700_000_008 || got[1].RunNumber != 1_700_000_006 {
		t.Fatalf("got %+v", got)
	}
	// A lowered limit keeps the newest.
	r.add(ringRecord(10), 4)
	got = r.newest(0, nil)
	if len(got) != 4 || got[0].RunNumber != ringRecord(10).RunNumber || got[3].RunNumber != 1_700_000_007 {
		t.Fatalf("after lowering the limit: %+v", got)
	}
}

// TestRunRingNoAllocationPerRun: once its buffer has grown, a ring at its
// limit records a run without allocating.
func TestRunRingNoAllocationPerRun(t *testing.T) {
	var r runRing
	start := time.Unix(1_700_000_000, 0)
	rec := RunRecord{PipelineID: "p", WorkerID: "w", Outcome: OutcomeSucceeded, Records: RecordCounts{In: 3, Out: 3}}
	i := int64(0)
	next := func() {
		i++
		rec.RunNumber, rec.Start = 1_700_000_000+i, start.Add(time.Duration(i)*time.Second+time.Duration(i%9)*time.Millisecond)
		rec.Duration = time.Duration(i%4) * time.Microsecond
		rec.End = rec.Start.Add(rec.Duration)
		r.add(rec, 100)
	}
	for range 1000 {
		next()
	}
	if allocs := testing.AllocsPerRun(1000, next); allocs != 0 {
		t.Errorf("%v allocations per run", allocs)
	}
	if per := float64(len(r.buf)-r.head) / float64(r.n); per > 16 {
		t.Errorf("%.1f bytes per run", per)
	}
}
