package distributed

import (
	"testing"
	"time"
)

// TestRerunInterruptedGrantsTheDeadHoldersSlotFirst: a takes slot S and
// dies (its record is gone, its lease still in Redis). b, which re-runs
// interrupted slots, asking for S+60 gets S; once S is completed, S+60.
// c, which does not, takes the lease over for the slot it asked for.
func TestRerunInterruptedGrantsTheDeadHoldersSlotFirst(t *testing.T) {
	for _, rerun := range []bool{true, false} {
		r := newReal(t)
		a := r.started(r.options(10*time.Second), "a")
		b, err := NewRedisWorkerCoordinator(r.options(10 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		if rerun {
			b.SetRerunInterrupted([]string{"p"})
		}
		if err := b.Start(ctx, "b", []string{"p"}); err != nil {
			t.Fatal(err)
		}
		slot := time.Now().Unix() - 60 // and slot+60 has begun
		mustAcquire(t, a, "p", slot)
		if err := r.client(0).Del(ctx, a.recordKey).Err(); err != nil { // a died
			t.Fatal(err)
		}
		got := mustAcquire(t, b, "p", slot+60)
		if !rerun {
			if got.RunNumber != slot+60 {
				t.Fatalf("without rerun: granted run %d, want the slot asked for %d", got.RunNumber, slot+60)
			}
			continue
		}
		if got.RunNumber != slot {
			t.Fatalf("granted run %d, want the interrupted slot %d", got.RunNumber, slot)
		}
		if err := b.CompleteLease(ctx, "p"); err != nil {
			t.Fatal(err)
		}
		if next := mustAcquire(t, b, "p", slot+60); next.RunNumber != slot+60 || next.FencingToken <= got.FencingToken {
			t.Fatalf("after the re-run: %+v, want slot %d with a higher token", next, slot+60)
		}
		if n := b.Status().(CoordinatorStatus).Reruns; n != 1 {
			t.Errorf("Reruns = %d, want 1", n)
		}
	}
}
