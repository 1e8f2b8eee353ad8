package history

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// ringRecord is run i of a varied history: on schedule and late, fenced,
// failed with a long error, with records, triggered, an outcome the ring
// has no code for, another worker, a clock set back during the run.
func ringRecord(i int) Record {
	start := time.Unix(1_700_000_000+int64(i), int64(i%7)*1_234_567)
	d := time.Duration(i%5)*3*time.Millisecond + time.Duration(i%3)*1234
	rec := Record{PipelineID: "p", WorkerID: "w", RunNumber: 1_700_000_000 + int64(i), FencingToken: int64(i / 3),
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

// quantized is rec at the precision of the ring and of the shared
// history: the end in ms, the duration in µs, the start the end less the
// duration.
func quantized(rec Record) Record {
	rec.End = time.UnixMilli(rec.End.UnixMilli())
	rec.Duration = time.Duration(rec.Duration.Microseconds()) * time.Microsecond
	rec.Start = rec.End.Add(-rec.Duration)
	return rec
}

// sameRun compares a record read back from the ring with the one given to
// it, quantized, by instant; times come back in the local zone.
func sameRun(t testing.TB, got, given Record) {
	t.Helper()
	want := quantized(given)
	if !got.Start.Equal(want.Start) || !got.End.Equal(want.End) || got.End.Location() != time.Local {
		t.Fatalf("times: got %v..%v, want %v..%v (given %v..%v)", got.Start, got.End, want.Start, want.End, given.Start, given.End)
	}
	got.Start, got.End, want.Start, want.End = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// checkRing compares everything r keeps with the newest of all, and
// checks the buffer holds no more than four times its runs.
func checkRing(t testing.TB, r *ring, all []Record, limit int) {
	t.Helper()
	got := r.newest("p", 0, nil)
	if want := min(len(all), limit); len(got) != want || int(r.n) != want {
		t.Fatalf("limit %d after %d runs: %d kept (n %d), want %d", limit, len(all), len(got), r.n, want)
	}
	for j, g := range got {
		sameRun(t, g, all[len(all)-1-j])
	}
	if kept := len(r.buf) - int(r.head); cap(r.buf) >= ringShrinkCap && cap(r.buf) > 4*kept {
		t.Fatalf("limit %d: a buffer of %d bytes for %d kept", limit, cap(r.buf), kept)
	}
}

func TestRingKeepsTheNewest(t *testing.T) {
	for _, limit := range []int{1, 3, 100} {
		var r ring
		var all []Record
		for i := range 250 {
			rec := ringRecord(i)
			all = append(all, rec)
			r.add(rec, "p", limit)
			checkRing(t, &r, all, limit)
		}
	}
}

func TestRingLimitAndFilter(t *testing.T) {
	var r ring
	for i := range 10 {
		r.add(ringRecord(i), "p", 10)
	}
	got := r.newest("p", 2, func(rec Record) bool { return rec.RunNumber%2 == 0 })
	if len(got) != 2 || got[0].RunNumber != 1_700_000_008 || got[1].RunNumber != 1_700_000_006 {
		t.Fatalf("got %+v", got)
	}
	// A lowered limit keeps the newest.
	r.add(ringRecord(10), "p", 4)
	got = r.newest("p", 0, nil)
	if len(got) != 4 || got[0].RunNumber != ringRecord(10).RunNumber || got[3].RunNumber != 1_700_000_007 {
		t.Fatalf("after lowering the limit: %+v", got)
	}
	// A limit beyond what n holds is n's bound.
	r.add(ringRecord(11), "p", math.MaxInt)
	if got = r.newest("p", 0, nil); len(got) != 5 || got[0].RunNumber != ringRecord(11).RunNumber {
		t.Fatalf("limit MaxInt: %+v", got)
	}
	// A ring emptied by a limit takes the next run's worker as its own.
	r.add(Record{PipelineID: "p", WorkerID: "w2", RunNumber: 1}, "p", 1)
	if got = r.newest("p", 0, nil); len(got) != 1 || got[0].WorkerID != "w2" || r.workerID != "w2" {
		t.Fatalf("limit 1: %+v, ring worker %q", got, r.workerID)
	}
}

// TestRingScheduledSuccessBytes: a success on schedule, a few ms late,
// is 4 or 5 bytes; a success that moved hundreds of records 3 more.
func TestRingScheduledSuccessBytes(t *testing.T) {
	for _, tc := range []struct {
		records bool
		max     float64
	}{{false, 5}, {true, 8}} {
		var r ring
		for k := range 200 {
			r.add(historyRun(7, k, tc.records), "p7", 100)
		}
		if per := float64(len(r.buf)-int(r.head)) / float64(r.n); per > tc.max {
			t.Errorf("records %v: %.2f bytes a run, want at most %v", tc.records, per, tc.max)
		}
		got := r.newest("p7", 0, nil)
		for j, g := range got {
			sameRun(t, g, historyRun(7, 199-j, tc.records))
		}
	}
}

// TestRingNoAllocationPerRun: once its buffer has grown, a ring at its
// limit records a run without allocating, also when the run it drops
// carries an error text or record counts.
func TestRingNoAllocationPerRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(rec *Record, i int64)
	}{
		{"successes", func(*Record, int64) {}},
		{"records", func(rec *Record, i int64) { rec.Records = RecordCounts{In: 3 + i%5, Out: 3} }},
		{"errors", func(rec *Record, i int64) {
			rec.Outcome, rec.Error = OutcomeFailed, "dial tcp 10.0.0.7:5432: connect: connection refused"
		}},
		{"other outcome and worker", func(rec *Record, i int64) {
			rec.Outcome, rec.WorkerID, rec.FencingToken = "custom", "w2", 1_700_000_000_000_000+i
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r ring
			start := time.Unix(1_700_000_000, 0)
			i := int64(0)
			var rec Record // made once: the closure's &rec would escape
			next := func() {
				i++
				rec = Record{PipelineID: "p", WorkerID: "w", Outcome: OutcomeSucceeded, RunNumber: 1_700_000_000 + i,
					Start: start.Add(time.Duration(i)*time.Second + time.Duration(i%9)*time.Millisecond + time.Duration(i%1000))}
				rec.Duration = time.Duration(i%4)*time.Microsecond + time.Duration(i%300)*time.Millisecond
				rec.End = rec.Start.Add(rec.Duration)
				if i > 1 { // the ring's first run sets its worker id
					tc.edit(&rec, i)
				}
				r.add(rec, "p", 100)
			}
			for range 1000 {
				next()
			}
			oldest := r.newest("p", 0, nil)[r.n-1]
			if allocs := testing.AllocsPerRun(1000, next); allocs != 0 {
				t.Errorf("%v allocations per run (oldest dropped: %+v)", allocs, oldest)
			}
		})
	}
}

// randomRecord is a record the ring may be given, however unlikely: any
// outcome (codes and not), texts, counts, ids, tokens, run numbers and
// times anywhere, steps backwards.
func randomRecord(rng *rand.Rand, prev Record) Record {
	pick := func(n int) bool { return rng.IntN(n) == 0 }
	anyInt := func() int64 {
		switch rng.IntN(4) {
		case 0:
			return int64(rng.Uint64())
		case 1:
			return rng.Int64N(200) - 100
		case 2:
			return []int64{0, math.MaxInt64, math.MinInt64, math.MaxInt64 / 1000, math.MinInt64 / 1000}[rng.IntN(5)]
		}
		return rng.Int64N(1 << 40)
	}
	rec := Record{PipelineID: "p", WorkerID: "w", Outcome: OutcomeSucceeded}
	switch rng.IntN(5) {
	case 0:
		rec.RunNumber = anyInt()
	case 1:
		rec.RunNumber = prev.RunNumber - rng.Int64N(5) // a step back
	default:
		rec.RunNumber = prev.RunNumber + 1 + rng.Int64N(3)
	}
	switch rng.IntN(5) {
	case 0:
		rec.End = time.Unix(rng.Int64N(2e14)-1e14, rng.Int64N(1e9)) // any year
	case 1:
		rec.End = prev.End.Add(-time.Duration(rng.Int64N(int64(time.Hour)))) // the clock went back
	case 2:
		rec.End = time.Time{}
	default:
		rec.End = time.Unix(rec.RunNumber%1e11, 0).Add(time.Duration(rng.Int64N(int64(time.Second))))
	}
	switch rng.IntN(4) {
	case 0:
		rec.Duration = time.Duration(anyInt())
	default:
		rec.Duration = time.Duration(rng.Int64N(int64(time.Second)))
	}
	rec.Start = rec.End.Add(-rec.Duration)
	if pick(3) {
		outcomes := append(ringOutcomes[:], "custom", "bien_fait", Outcome(strings.Repeat("x", 300)))
		rec.Outcome = outcomes[rng.IntN(len(outcomes))]
	}
	if pick(3) {
		rec.Error = strings.Repeat("é", rng.IntN(300))
	}
	if pick(3) {
		rec.Records = RecordCounts{In: anyInt(), Out: anyInt(), DeadLettered: anyInt(), Filtered: anyInt()}
	}
	rec.Triggered = pick(2)
	if pick(6) {
		rec.PipelineID = []string{"", "q", "renamed-pipeline"}[rng.IntN(3)]
	}
	if pick(6) {
		rec.WorkerID = []string{"", "w2", strings.Repeat("w", 200)}[rng.IntN(3)]
	}
	if pick(4) {
		rec.FencingToken = anyInt()
	}
	return rec
}

// TestRingRoundTripsRandomRuns: whatever it is given, the ring gives
// back the newest runs quantized to the shared history's precision.
func TestRingRoundTripsRandomRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		limit := []int{1, 2, 7, 50}[round%4]
		var r ring
		var all []Record
		prev := Record{RunNumber: 1_764_000_000, End: time.Unix(1_764_000_000, 0)}
		for range 1 + rng.IntN(120) {
			rec := randomRecord(rng, prev)
			all = append(all, rec)
			r.add(rec, "p", limit)
			prev = rec
		}
		checkRing(t, &r, all, limit)
	}
}

