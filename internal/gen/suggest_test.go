package gen

import "testing"

func TestSuggest(t *testing.T) {
	keys := []string{"every", "cron", "continuous", "once", "id", "backoff", "max_errors"}
	for word, want := range map[string]string{
		"evry": "every", "backof": "backoff", "max_error": "max_errors", "crno": "cron",
		"onec": "once", "di": "id", "timeout": "", "x": "", "continous": "continuous",
	} {
		if got := suggest(word, keys); got != want {
			t.Errorf("suggest(%q) = %q, want %q", word, got, want)
		}
	}
}
