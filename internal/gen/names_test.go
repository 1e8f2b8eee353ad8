package gen

import "testing"

func TestDefaultID(t *testing.T) {
	for name, want := range map[string]string{
		"BuildOrders":       "orders",
		"BuildOrdersHourly": "orders-hourly",
		"NewHTTPSync":       "http-sync",
		"loadEvents":        "load-events",
		"buildEvents":       "events",
		"Build":             "build",
		"Builder":           "builder",
		"NewsFeed":          "news-feed",
		"ETL2Warehouse":     "etl2-warehouse",
		"sync_users":        "sync-users",
	} {
		if got := DefaultID(name); got != want {
			t.Errorf("DefaultID(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestConstName(t *testing.T) {
	for id, want := range map[string]string{
		"orders-hourly": "PipelineOrdersHourly", "events_consumer": "PipelineEventsConsumer",
		"etl.v2": "PipelineEtlV2", "2fa": "Pipeline2fa", "ordersHourly": "PipelineOrdersHourly",
	} {
		if got := ConstName(id); got != want {
			t.Errorf("ConstName(%q) = %q, want %q", id, got, want)
		}
	}
}
