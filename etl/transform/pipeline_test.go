package transform_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/transform"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

type memSink struct{ got []etl.Record }

func (s *memSink) Write(_ context.Context, recs []etl.Record) error {
	for _, r := range recs {
		c := etl.Record{}
		for k, v := range r {
			c[k] = v
		}
		s.got = append(s.got, c)
	}
	return nil
}

// TestPipelineAccountsForEveryRecord: filtered records are counted, a
// record the map fails on goes to the DLQ with the error, and
// in = out + dead-lettered + filtered.
func TestPipelineAccountsForEveryRecord(t *testing.T) {
	f, err := transform.Filter("record.amount > 0")
	if err != nil {
		t.Fatal(err)
	}
	m, err := transform.Map(map[string]string{"total": "double(record.amount) * 2.0"})
	if err != nil {
		t.Fatal(err)
	}
	recs := []etl.Record{
		{"amount": json.Number("1")}, {"amount": json.Number("-1")}, {"amount": "x"}, {"amount": json.Number("2.5")},
	}
	out, dlq := &memSink{}, &memSink{}
	ctx, counts := runtime.ContextWithRecordCounts(context.Background())
	p := etl.New(etl.NewIterableSource(recs), []etl.Sink{out}, etl.WithDLQ(dlq), etl.WithTransforms(f, m))
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if len(out.got) != 2 || out.got[0]["total"] != 2.0 || out.got[1]["total"] != 5.0 {
		t.Fatalf("written %v", out.got)
	}
	// "x" > 0 fails in the filter: a dead letter named after it.
	if len(dlq.got) != 1 || dlq.got[0][etl.DeadLetterSink] != "filter(record.amount > 0)" || dlq.got[0][etl.DeadLetterSinkIndex] != -1 {
		t.Fatalf("dead letters %v", dlq.got)
	}
	if c := counts(); c != (history.RecordCounts{In: 4, Out: 2, DeadLettered: 1, Filtered: 1}) {
		t.Fatalf("counts %+v", c)
	}
}

// TestPipelineDeadLettersMissingFields: a record without a field an
// expression reads is a dead letter naming the field; a map to null
// removes the field from the record written.
func TestPipelineDeadLettersMissingFields(t *testing.T) {
	m, err := transform.Map(map[string]string{"total": "record.amount * 2", "secret": "null"})
	if err != nil {
		t.Fatal(err)
	}
	recs := []etl.Record{{"amount": json.Number("3"), "secret": "s"}, {"secret": "s"}}
	out, dlq := &memSink{}, &memSink{}
	p := etl.New(etl.NewIterableSource(recs), []etl.Sink{out}, etl.WithDLQ(dlq), etl.WithTransforms(m))
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(out.got) != 1 || out.got[0]["total"] != int64(6) || len(out.got[0]) != 2 {
		t.Fatalf("written %v", out.got)
	}
	if len(dlq.got) != 1 {
		t.Fatalf("dead letters %v", dlq.got)
	}
	if e, _ := dlq.got[0][etl.DeadLetterError].(string); !strings.Contains(e, "total") || !strings.Contains(e, "amount") {
		t.Fatalf("dead letter error %q, want it to name the field and the missing key", e)
	}
}

// TestPipelineStopsAnExpressionWhenTheRunEnds: the timeout repro
// in Go. A filter that would run for minutes on each of two records stops
// when the run's context ends: the run fails with the context's cause,
// nothing is written and nothing is dead-lettered (the records are not
// at fault).
func TestPipelineStopsAnExpressionWhenTheRunEnds(t *testing.T) {
	list := "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]"
	expr := "true"
	for i := range 6 {
		expr = list + ".all(v" + string(rune('a'+i)) + ", " + expr + ")"
	}
	f, err := transform.Filter(expr, transform.WithMaxCost(math.MaxInt64))
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("runtime: run timed out")
	ctx, cancel := context.WithCancelCause(context.Background())
	ctx, counts := runtime.ContextWithRecordCounts(ctx)
	time.AfterFunc(50*time.Millisecond, func() { cancel(cause) })
	out, dlq := &memSink{}, &memSink{}
	p := etl.New(etl.NewIterableSource([]etl.Record{{"id": 1}, {"id": 2}}), []etl.Sink{out}, etl.WithDLQ(dlq), etl.WithTransforms(f))
	start := time.Now()
	err = p.Run(ctx)
	if !errors.Is(err, cause) || !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v, want the context's cause", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the run took %s", d)
	}
	if len(out.got) != 0 || len(dlq.got) != 0 {
		t.Fatalf("written %v, dead letters %v", out.got, dlq.got)
	}
	if c := counts(); c.Out != 0 || c.DeadLettered != 0 {
		t.Fatalf("counts %+v", c)
	}
}
