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

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"schedul", "schedule", 1}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
