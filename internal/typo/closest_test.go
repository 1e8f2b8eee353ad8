package typo

import "testing"

func TestClosest(t *testing.T) {
	candidates := []string{"health_port", "graceful_shutdown_timeout", "worker_id"}
	for _, tc := range []struct{ word, want string }{
		{"helth_port", "health_port"},
		{"health_prot", "health_port"},
		{"worker_di", "worker_id"},
		{"workerid", "worker_id"},
		{"timeout", ""},
		{"", ""},
	} {
		if got := Closest(tc.word, candidates); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	// Short words get one edit only.
	if got := Closest("dx", []string{"ab", "dq"}); got != "dq" {
		t.Errorf("Closest(dx) = %q, want dq", got)
	}
	if got := Closest("xy", []string{"ab"}); got != "" {
		t.Errorf("Closest(xy) = %q, want none", got)
	}
	if got := Closest("word", nil); got != "" {
		t.Errorf("Closest with no candidates = %q", got)
	}
}

func TestClosestName(t *testing.T) {
	known := []string{"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS", "AGORA_DISTRIBUTED_REDIS_URL", "AGORA_DISTRIBUTED_KEY_PREFIX"}
	for _, tc := range []struct{ name, want string }{
		{"AGORA_DISTRIBUTED_REDIS_ULR", "AGORA_DISTRIBUTED_REDIS_URL"},
		{"AGORA_DISTRIBUTED_LEASE_TTL", "AGORA_DISTRIBUTED_LEASE_TTL_SECONDS"}, // 8 edits, but a prefix
		{"AGORA_DISTRIBUTED_KEYPREFIX", "AGORA_DISTRIBUTED_KEY_PREFIX"},
		{"AGORA_DISTRIBUTED_WORKERS", ""},
		{"", ""},
	} {
		if got := ClosestName(tc.name, known); got != tc.want {
			t.Errorf("ClosestName(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	// Ties go to the first in sort order, whatever the order given.
	for _, c := range [][]string{{"AB_D", "AB_C"}, {"AB_C", "AB_D"}} {
		if got := ClosestName("AB_X", c); got != "AB_C" {
			t.Errorf("ClosestName(AB_X, %v) = %q, want AB_C", c, got)
		}
	}
}
