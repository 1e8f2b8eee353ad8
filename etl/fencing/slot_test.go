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

// A reprocessing run takes over a slot a lower token completed; every
// other row is judged as for any slot run.
func TestCheckSlotReprocess(t *testing.T) {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	cases := []struct {
		name   string
		row    SlotRow
		action SlotAction
		err    error
	}{
		{"no row", SlotRow{}, SlotInsert, nil},
		{"own row", SlotRow{Found: true, Token: 7}, SlotKeep, nil},
		{"completed by a lower token", SlotRow{Found: true, Token: 5, Completed: true}, SlotTakeOver, nil},
		{"completed by a higher token", SlotRow{Found: true, Token: 9, Completed: true}, SlotKeep, ErrSlotDone},
		{"interrupted lower token", SlotRow{Found: true, Token: 5}, SlotTakeOver, nil},
		{"higher token running", SlotRow{Found: true, Token: 9}, SlotKeep, ErrStaleWriter},
	}
	for _, c := range cases {
		action, err := CheckSlotReprocess(ctx, logger, "orders", 1767225600, 7, c.row)
		if c.err == nil && (err != nil || action != c.action) {
			t.Errorf("%s: got %v, %v; want %v, nil", c.name, action, err, c.action)
		}
		if c.err != nil && !errors.Is(err, c.err) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.err)
		}
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

func TestReprocessOf(t *testing.T) {
	lease := runtime.Lease{RunNumber: 1767225600, Slot: true, FencingToken: 42, Reprocess: true}
	if !ReprocessOf(runtime.ContextWithLease(context.Background(), lease), 42) {
		t.Fatal("a reprocessing slot run is not reprocessing")
	}
	if ReprocessOf(runtime.ContextWithLease(context.Background(), lease), 41) {
		t.Fatal("a token the lease does not carry reprocesses")
	}
	lease.Slot = false
	if ReprocessOf(runtime.ContextWithLease(context.Background(), lease), 42) {
		t.Fatal("a run without a slot reprocesses")
	}
	lease.Slot, lease.Reprocess = true, false
	if ReprocessOf(runtime.ContextWithLease(context.Background(), lease), 42) {
		t.Fatal("a slot run without Reprocess reprocesses")
	}
}
