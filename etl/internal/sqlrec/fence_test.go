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
// with row.
type fakeTx struct {
	row   *fencing.SlotRow
	stmts []string
}

func (f *fakeTx) QueryRow(_ context.Context, q string, _ []any, dest ...any) (bool, error) {
	f.stmts = append(f.stmts, strings.Fields(q)[0])
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

// The ledger costs a slot run statements on its first write only; runs
// without a slot never read it.
func TestFenceReadsTheLedgerOnTheFirstWriteOnly(t *testing.T) {
	f := NewFencer("test", func(n int) string { return "?" + strconv.Itoa(n) })
	ctx := context.Background()
	slot := Writer{Resource: "r", Token: 9, Slot: 1767225600, IsSlot: true}
	cases := []struct {
		name   string
		w      Writer
		stored int64
		row    *fencing.SlotRow
		want   string
	}{
		{"next batch", slot, 9, nil, ""},
		{"first write, new slot", slot, 5, nil, "SELECT,INSERT agora_slots,DELETE agora_slots,UPDATE agora_fencing"},
		{"first write, take-over", slot, 5, &fencing.SlotRow{Found: true, Token: 4}, "SELECT,UPDATE agora_slots,UPDATE agora_fencing"},
		{"no slot", Writer{Resource: "r", Token: 9}, 5, nil, "UPDATE agora_fencing"},
	}
	for _, c := range cases {
		tx := &fakeTx{row: c.row}
		if err := f.Fence(ctx, tx, nil, c.w, c.stored); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := strings.Join(tx.stmts, ","); got != c.want {
			t.Errorf("%s: statements %q, want %q", c.name, got, c.want)
		}
	}
	tx := &fakeTx{row: &fencing.SlotRow{Found: true, Token: 4, Completed: true}}
	if err := f.Fence(ctx, tx, nil, slot, 5); !errors.Is(err, fencing.ErrSlotDone) || len(tx.stmts) != 1 {
		t.Fatalf("completed slot: err = %v after %v, want ErrSlotDone after the read alone", err, tx.stmts)
	}
}

func TestCompleteMarksOnlySlotRuns(t *testing.T) {
	f := NewFencer("test", func(n int) string { return "$" + strconv.Itoa(n) })
	ctx := context.Background()
	tx := &fakeTx{}
	if err := f.Complete(ctx, tx, nil, Writer{Resource: "r", Token: 9}, 9); err != nil || len(tx.stmts) != 0 {
		t.Fatalf("no slot: %v, statements %v", err, tx.stmts)
	}
	tx = &fakeTx{row: &fencing.SlotRow{Found: true, Token: 9}}
	if err := f.Complete(ctx, tx, nil, Writer{Resource: "r", Token: 9, Slot: 60, IsSlot: true}, 9); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tx.stmts, ","); got != "SELECT,UPDATE agora_slots" {
		t.Fatalf("own row: statements %q", got)
	}
	if !strings.Contains(f.completed, "$3") || strings.Contains(f.completed, "?") {
		t.Fatalf("statement in the wrong parameter style: %s", f.completed)
	}
}
