package fencing

import (
	"github.com/prometheus/client_golang/prometheus"
)

// descRefusals is the process's fenced-write refusals, by reason.
var descRefusals = prometheus.NewDesc("agora_fencing_refusals_total",
	"Fenced database writes this process refused, by reason: stale_writer (a newer fencing token had written to the resource), slot_done (another run had completed the slot), slot_forgotten (the slot is older than every slot the ledger keeps) or slot_busy (a backfill run's slot may still be written by its scheduled run).",
	[]string{"reason"}, nil)

// refusalCollector exposes Refusals, SlotDoneRefusals,
// SlotForgottenRefusals and SlotBusyRefusals.
type refusalCollector struct{}

func (refusalCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descRefusals }

func (refusalCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descRefusals, prometheus.CounterValue, float64(Refusals()), "stale_writer")
	ch <- prometheus.MustNewConstMetric(descRefusals, prometheus.CounterValue, float64(SlotDoneRefusals()), "slot_done")
	ch <- prometheus.MustNewConstMetric(descRefusals, prometheus.CounterValue, float64(SlotForgottenRefusals()), "slot_forgotten")
	ch <- prometheus.MustNewConstMetric(descRefusals, prometheus.CounterValue, float64(SlotBusyRefusals()), "slot_busy")
}

// RefusalCollector returns the collector of agora_fencing_refusals_total.
// The counters are the process's, whichever pool runs the writes, so a
// program gives it to the pools that serve them:
// metrics.WithCollectors(fencing.RefusalCollector()) (package
// runtime/metrics) or, in a worker's main, worker.WithCollectors.
// config's pools have it.
func RefusalCollector() prometheus.Collector { return refusalCollector{} }
