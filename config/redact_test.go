package config

import "testing"

// TestRedactIsAgorasRule checks the exported rule on the two kinds of
// secret it hides; internal/redact tests the rule itself.
func TestRedactIsAgorasRule(t *testing.T) {
	in := "redis://app:s3cret@cache:6379 host=db password=hunter2"
	if got, want := Redact(in), "redis://app:xxxxx@cache:6379 host=db password=xxxxx"; got != want {
		t.Errorf("Redact(%q) = %q, want %q", in, got, want)
	}
}
