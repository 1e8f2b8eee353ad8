package fencing

import (
	"context"
	"testing"

	"github.com/agora-etl/agora/runtime/metrics"
)

// A pool given RefusalCollector serves the process's refusal counts.
func TestPoolMetricsServeRefusals(t *testing.T) {
	ctx := context.Background()
	_, _ = CheckSlot(ctx, nil, "m", 1767225600, 9, SlotRow{Found: true, Token: 5, Completed: true})
	_ = Check(ctx, nil, "m", 1, 2)
	_ = CheckForgotten(ctx, nil, "m", 1767225600, 9, 1767225660, true)
	_, _ = CheckSlotBackfill(ctx, nil, "m", 1767225600, 9, 5, false, SlotRow{Found: true, Token: 5})
	fams, err := metrics.New(metrics.WithCollectors(RefusalCollector())).Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != "agora_fencing_refusals_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					got[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	if got["slot_done"] != float64(SlotDoneRefusals()) || got["stale_writer"] != float64(Refusals()) || got["slot_done"] < 1 || got["stale_writer"] < 1 ||
		got["slot_forgotten"] != float64(SlotForgottenRefusals()) || got["slot_forgotten"] < 1 ||
		got["slot_busy"] != float64(SlotBusyRefusals()) || got["slot_busy"] < 1 {
		t.Fatalf("agora_fencing_refusals_total %v, want slot_done %d and stale_writer %d", got, SlotDoneRefusals(), Refusals())
	}
}
