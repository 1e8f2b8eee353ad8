package etl_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/transform"
)

type discardSink struct{}

func (discardSink) Write(context.Context, []etl.Record) error { return nil }

// BenchmarkTransforms moves in-memory records (as the JSON decoder gives
// them) through a pipeline with no transform and with a filter plus a map
// of two fields, alternating in the same run, and reports the time per
// record of each and their ratio.
func BenchmarkTransforms(b *testing.B) {
	const n = 20000
	mk := func() []etl.Record {
		recs := make([]etl.Record, n)
		for i := range recs {
			recs[i] = etl.Record{"id": json.Number("12345"), "amount": json.Number("12.5"), "at": "2026-03-01T10:00:00Z", "name": benchName}
		}
		return recs
	}
	f, err := transform.Filter("record.amount > 0")
	if err != nil {
		b.Fatal(err)
	}
	m, err := transform.Map(map[string]string{"total": "double(record.amount) * 1.2", "day": "string(record.at).substring(0, 10)"})
	if err != nil {
		b.Fatal(err)
	}
	var plain, transformed time.Duration
	run := func(opts ...etl.Option) time.Duration {
		recs := mk()
		start := time.Now()
		if err := etl.New(etl.NewIterableSource(recs), []etl.Sink{discardSink{}}, opts...).Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	b.ResetTimer()
	for b.Loop() {
		plain += run()
		transformed += run(etl.WithTransforms(f, m))
	}
	per := float64(n) * float64(b.N)
	b.ReportMetric(float64(plain.Nanoseconds())/per, "plain-ns/record")
	b.ReportMetric(float64(transformed.Nanoseconds())/per, "filter+map-ns/record")
	b.ReportMetric(float64(transformed)/float64(plain), "ratio")
}
