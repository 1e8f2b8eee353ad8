package fencing

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

func TestCheckSlotRules(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	ctx := context.Background()
	cases := []struct {
		name   string
		row    SlotRow
		action SlotAction
		err    error
	}{
		{"no row", SlotRow{}, SlotInsert, nil},
		{"own row", SlotRow{Found: true, Token: 7}, SlotKeep, nil},
		{"own row completed", SlotRow{Found: true, Token: 7, Completed: true}, SlotKeep, nil},
		{"completed by a lower token", SlotRow{Found: true, Token: 5, Completed: true}, SlotKeep, ErrSlotDone},
		{"completed by a higher token", SlotRow{Found: true, Token: 9, Completed: true}, SlotKeep, ErrSlotDone},
		{"interrupted lower token", SlotRow{Found: true, Token: 5}, SlotTakeOver, nil},
		{"higher token running", SlotRow{Found: true, Token: 9}, SlotKeep, ErrStaleWriter},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done, stale := SlotDoneRefusals(), Refusals()
			action, err := CheckSlot(ctx, logger, "orders", 1767225600, 7, c.row)
			if c.err == nil && (err != nil || action != c.action) {
				t.Fatalf("got %v, %v; want %v, nil", action, err, c.action)
			}
			if c.err != nil && !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			wantDone, wantStale := int64(0), int64(0)
			switch c.err {
			case ErrSlotDone:
				wantDone = 1
			case ErrStaleWriter:
				wantStale = 1
			}
			if SlotDoneRefusals()-done != wantDone || Refusals()-stale != wantStale {
				t.Fatalf("counted %d slot-done and %d stale refusals, want %d and %d",
					SlotDoneRefusals()-done, Refusals()-stale, wantDone, wantStale)
			}
		})
	}
	if !strings.Contains(logs.String(), "level=WARN msg=\"write refused: another run already completed this slot\"") ||
		!strings.Contains(logs.String(), "fencing_token=7 completed_by_token=5") {
		t.Fatalf("the slot-done refusal log lacks its level or both tokens:\n%s", logs.String())
	}
}

func TestSlotDoneErrorMatchesSlotCompleted(t *testing.T) {
	err := error(&SlotDoneError{Resource: "orders", Slot: 1767225600, Token: 9, CompletedBy: 5})
	if !errors.Is(err, ErrSlotDone) || !errors.Is(err, runtime.ErrSlotCompleted) || errors.Is(err, ErrStaleWriter) {
		t.Fatalf("%v: wrong matches", err)
	}
	for _, want := range []string{`"orders"`, "slot 1767225600 (2026-01-01T00:00:00Z)", "run token 9", "completed by token 5"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err.Error(), want)
		}
	}
	//lint:ignore SA1032 the order is the point: the runtime's sentinel held as an error must not match
	if errors.Is(runtime.ErrSlotCompleted, ErrSlotDone) {
		t.Error("runtime.ErrSlotCompleted matches ErrSlotDone: only the fencing refusal should")
	}
}

func TestSlotOf(t *testing.T) {
	slot := runtime.ContextWithLease(context.Background(), runtime.Lease{RunNumber: 1767225600, Slot: true, FencingToken: 42})
	if s, ok := SlotOf(slot, 42); !ok || s != 1767225600 {
		t.Fatalf("slot run: %d %v", s, ok)
	}
	if _, ok := SlotOf(slot, 41); ok {
		t.Fatal("a token the lease does not carry is taken for the slot run's")
	}
	continuous := runtime.ContextWithLease(context.Background(), runtime.Lease{RunNumber: 42, FencingToken: 42})
	if _, ok := SlotOf(continuous, 42); ok {
		t.Fatal("a continuous run is taken for a slot run")
	}
	if _, ok := SlotOf(context.Background(), 42); ok {
		t.Fatal("no lease is taken for a slot run")
	}
}

// A backfill run is judged by its slot's row and the stored token alone:
// it leaves a row the resource's newest token writer holds (ErrSlotBusy),
// takes over other unfinished rows of lower tokens, and, reprocessing, a
// row a lower token completed.
func TestCheckSlotBackfill(t *testing.T) {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	cases := []struct {
		name      string
		row       SlotRow
		stored    int64
		reprocess bool
		action    SlotAction
		err       error
	}{
		{"no row", SlotRow{}, 12, false, SlotInsert, nil},
		{"own row", SlotRow{Found: true, Token: 7}, 12, false, SlotKeep, nil},
		{"own row, below nothing stored", SlotRow{Found: true, Token: 7}, 0, false, SlotKeep, nil},
		{"completed by a lower token", SlotRow{Found: true, Token: 5, Completed: true}, 5, false, SlotKeep, ErrSlotDone},
		{"completed by a higher token", SlotRow{Found: true, Token: 9, Completed: true}, 9, false, SlotKeep, ErrSlotDone},
		{"reprocess, completed by a lower token", SlotRow{Found: true, Token: 5, Completed: true}, 5, true, SlotTakeOver, nil},
		{"reprocess, completed by a higher token", SlotRow{Found: true, Token: 9, Completed: true}, 9, true, SlotKeep, ErrSlotDone},
		{"unfinished lower token, the stored one", SlotRow{Found: true, Token: 5}, 5, false, SlotKeep, ErrSlotBusy},
		{"reprocess, unfinished lower token, the stored one", SlotRow{Found: true, Token: 5}, 5, true, SlotKeep, ErrSlotBusy},
		{"unfinished lower token, superseded", SlotRow{Found: true, Token: 5}, 6, false, SlotTakeOver, nil},
		{"unfinished lower token, a backfill's", SlotRow{Found: true, Token: 5}, 3, false, SlotTakeOver, nil},
		{"unfinished higher token", SlotRow{Found: true, Token: 9}, 9, false, SlotKeep, ErrStaleWriter},
	}
	for _, c := range cases {
		action, err := CheckSlotBackfill(ctx, logger, "orders", 1767225600, 7, c.stored, c.reprocess, c.row)
		if c.err == nil && (err != nil || action != c.action) {
			t.Errorf("%s: got %v, %v; want %v, nil", c.name, action, err, c.action)
		}
		if c.err != nil && !errors.Is(err, c.err) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.err)
		}
	}
}

