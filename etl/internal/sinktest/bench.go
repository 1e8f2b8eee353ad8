package sinktest

import (
	"context"
	"testing"
)

// BenchFencedBatches measures one fenced batch of 10 rows on db: "next"
// is a run's later batch (the common case: its token already stored),
// "first" a run's first batch (a new token, and for a slot run a new slot),
// each as a run without a slot ("token") and as a slot run ("slot").
// "next/backfill" is a backfill run's later batch (it reads its slot's
// ledger row in every transaction) while a scheduled run holds the
// resource's token.
func BenchFencedBatches(b *testing.B, db DB) {
	db.Exec(b, "CREATE TABLE fb (id bigint, v text)")
	sink := db.NewSink(b, Config{Table: "fb", Columns: []string{"id", "v"}})
	recs := KillRows(10)
	token := int64(1000)
	run := func(slot bool, t int64) context.Context {
		if slot {
			return SlotLeased(SlotStart+t*60, t)
		}
		return Leased(t)
	}
	for _, slot := range []bool{false, true} {
		kind := map[bool]string{false: "token", true: "slot"}[slot]
		b.Run("first/"+kind, func(b *testing.B) {
			for range b.N {
				token++
				if err := sink.Write(run(slot, token), recs); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("next/"+kind, func(b *testing.B) {
			token++
			ctx := run(slot, token)
			if err := sink.Write(ctx, recs); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := sink.Write(ctx, recs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("next/backfill", func(b *testing.B) {
		token += 2
		ctx := BackfillLeased(SlotStart+token*60+60, token)
		if err := sink.Write(ctx, recs); err != nil {
			b.Fatal(err)
		}
		// A scheduled run of another slot writes once.
		if err := sink.Write(SlotLeased(SlotStart+token*60, token-1), recs); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if err := sink.Write(ctx, recs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
