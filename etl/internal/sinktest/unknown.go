package sinktest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/fencing"
)

// rejectedIndexes returns the indexes err rejects, failing t unless err
// is an *etl.RejectedError whose every error wraps etl.ErrUnknownField and
// contains want[index].
func rejectedIndexes(t testing.TB, err error, want map[int]string) []int {
	t.Helper()
	var rej *etl.RejectedError
	if !errors.As(err, &rej) {
		t.Fatalf("err = %v, want *etl.RejectedError", err)
	}
	var idx []int
	for _, r := range rej.Rejections {
		idx = append(idx, r.Index)
		if w, ok := want[r.Index]; !ok || !errors.Is(r.Err, etl.ErrUnknownField) || !strings.Contains(r.Err.Error(), w) {
			t.Errorf("rejection %d: %v, want one containing %q", r.Index, r.Err, w)
		}
	}
	return idx
}

// UnknownFields: with no columns configured, a record with a field the
// table has no column for is rejected alone, with an error naming the
// field and the table, and the batch's other records commit in the same
// fenced transaction (on_unknown_field = "reject", the default); with
// "ignore" the field is dropped and the row written. A batch whose every
// record is rejected still applies the fencing rules.
func UnknownFields(t *testing.T, db DB) {
	db.Exec(t, "CREATE TABLE unk (id bigint PRIMARY KEY, name text)")
	sink := db.NewSink(t, Config{Table: "unk"})
	err := sink.Write(Leased(10), []etl.Record{{"id": 1, "name": "a"}, {"id": 2, "name": "b", "extra": 1}, {"id": 3}})
	if idx := rejectedIndexes(t, err, map[int]string{1: `table unk has no column named "extra"`}); !slices.Equal(idx, []int{1}) {
		t.Fatalf("rejected %v, want [1]", idx)
	}
	if got := db.Ints(t, "SELECT id FROM unk ORDER BY id"); !slices.Equal(got, []int64{1, 3}) {
		t.Fatalf("rows %v, want [1 3]", got)
	}

	// Every record rejected: nothing written, the token still stored, and
	// a stale writer still refused as a whole.
	err = sink.Write(Leased(20), []etl.Record{{"id": 4, "x": 1}, {"id": 5, "y": 1}})
	if idx := rejectedIndexes(t, err, map[int]string{0: `"x"`, 1: `"y"`}); !slices.Equal(idx, []int{0, 1}) {
		t.Fatalf("rejected %v, want [0 1]", idx)
	}
	if got := db.Ints(t, "SELECT token FROM agora_fencing WHERE resource = 'unk'"); !slices.Equal(got, []int64{20}) {
		t.Fatalf("stored token %v, want [20]", got)
	}
	if err := sink.Write(Leased(15), []etl.Record{{"id": 6, "x": 1}}); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("stale writer, every record rejected: err = %v, want ErrStaleWriter", err)
	}

	ignore := db.NewSink(t, Config{Table: "unk", OnUnknownField: "ignore", Mode: "upsert", Key: []string{"id"}})
	err = ignore.Write(Leased(20), []etl.Record{{"id": 7, "name": "g", "extra": 1}, {"only": "unknown"}, {"id": 8, "name": "h"}})
	if idx := rejectedIndexes(t, err, map[int]string{1: `table unk has none of the record's fields ("only")`}); !slices.Equal(idx, []int{1}) {
		t.Fatalf("ignore: rejected %v, want [1]", idx)
	}
	if got := db.Strings(t, "SELECT cast(id AS text) || '=' || coalesce(name, '-') FROM unk WHERE id >= 7 ORDER BY id"); !slices.Equal(got, []string{"7=g", "8=h"}) {
		t.Fatalf("ignore: rows %v", got)
	}
}

// UnknownFieldsCreateTable: create_table makes the table from the first
// batch and adds no column later; a record with a new field is rejected
// alone, so a stream goes on, until the column is added to the table,
// which the sink sees once its kept columns are ColumnsMaxAge old.
func UnknownFieldsCreateTable(t *testing.T, db DB) {
	now := time.Unix(1767225600, 0)
	sink := db.NewSink(t, Config{Table: "grown", CreateTable: true, Now: func() time.Time { return now }})
	ctx := Leased(3)
	if err := sink.Write(ctx, []etl.Record{{"id": 1, "name": "a"}}); err != nil {
		t.Fatal(err)
	}
	err := sink.Write(ctx, []etl.Record{{"id": 2, "name": "b"}, {"id": 3, "name": "c", "extra": "e"}})
	if idx := rejectedIndexes(t, err, map[int]string{1: `table grown has no column named "extra"`}); !slices.Equal(idx, []int{1}) {
		t.Fatalf("rejected %v, want [1]", idx)
	}
	db.Exec(t, "ALTER TABLE grown ADD COLUMN extra text")
	now = now.Add(time.Minute)
	if err := sink.Write(ctx, []etl.Record{{"id": 3, "name": "c", "extra": "e"}}); err != nil {
		t.Fatalf("after ALTER TABLE: %v", err)
	}
	if got := db.Strings(t, "SELECT cast(id AS text) || '=' || name || '/' || coalesce(extra, '-') FROM grown ORDER BY id"); !slices.Equal(got, []string{"1=a/-", "2=b/-", "3=c/e"}) {
		t.Fatalf("rows %v", got)
	}
}
