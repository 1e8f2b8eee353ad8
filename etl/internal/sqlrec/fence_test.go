package sqlrec

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl/fencing"
)

// fakeTx records the statements it is given and answers the ledger read
// with row, and the read of the oldest slot a full ledger keeps with kept.
type fakeTx struct {
	row   *fencing.SlotRow
	kept  *int64
	stmts []string
}

func (f *fakeTx) QueryRow(_ context.Context, q string, _ []any, dest ...any) (bool, error) {
	f.stmts = append(f.stmts, strings.Fields(q)[0])
	if len(dest) == 1 { // the oldest slot kept
		if f.kept == nil {
			return false, nil
		}
		*dest[0].(*int64) = *f.kept
		return true, nil
	}
	if f.row == nil {
		return false, nil
	}
	*dest[0].(*int64) = f.row.Token
	if f.row.Completed {
		*dest[1].(*int64) = 1
	}
	return true, nil
}

func (f *fakeTx) Exec(_ context.Context, q string, _ ...any) error {
	w := strings.Fields(q)
	table := w[1] // UPDATE t
	if w[0] != "UPDATE" {
		table = w[2] // INSERT INTO t, DELETE FROM t
	}
	f.stmts = append(f.stmts, w[0]+" "+table)
	return nil
}

// The ledger costs a scheduled slot run statements on its first write
// only, and a backfill run one read on every batch; runs without a slot
// never read it. claimed marks the transactions that insert or take over
// the slot's row; a backfill run never stores its token.
func TestFenceStatements(t *testing.T) {
	f := NewFencer("test", func(n int) string { return "?" + strconv.Itoa(n) })
	ctx := context.Background()
	slot := Writer{Resource: "r", Token: 9, Slot: 1767225600, IsSlot: true}
	backfill := slot
	backfill.Backfill = true
	own := &fencing.SlotRow{Found: true, Token: 9}
	older := int64(1767225600 - 60)
	cases := []struct {
		name    string
		w       Writer
		stored  int64
		row     *fencing.SlotRow
		kept    *int64
		want    string
		claimed bool
	}{
		{"next batch", slot, 9, nil, nil, "", false},
		{"first write, new slot", slot, 5, nil, nil, "SELECT,SELECT,INSERT agora_slots,UPDATE agora_fencing", true},
		{"first write, full ledger", slot, 5, nil, &older, "SELECT,SELECT,INSERT agora_slots,DELETE agora_slots,UPDATE agora_fencing", true},
		{"first write, take-over", slot, 5, &fencing.SlotRow{Found: true, Token: 4}, nil, "SELECT,UPDATE agora_slots,UPDATE agora_fencing", true},
		{"backfill, first write", backfill, 12, nil, nil, "SELECT,SELECT,INSERT agora_slots", true},
		{"backfill, first write above the stored token", backfill, 5, nil, nil, "SELECT,SELECT,INSERT agora_slots", true},
		{"backfill, next batch", backfill, 12, own, nil, "SELECT", false},
		{"backfill, take-over of a superseded row", backfill, 12, &fencing.SlotRow{Found: true, Token: 4}, nil, "SELECT,UPDATE agora_slots", true},
		{"no slot", Writer{Resource: "r", Token: 9}, 5, nil, nil, "UPDATE agora_fencing", false},
		{"no slot, next batch", Writer{Resource: "r", Token: 9}, 9, nil, nil, "", false},
	}
	for _, c := range cases {
		tx := &fakeTx{row: c.row, kept: c.kept}
		claimed, err := f.Fence(ctx, tx, nil, c.w, c.stored)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := strings.Join(tx.stmts, ","); got != c.want || claimed != c.claimed {
			t.Errorf("%s: statements %q claimed %v, want %q %v", c.name, got, claimed, c.want, c.claimed)
		}
	}
	tx := &fakeTx{row: &fencing.SlotRow{Found: true, Token: 4, Completed: true}}
	if _, err := f.Fence(ctx, tx, nil, slot, 5); !errors.Is(err, fencing.ErrSlotDone) || len(tx.stmts) != 1 {
		t.Fatalf("completed slot: err = %v after %v, want ErrSlotDone after the read alone", err, tx.stmts)
	}
	if _, err := f.Fence(ctx, &fakeTx{}, nil, slot, 12); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("scheduled slot run below the stored token: err = %v, want ErrStaleWriter", err)
	}
	tx = &fakeTx{row: &fencing.SlotRow{Found: true, Token: 4}}
	if _, err := f.Fence(ctx, tx, nil, backfill, 4); !errors.Is(err, fencing.ErrSlotBusy) || len(tx.stmts) != 1 {
		t.Fatalf("backfill beside the stored token's unfinished row: err = %v after %v, want ErrSlotBusy after the read alone", err, tx.stmts)
	}
	newer := int64(1767225600 + 60)
	for _, w := range []Writer{slot, backfill} {
		tx = &fakeTx{kept: &newer}
		if _, err := f.Fence(ctx, tx, nil, w, 5); !errors.Is(err, fencing.ErrSlotForgotten) || len(tx.stmts) != 2 {
			t.Fatalf("forgotten slot (backfill %v): err = %v after %v, want ErrSlotForgotten after the two reads", w.Backfill, err, tx.stmts)
		}
	}
	if _, err := f.Fence(ctx, &fakeTx{}, nil, Writer{Resource: "r", Token: 4}, 9); !errors.Is(err, fencing.ErrStaleWriter) {
		t.Fatalf("no slot, lower token: err = %v, want ErrStaleWriter", err)
	}
}