// The busy-slot refusal names the resource, the slot in RFC 3339 and both
// tokens, is counted, and matches neither a completed slot nor a stale
// writer.
func TestSlotBusyError(t *testing.T) {
	before := SlotBusyRefusals()
	_, err := CheckSlotBackfill(context.Background(), slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)), "orders", 1767225600, 9, 4, false, SlotRow{Found: true, Token: 4})
	var be *SlotBusyError
	if !errors.Is(err, ErrSlotBusy) || !errors.As(err, &be) || be.Resource != "orders" || be.Slot != 1767225600 || be.Token != 9 || be.Busy != 4 {
		t.Fatalf("err = %v, want a SlotBusyError", err)
	}
	if errors.Is(err, runtime.ErrSlotCompleted) || errors.Is(err, ErrSlotDone) || errors.Is(err, ErrStaleWriter) || errors.Is(err, runtime.ErrStaleWrite) || errors.Is(err, ErrSlotForgotten) {
		t.Fatalf("%v matches another refusal", err)
	}
	for _, want := range []string{`"orders"`, "2026-01-01T00:00:00Z", "run token 9", "the slot's run with token 4 may still be writing it; the backfill leaves it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err.Error(), want)
		}
	}
	if got := SlotBusyRefusals() - before; got != 1 {
		t.Errorf("counted %d busy-slot refusals, want 1", got)
	}
}

// The forgotten-slot refusal applies only to a full ledger whose oldest
// kept slot is newer than the run's; its error names the resource and
// both slots in RFC 3339, and fails the run as neither a completed slot
// nor a stale writer.
func TestCheckForgotten(t *testing.T) {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	const slot = 1767225600
	if err := CheckForgotten(ctx, logger, "orders", slot, 7, slot+60, false); err != nil {
		t.Fatalf("a ledger that is not full: %v", err)
	}
	if err := CheckForgotten(ctx, logger, "orders", slot, 7, slot-60, true); err != nil {
		t.Fatalf("a slot newer than the oldest kept: %v", err)
	}
	before := SlotForgottenRefusals()
	err := CheckForgotten(ctx, logger, "orders", slot, 7, slot+60, true)
	var fe *SlotForgottenError
	if !errors.Is(err, ErrSlotForgotten) || !errors.As(err, &fe) || fe.Slot != slot || fe.Oldest != slot+60 || fe.Token != 7 {
		t.Fatalf("err = %v, want a SlotForgottenError", err)
	}
	if errors.Is(err, runtime.ErrSlotCompleted) || errors.Is(err, ErrSlotDone) || errors.Is(err, ErrStaleWriter) || errors.Is(err, runtime.ErrStaleWrite) {
		t.Fatalf("%v matches another refusal", err)
	}
	for _, want := range []string{`"orders"`, "slot 2026-01-01T00:00:00Z", "oldest 2026-01-01T00:01:00Z", "1024 newest"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err.Error(), want)
		}
	}
	if SlotForgottenRefusals()-before != 1 {
		t.Errorf("counted %d forgotten-slot refusals, want 1", SlotForgottenRefusals()-before)
	}
}

func TestBackfillAndReprocessOf(t *testing.T) {
	ctx := func(l runtime.Lease) context.Context { return runtime.ContextWithLease(context.Background(), l) }
	lease := runtime.Lease{RunNumber: 1767225600, Slot: true, FencingToken: 42}
	if BackfillOf(ctx(lease), 42) || ReprocessOf(ctx(lease), 42) {
		t.Fatal("a scheduled slot run is a backfill run")
	}
	lease.Backfill = true
	if !BackfillOf(ctx(lease), 42) || ReprocessOf(ctx(lease), 42) {
		t.Fatal("a backfill run: BackfillOf false or ReprocessOf true")
	}
	if BackfillOf(ctx(lease), 41) {
		t.Fatal("a token the lease does not carry is a backfill's")
	}
	lease.Reprocess = true
	if !BackfillOf(ctx(lease), 42) || !ReprocessOf(ctx(lease), 42) {
		t.Fatal("a reprocessing backfill run is not both")
	}
	if ReprocessOf(ctx(lease), 41) {
		t.Fatal("a token the lease does not carry reprocesses")
	}
	lease.Backfill = false
	if !BackfillOf(ctx(lease), 42) {
		t.Fatal("Reprocess without Backfill does not count as a backfill")
	}
	lease.Slot = false
	if BackfillOf(ctx(lease), 42) || ReprocessOf(ctx(lease), 42) {
		t.Fatal("a run without a slot is a backfill run")
	}
}