// FuzzRing records a run after two ordinary ones and reads all three
// back.
func FuzzRing(f *testing.F) {
	f.Add(int64(1_764_000_002), int64(1_764_000_002_003_456_789), int64(123_456), "", "", int64(0), int64(5), false, "w")
	f.Add(int64(-5), int64(-1), int64(-1_999), "custom", "boom", int64(math.MaxInt64), int64(math.MinInt64), true, "")
	f.Add(int64(math.MaxInt64), int64(math.MinInt64), int64(math.MinInt64), "failed", strings.Repeat("e", 200), int64(-7), int64(0), false, "w2")
	f.Fuzz(func(t *testing.T, run, endNs, durNs int64, outcome, errText string, token, in int64, triggered bool, worker string) {
		base := time.Unix(1_764_000_000, 0)
		all := []Record{
			{PipelineID: "p", WorkerID: "w", RunNumber: 1_764_000_000, Start: base.Add(time.Millisecond), End: base.Add(2 * time.Millisecond), Duration: time.Millisecond, Outcome: OutcomeSucceeded},
			{PipelineID: "p", WorkerID: "w", RunNumber: 1_764_000_001, Start: base.Add(time.Second), End: base.Add(time.Second + 3*time.Millisecond), Duration: 3 * time.Millisecond, Outcome: OutcomeFailed, Error: "x"},
		}
		end := time.Unix(0, endNs)
		all = append(all, Record{PipelineID: "p", WorkerID: worker, RunNumber: run, FencingToken: token,
			Start: end.Add(-time.Duration(durNs)), End: end, Duration: time.Duration(durNs), Outcome: Outcome(outcome),
			Error: errText, Records: RecordCounts{In: in}, Triggered: triggered})
		var r ring
		for _, rec := range all {
			r.add(rec, "p", 3)
		}
		checkRing(t, &r, all, 3)
		r.add(all[0], "p", 3) // drops the run of the last two
		checkRing(t, &r, append(all, all[0]), 3)
	})
}

// TestRingBufferShrinks: once runs with long error texts are dropped,
// the buffer they needed is given back.
func TestRingBufferShrinks(t *testing.T) {
	var r ring
	var all []Record
	for k := range 300 {
		rec := historyRun(1, k, false)
		rec.PipelineID = "p"
		if k < 100 {
			rec.Outcome, rec.Error = OutcomeFailed, strings.Repeat("x", MaxErrorLen)
		}
		all = append(all, rec)
		r.add(rec, "p", 100)
		if k == 99 && cap(r.buf) < 100*MaxErrorLen {
			t.Fatalf("100 failures in %d bytes", cap(r.buf))
		}
	}
	checkRing(t, &r, all, 100)
	if cap(r.buf) >= ringShrinkCap {
		t.Errorf("100 successes still hold a buffer of %d bytes", cap(r.buf))
	}
}
