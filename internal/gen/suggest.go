package gen

import "github.com/agora-etl/agora/internal/typo"

// didYouMean formats typo.Closest's suggestion for an error message, with
// prefix before the suggested word, or returns "".
func didYouMean(word string, candidates []string, prefix string) string {
	if s := typo.Closest(word, candidates); s != "" {
		return " (did you mean " + prefix + s + "?)"
	}
	return ""
}
