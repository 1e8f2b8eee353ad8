package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agora-etl/agora/runtime/notify"
)

// notifyCollector serves the counts of a notifier that keeps them, such
// as notify.Webhook: the notifier links no metrics library of its own.
type notifyCollector struct {
	n interface{ Stats() notify.Stats }
}

var (
	descSent = prometheus.NewDesc("agora_notify_sent_total",
		"Notification events the webhook accepted.", nil, nil)
	descFailed = prometheus.NewDesc("agora_notify_failures_total",
		"Notification events given up after every attempt failed.", nil, nil)
	descDropped = prometheus.NewDesc("agora_notify_dropped_total",
		"Notification events dropped because the queue was full or the worker was stopping.", nil, nil)
)

// Describe sends the notifier's metric descriptors.
func (c notifyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descSent
	ch <- descFailed
	ch <- descDropped
}

// Collect sends the notifier's counts.
func (c notifyCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.n.Stats()
	ch <- prometheus.MustNewConstMetric(descSent, prometheus.CounterValue, float64(s.Sent))
	ch <- prometheus.MustNewConstMetric(descFailed, prometheus.CounterValue, float64(s.Failed))
	ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(s.Dropped))
}
