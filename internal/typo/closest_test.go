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
