package typo

// Closest returns the candidate nearest to word when it is near enough to be
// a likely typo of it, or "" when none is. Near enough is at most two edits,
// or one for words of three characters or fewer, where two edits would make
// almost any short word a match.
func Closest(word string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		if d := Distance(word, c); bestDist < 0 || d < bestDist {
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
