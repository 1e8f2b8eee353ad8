package typo

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"schedule", "schedule", 0},
		{"schedul", "schedule", 1},
		{"backof", "backoff", 1},
		{"crno", "cron", 1}, // adjacent swap counts once
		{"every", "evrey", 1},
		{"kitten", "sitting", 3},
		{"LEASE_TTL", "LEASE_TTL_SECONDS", 8},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}
