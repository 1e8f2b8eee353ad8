package postgres

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/internal/sinktest"
)

func TestSourceStreamsBatchesWithParameters(t *testing.T) {
	pool, _ := testPool(t)
	db := suiteDB(pool, defaultUpsertPath)
	db.Exec(t, "CREATE TABLE src AS SELECT g AS id, 'n' || g AS name, g * 1.5 AS amount FROM generate_series(1, 1050) g")
	src, err := NewSource(pool, SourceConfig{Query: `SELECT id, name, amount, :run_number::bigint AS run, :fencing_token::bigint AS token,
		:slot_time::timestamptz AS slot, ':not_a_param' AS lit, 2::int AS cast FROM src ORDER BY id -- :comment`})
	if err != nil {
		t.Fatal(err)
	}
	const slot = 1767225600
	sizes, recs, ack := sinktest.Drain(t, sinktest.Slot("p", slot, 99), src, 500)
	if !slices.Equal(sizes, []int{500, 500, 50}) {
		t.Fatalf("batch sizes %v", sizes)
	}
	if ack == nil {
		t.Fatal("the last batch has no Ack")
	}
	r := recs[1049]
	want := etl.Record{"id": int32(1050), "name": "n1050", "amount": 1575.0, "run": int64(slot), "token": int64(99),
		"slot": time.Unix(slot, 0), "lit": ":not_a_param", "cast": int32(2)}
	for k, v := range want {
		got := r[k]
		if tm, ok := got.(time.Time); ok {
			if !tm.Equal(v.(time.Time)) {
				t.Errorf("%s = %v, want %v", k, got, v)
			}
			continue
		}
		if got != v {
			t.Errorf("%s = %#v, want %#v", k, got, v)
		}
	}
}

func TestSourceLastSlotTimeAdvancesOnlyWhenAcknowledged(t *testing.T) {
	pool, _ := testPool(t)
	db := suiteDB(pool, defaultUpsertPath)
	const t0 = 1767225600
	db.Exec(t, "CREATE TABLE ev (id int, at timestamptz)")
	for i := range 6 {
		db.Exec(t, "INSERT INTO ev VALUES ("+itoa(i)+", to_timestamp("+itoa(t0+int64(i)*10)+"))")
	}
	// Events 0..5 at t0, t0+10, ..., t0+50.
	cfg := SourceConfig{Query: "SELECT id FROM ev WHERE at > :last_slot_time AND at <= :slot_time ORDER BY id"}
	run := func(slot int64, acknowledge bool) []int32 {
		src, err := NewSource(pool, cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, recs, ack := sinktest.Drain(t, sinktest.Slot("inc", slot, 1), src, 2)
		if acknowledge && ack != nil {
			if err := ack(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		var ids []int32
		for _, r := range recs {
			ids = append(ids, r["id"].(int32))
		}
		return ids
	}
	if got := run(t0+20, true); !slices.Equal(got, []int32{0, 1, 2}) {
		t.Fatalf("first run (from the epoch): %v", got)
	}
	if got := run(t0+40, false); !slices.Equal(got, []int32{3, 4}) {
		t.Fatalf("second run: %v", got)
	}
	// The second run's records were never acknowledged: the next run
	// reads its window again.
	if got := run(t0+50, true); !slices.Equal(got, []int32{3, 4, 5}) {
		t.Fatalf("third run after an unacknowledged one: %v", got)
	}
	// An empty window completes by itself.
	if got := run(t0+60, false); len(got) != 0 {
		t.Fatalf("empty window: %v", got)
	}
	if got := db.Ints(t, "SELECT extract(epoch FROM last_slot_time)::bigint FROM agora_source_state WHERE pipeline_id = 'inc'"); !slices.Equal(got, []int64{t0 + 60}) {
		t.Fatalf("stored last slot %v", got)
	}
}

func TestSourceConfigValidate(t *testing.T) {
	sinktest.WantFieldErrors(t, SourceConfig{}.Validate(), "url", "query")
	sinktest.WantFieldErrors(t, SourceConfig{URL: "postgres://x", Query: "SELECT :slot"}.Validate(), "query")
	sinktest.WantFieldErrors(t, SourceConfig{URL: "postgres://x", Query: "SELECT :slot_time, $$:x$$, ':y', \":z\""}.Validate())
}

func itoa[I int | int64](i I) string { return strconv.FormatInt(int64(i), 10) }
