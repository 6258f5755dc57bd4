// Package suggest finds the name a user probably meant, for "did you mean"
// in errors about unknown columns and keys.
package suggest

import "strings"

// Closest returns the name in names nearest to s by edit distance, ignoring
// case, when it is near enough to be a likely typo (at most 2 edits, or a
// third of the length of s for long names); otherwise "".
func Closest(s string, names []string) string {
	best, bestD := "", 1<<30
	ls := strings.ToLower(s)
	for _, n := range names {
		if d := distance(ls, strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	if bestD <= max(2, len([]rune(s))/3) {
		return best
	}
	return ""
}

// distance is the Levenshtein distance between a and b, in runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
