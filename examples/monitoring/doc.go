// Package monitoring holds the example Prometheus scrape configuration
// (prometheus.yml), Grafana dashboard (grafana-dashboard.json) and alerting
// rules (alerts.yml, unit-tested by alerts_test.yml) for the
// metrics agora workers serve on /metrics. Its tests check that every
// metric the dashboard and the rules query is one a worker exports, and
// run promtool check rules and promtool test rules on the rules.
package monitoring
