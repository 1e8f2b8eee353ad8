package history

import (
	goruntime "runtime"
	"strconv"
	"testing"
	"time"
)

// historyPipelines is how many pipelines the memory benchmark fills.
const historyPipelines = 1000

// historyRun is run k of pipeline i as a pool records it: a slot of a
// pipeline running every second, started a few milliseconds late, taking
// tens to hundreds of microseconds; with records, it moved some.
func historyRun(i, k int, records bool) Record {
	slot := int64(1_764_000_000 + k)
	late := time.Duration(1+(i*7+k*13)%4)*time.Millisecond + time.Duration((i*31+k*17)%1000)*time.Microsecond + time.Duration(k%997)
	d := time.Duration(20+(i*11+k*29)%280)*time.Microsecond + time.Duration(k%991)
	start := time.Unix(slot, 0).Add(late)
	rec := Record{PipelineID: "p" + strconv.Itoa(i), RunNumber: slot, WorkerID: "etl-worker-7d9f8c6b5-xk2p9-1-ab12cd34",
		Start: start, End: start.Add(d), Duration: d, Outcome: OutcomeSucceeded}
	if records {
		rec.Records = RecordCounts{In: int64(500 + k%50), Out: int64(500 + k%50)}
	}
	return rec
}

// heapInUse is the heap's live bytes after a full collection.
func heapInUse() uint64 {
	var ms goruntime.MemStats
	goruntime.GC()
	goruntime.GC()
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// historyBytesPerPipeline fills the run history of historyPipelines
// pipelines with runs runs each and returns the heap it holds per pipeline:
// the Memory's entry, its share of the map, the ring's buffer.
func historyBytesPerPipeline(runs int, records bool) float64 {
	ids := make([]string, historyPipelines) // made first: not the history's
	for i := range ids {
		ids[i] = "p" + strconv.Itoa(i)
	}
	before := heapInUse()
	m := New(Policy{})
	for i, id := range ids {
		for k := range runs {
			rec := historyRun(i, k, records)
			rec.PipelineID = id
			m.Add(rec)
		}
	}
	after := heapInUse()
	goruntime.KeepAlive(m)
	return float64(after-before) / historyPipelines
}

// BenchmarkMemoryBytes reports the heap a Memory holds per pipeline
// (B/pipeline: entry, map share, ring buffer) after 20 and 100 runs (the
// default limit) of a pipeline running every second, without and with
// record counts.
func BenchmarkMemoryBytes(b *testing.B) {
	for _, tc := range []struct {
		name    string
		runs    int
		records bool
	}{
		{"runs=20", 20, false},
		{"runs=100", 100, false},
		{"runs=20/records", 20, true},
		{"runs=100/records", 100, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var per float64
			for range b.N {
				per = historyBytesPerPipeline(tc.runs, tc.records)
			}
			b.ReportMetric(per, "B/pipeline")
			b.ReportMetric(0, "ns/op")
		})
	}
}
