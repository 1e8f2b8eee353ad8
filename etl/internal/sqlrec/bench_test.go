package sqlrec

import (
	"fmt"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
)

// BenchmarkFitColumns measures what sorting a batch of 500 records (four
// fields each) against the table's columns costs per batch, beside the
// baseline it replaced for sinks without columns: Columns, the union of
// the batch's fields. Both run in the same iterations, alternately.
// ns/batch is FitColumns', baseline-ns/batch Columns', extra-ns/record the
// difference per record.
func BenchmarkFitColumns(b *testing.B) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]etl.Record, 500)
	for i := range recs {
		recs[i] = etl.Record{"id": int64(i), "name": fmt.Sprintf("customer-%d", i), "amount": float64(i) / 100, "at": at}
	}
	table := map[string]bool{"id": true, "name": false, "amount": false, "at": false}
	known := func(c string) bool { _, ok := table[c]; return ok }
	var tf, tc time.Duration
	for range b.N {
		start := time.Now()
		if f := FitColumns("bench", nil, recs, known, UnknownReject); len(f.Cols) != 4 {
			b.Fatal(f.Cols)
		}
		mid := time.Now()
		if c := Columns(nil, recs); len(c) != 4 {
			b.Fatal(c)
		}
		tf, tc = tf+mid.Sub(start), tc+time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tf.Nanoseconds())/n, "ns/batch")
	b.ReportMetric(float64(tc.Nanoseconds())/n, "baseline-ns/batch")
	b.ReportMetric(float64((tf-tc).Nanoseconds())/n/float64(len(recs)), "extra-ns/record")
}
