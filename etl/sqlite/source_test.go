package sqlite

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/agora-etl/agora/etl/internal/sinktest"
)

func TestSourceStreamsBatchesWithParameters(t *testing.T) {
	db, _ := testDB(t)
	sdb := suiteDB(t, db)
	sdb.Exec(t, "CREATE TABLE src (id INTEGER, name TEXT, amount REAL)")
	sdb.Exec(t, "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 1050) INSERT INTO src SELECT n, 'n' || n, n * 1.5 FROM g")
	src, err := NewSource(db, SourceConfig{Query: `SELECT id, name, amount, :run_number AS run, :fencing_token AS token,
		:slot_time AS slot, unixepoch(:slot_time) AS slot_unix, ':not_a_param' AS lit FROM src ORDER BY id -- :comment`})
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
	got := fmt.Sprint(recs[1049])
	want := "map[amount:1575 id:1050 lit::not_a_param name:n1050 run:1767225600 slot:2026-01-01 00:00:00 slot_unix:1767225600 token:99]"
	if got != want {
		t.Fatalf("last record\n got %s\nwant %s", got, want)
	}
}

func TestSourceLastSlotTimeAdvancesOnlyWhenAcknowledged(t *testing.T) {
	db, _ := testDB(t)
	sdb := suiteDB(t, db)
	const t0 = 1767225600
	sdb.Exec(t, "CREATE TABLE ev (id INTEGER, at TEXT)")
	for i := range 6 {
		sdb.Exec(t, fmt.Sprintf("INSERT INTO ev VALUES (%d, datetime(%d, 'unixepoch'))", i, t0+i*10))
	}
	cfg := SourceConfig{Query: "SELECT id FROM ev WHERE at > :last_slot_time AND at <= :slot_time ORDER BY id"}
	run := func(slot int64, acknowledge bool) []int64 {
		src, err := NewSource(db, cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, recs, ack := sinktest.Drain(t, sinktest.Slot("inc", slot, 1), src, 2)
		if acknowledge && ack != nil {
			if err := ack(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		var ids []int64
		for _, r := range recs {
			ids = append(ids, r["id"].(int64))
		}
		return ids
	}
	if got := run(t0+20, true); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Fatalf("first run (from the epoch): %v", got)
	}
	if got := run(t0+40, false); !slices.Equal(got, []int64{3, 4}) {
		t.Fatalf("second run: %v", got)
	}
	if got := run(t0+50, true); !slices.Equal(got, []int64{3, 4, 5}) {
		t.Fatalf("third run after an unacknowledged one: %v", got)
	}
	if got := run(t0+60, false); len(got) != 0 {
		t.Fatalf("empty window: %v", got)
	}
	if got := sdb.Ints(t, "SELECT last_slot_us / 1000000 FROM agora_source_state WHERE pipeline_id = 'inc'"); !slices.Equal(got, []int64{t0 + 60}) {
		t.Fatalf("stored last slot %v", got)
	}
}

func TestSourceConfigValidate(t *testing.T) {
	sinktest.WantFieldErrors(t, SourceConfig{}.Validate(), "path", "query")
	sinktest.WantFieldErrors(t, SourceConfig{Path: "x", Query: "SELECT :nope"}.Validate(), "query")
}
