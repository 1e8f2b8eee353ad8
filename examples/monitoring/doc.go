// Package monitoring holds the example Prometheus scrape configuration
// (prometheus.yml) and Grafana dashboard (grafana-dashboard.json) for the
// metrics agora workers serve on /metrics. Its test checks that every
// metric the dashboard queries is one a worker exports.
package monitoring
