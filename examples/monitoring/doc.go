// Package monitoring holds the example Prometheus scrape configurations
// (prometheus.yml with fixed targets, prometheus-kubernetes.yml with pod
// discovery), Grafana dashboard (grafana-dashboard.json) and alerting
// rules (alerts.yml, unit-tested by alerts_test.yml) for the
// metrics agora workers serve on /metrics. Its tests check that every
// metric the dashboard and the rules query is one a worker exports, that
// docs/operating.md's table names every metric a worker exports, and run
// promtool check rules and promtool test rules on the rules and promtool
// check config on the scrape configurations.
package monitoring
