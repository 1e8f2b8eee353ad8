package typo

import "strings"

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

// ClosestName returns the candidate nearest to name among long structured
// names (settings variables such as AGORA_DISTRIBUTED_LEASE_TTL_SECONDS),
// or "" when none is near: at most three edits away, or one name extending
// the other (LEASE_TTL for LEASE_TTL_SECONDS) however far apart. Between
// equally near candidates the first in sort order wins, so the answer does
// not depend on the order of candidates.
func ClosestName(name string, candidates []string) string {
	if name == "" {
		return ""
	}
	best, bestDist := "", -1
	for _, c := range candidates {
		d := Distance(name, c)
		if d > 3 && !strings.HasPrefix(c, name) && !strings.HasPrefix(name, c) {
			continue
		}
		if bestDist < 0 || d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	return best
}