// Completing a backfill run stores no token, even when it takes a row
// over; a scheduled run's completion that takes a row over stores its
// token when higher.
func TestCompleteStoresNoBackfillToken(t *testing.T) {
	f := NewFencer("test", func(n int) string { return "?" + strconv.Itoa(n) })
	ctx := context.Background()
	slot := Writer{Resource: "r", Token: 9, Slot: 1767225600, IsSlot: true}
	backfill := slot
	backfill.Backfill = true
	for _, c := range []struct {
		w      Writer
		stored int64
		want   string
	}{
		{slot, 5, "SELECT,UPDATE agora_slots,UPDATE agora_fencing"},
		{backfill, 5, "SELECT,UPDATE agora_slots"},
		{backfill, 12, "SELECT,UPDATE agora_slots"},
	} {
		tx := &fakeTx{row: &fencing.SlotRow{Found: true, Token: 4}}
		claimed, err := f.Complete(ctx, tx, nil, c.w, c.stored)
		if got := strings.Join(tx.stmts, ","); err != nil || !claimed || got != c.want {
			t.Errorf("backfill %v, stored %d: %v, claimed %v, statements %q; want %q", c.w.Backfill, c.stored, err, claimed, got, c.want)
		}
	}
}

func TestCompleteMarksOnlySlotRuns(t *testing.T) {
	f := NewFencer("test", func(n int) string { return "$" + strconv.Itoa(n) })
	ctx := context.Background()
	tx := &fakeTx{}
	if _, err := f.Complete(ctx, tx, nil, Writer{Resource: "r", Token: 9}, 9); err != nil || len(tx.stmts) != 0 {
		t.Fatalf("no slot: %v, statements %v", err, tx.stmts)
	}
	tx = &fakeTx{row: &fencing.SlotRow{Found: true, Token: 9}}
	if _, err := f.Complete(ctx, tx, nil, Writer{Resource: "r", Token: 9, Slot: 60, IsSlot: true}, 9); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tx.stmts, ","); got != "SELECT,UPDATE agora_slots" {
		t.Fatalf("own row: statements %q", got)
	}
	if !strings.Contains(f.completed, "$3") || strings.Contains(f.completed, "?") {
		t.Fatalf("statement in the wrong parameter style: %s", f.completed)
	}
}
