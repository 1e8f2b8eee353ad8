package etl_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
)

// renameID renames id to key in place, as the rename transform does.
var renameID = etl.TransformFunc(func(_ context.Context, r etl.Record) (etl.Record, bool, error) {
	r["key"] = r["id"]
	delete(r, "id")
	return r, true, nil
})

// A dead letter carries the record as the source produced it, however the
// transforms changed it in place, and what the failing sink received.
func TestDeadLetterCarriesTheSourceRecordAndTheOutput(t *testing.T) {
	sink := &memSink{name: "db", reject: func(r etl.Record) error {
		if r["key"] == 1 {
			return errors.New("key 1 refused")
		}
		return nil
	}}
	dlq := &memSink{name: "dlq"}
	p := etl.New(&ackSource{n: 3}, []etl.Sink{sink}, etl.WithDLQ(dlq), etl.WithTransforms(renameID))
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := dlq.records()
	if len(got) != 1 {
		t.Fatalf("dead letters %v, want one", got)
	}
	dl := got[0]
	if !reflect.DeepEqual(dl[etl.DeadLetterRecord], etl.Record{"id": 1}) {
		t.Errorf("record = %v, want the source's {id: 1}", dl[etl.DeadLetterRecord])
	}
	if !reflect.DeepEqual(dl[etl.DeadLetterOutput], etl.Record{"key": 1}) {
		t.Errorf("output = %v, want what the sink got, {key: 1}", dl[etl.DeadLetterOutput])
	}
	if dl[etl.DeadLetterError] != "key 1 refused" || dl[etl.DeadLetterSink] != "db" {
		t.Errorf("dead letter %v", dl)
	}
	if len(sink.records()) != 2 {
		t.Errorf("sink got %v, want the other two records", sink.records())
	}
}

// A transform's dead letter carries the source's record and, when
// transforms ran before the failing one, what it received.
func TestTransformDeadLetterCarriesWhatTheTransformReceived(t *testing.T) {
	fail := etl.TransformFunc(func(_ context.Context, r etl.Record) (etl.Record, bool, error) {
		if r["key"] == 2 {
			return nil, false, errors.New("no 2")
		}
		return r, true, nil
	})
	dlq := &memSink{name: "dlq"}
	p := etl.New(&ackSource{n: 3}, []etl.Sink{&memSink{name: "out"}}, etl.WithDLQ(dlq), etl.WithTransforms(renameID, fail))
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := dlq.records()
	if len(got) != 1 || !reflect.DeepEqual(got[0][etl.DeadLetterRecord], etl.Record{"id": 2}) ||
		!reflect.DeepEqual(got[0][etl.DeadLetterOutput], etl.Record{"key": 2}) || got[0][etl.DeadLetterSinkIndex] != -1 {
		t.Fatalf("dead letters %v, want one with the source's {id: 2} and the received {key: 2}", got)
	}
}

// Without a dead-letter queue, a transform failure fails the run naming
// the record.
func TestTransformFailureWithoutDLQNamesTheRecord(t *testing.T) {
	fail := etl.TransformFunc(func(_ context.Context, r etl.Record) (etl.Record, bool, error) {
		if r["id"] == 4 {
			return nil, false, errors.New("no 4")
		}
		return r, true, nil
	})
	err := etl.New(&ackSource{n: 6}, []etl.Sink{&memSink{name: "out"}}, etl.WithBatchSize(3), etl.WithTransforms(fail)).Run(context.Background())
	if !errors.Is(err, etl.ErrTransformFailed) || !strings.Contains(err.Error(), "record 2 of a batch of 3") {
		t.Fatalf("run = %v, want ErrTransformFailed naming record 2 of a batch of 3", err)
	}
}
