package gen

import "testing"

func TestDidYouMean(t *testing.T) {
	keys := []string{"every", "cron", "continuous", "once", "id", "backoff", "max_errors", "deadline"}
	for word, want := range map[string]string{
		"evry": "every", "backof": "backoff", "max_error": "max_errors", "crno": "cron",
		"onec": "once", "di": "id", "continous": "continuous",
		"dedline": "deadline", "deadlines": "deadline", "dealine": "deadline",
	} {
		if got := didYouMean(word, keys, ""); got != " (did you mean "+want+"?)" {
			t.Errorf("didYouMean(%q) = %q, want %q", word, got, want)
		}
	}
	for _, word := range []string{"timeout", "x"} {
		if got := didYouMean(word, keys, ""); got != "" {
			t.Errorf("didYouMean(%q) = %q, want none", word, got)
		}
	}
	if got := didYouMean("schedul", []string{"schedule", "worker"}, "//agora:"); got != " (did you mean //agora:schedule?)" {
		t.Errorf("didYouMean with a prefix = %q", got)
	}
}
