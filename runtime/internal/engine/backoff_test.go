package engine

import (
	"testing"
	"time"
)

func TestBackoffDelaySequence(t *testing.T) {
	want := []time.Duration{60 * time.Second, 120 * time.Second, 240 * time.Second, 480 * time.Second, 600 * time.Second, 600 * time.Second}
	for i, w := range want {
		if got := BackoffDelay(0, i+1); got != w {
			t.Errorf("failure %d: got %v, want %v", i+1, got, w)
		}
	}
}

func TestBackoffDelayEdges(t *testing.T) {
	cases := []struct {
		name     string
		base     time.Duration
		failures int
		want     time.Duration
	}{
		{"custom base", 30 * time.Second, 3, 120 * time.Second},
		{"zero failures treated as first", time.Second, 0, time.Second},
		{"base above cap", time.Hour, 1, MaxErrorBackoff},
		{"huge count does not overflow", time.Second, 1 << 20, MaxErrorBackoff},
		{"negative base means default", -time.Second, 2, 2 * DefaultErrorBackoff},
	}
	for _, c := range cases {
		if got := BackoffDelay(c.base, c.failures); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
