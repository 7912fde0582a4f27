package fuzzymatch

import (
	"strings"
	"unicode/utf8"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// Distance is the optimal string alignment distance between a and b, counted
// in runes: inserting, deleting or replacing one rune, or swapping two
// neighbouring runes, each costs one edit. (It is the Damerau-Levenshtein
// distance restricted so that no substring is edited twice.)
func Distance(a, b string) int {
	var s scratch
	return s.distance([]rune(a), []rune(b), -1)
}

// Normalized is Distance(a, b) divided by the longer string's length in
// runes: 0 for equal strings, at most 1. Two empty strings are at distance 0.
func Normalized(a, b string) float64 {
	n := max(utf8.RuneCountInString(a), utf8.RuneCountInString(b))
	if n == 0 {
		return 0
	}
	return float64(Distance(a, b)) / float64(n)
}

// Canonical is how Socrata compares column names: case-insensitively, with
// '-' equal to '_'. Two names with the same canonical form name the same
// column.
func Canonical(s string) string { return soql.CanonicalName(s) }

// normalize is Canonical with white space also read as '_', the form that
// distances are measured on (a model often writes "incident category" for
// incident_category).
func normalize(s string) string {
	s = Canonical(s)
	if strings.IndexFunc(s, isSpace) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isSpace(r) {
			return '_'
		}
		return r
	}, s)
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// scratch holds the three rolling rows of the distance table so that one
// Correct call reuses them for every column.
type scratch struct {
	prev2, prev, cur []int
}

// distance computes the optimal string alignment distance of a and b. When
// bound >= 0 it may stop early and return any value > bound once the distance
// is known to exceed bound.
func (s *scratch) distance(a, b []rune, bound int) int {
	if len(a) == 0 {
		return len(b)
	}
	if len(b) == 0 {
		return len(a)
	}
	if bound >= 0 && abs(len(a)-len(b)) > bound {
		return bound + 1
	}
	n := len(b) + 1
	if cap(s.cur) < n {
		s.prev2, s.prev, s.cur = make([]int, n), make([]int, n), make([]int, n)
	}
	prev2, prev, cur := s.prev2[:n], s.prev[:n], s.cur[:n]
	for j := range prev {
		prev[j] = j
	}
	prevMin := 0 // smallest cell of row i-1
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
			rowMin = min(rowMin, d)
		}
		// A cell of row i+1 comes from row i, row i-1 (a swap) or its left
		// neighbour, so once two neighbouring rows exceed the bound, every
		// later row does too.
		if bound >= 0 && rowMin > bound && prevMin > bound {
			return bound + 1
		}
		prevMin = rowMin
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
