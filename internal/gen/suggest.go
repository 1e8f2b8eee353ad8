package gen

import "github.com/agora-etl/agora/internal/typo"

// suggest returns the candidate closest to word when it is close enough to be
// a likely typo, or "".
func suggest(word string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := typo.Distance(word, c)
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	limit := 2
	if len(word) <= 3 {
		limit = 1
	}
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}

// didYouMean formats a suggestion for an error message, or returns "".
func didYouMean(word string, candidates []string, prefix string) string {
	if s := suggest(word, candidates); s != "" {
		return " (did you mean " + prefix + s + "?)"
	}
	return ""
}
