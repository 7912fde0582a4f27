package fuzzymatch

import (
	"cmp"
	"slices"
	"strings"

	"github.com/sahilm/fuzzy"
)

// candidate is one column considered as the intended spelling of a name.
type candidate struct {
	Column   string  // the column's field name
	Edits    int     // Distance between the normalized name and column
	Distance float64 // Edits divided by the longer one's length in runes
	Score    int     // github.com/sahilm/fuzzy's score (higher is closer); 0 when the name's characters do not all appear in order
	Fuzzy    bool    // whether sahilm/fuzzy matched at all
	// SameLetters: the name has the column's letters in another order (two
	// letters swapped), the likeliest of the one-edit typos.
	SameLetters bool
}

// verdict is what the matcher decided for one name.
type verdict int

const (
	unknown   verdict = iota // no column within the threshold
	corrected                // a unique closest column
	ambiguous                // two or more columns equally close
)

// decision is the outcome of matching one name.
type decision struct {
	verdict verdict
	best    candidate   // when corrected; when unknown, the nearest column (if any)
	ties    []candidate // when ambiguous, best first
	why     string      // when unknown or ambiguous with a near column: the rule that refused it
	all     []candidate // every column ranked, when deciding needed them (nothing a typo away)
}

// matcher holds a schema's columns in the forms matching needs. It is built
// once per Correct call and only when some reference does not name a column.
type matcher struct {
	columns   []string // candidates: field names that are not system fields
	norm      [][]rune // normalize(column) as runes
	normStr   []string
	threshold float64
	vocab     map[string]bool // the words of the columns
	s         scratch
}

func newMatcher(columns []string, threshold float64) *matcher {
	m := &matcher{threshold: threshold}
	for _, c := range columns {
		// System fields (:id, :@computed_region_…) are never written in
		// place of a column reference, and a name with a backtick cannot be
		// written as a SoQL identifier at all.
		if c == "" || strings.HasPrefix(c, ":") || strings.Contains(c, "`") {
			continue
		}
		n := normalize(c)
		m.columns = append(m.columns, c)
		m.norm = append(m.norm, []rune(n))
		m.normStr = append(m.normStr, n)
	}
	m.vocab = vocabulary(m.normStr)
	return m
}

// rank scores every column against name (when all is false, only those
// at most maxTypoEdits+1 edits away) and returns them closest first: fewest edits, then the
// higher fuzzy score, then the shorter distance, then by name.
func (m *matcher) rank(name string, all bool) []candidate {
	n := normalize(name)
	nr := []rune(n)
	var out []candidate
	for i, cr := range m.norm {
		longer := max(len(nr), len(cr))
		if longer == 0 {
			continue
		}
		bound := -1
		if !all {
			// Never more edits than a typo plus one (decide looks one
			// edit past the best; the threshold applies to the best only,
			// so that a column as close but shorter still ties).
			bound = maxTypoEdits + 1
		}
		d := m.s.distance(nr, cr, bound)
		dist := float64(d) / float64(longer)
		if !all && d > bound {
			continue
		}
		out = append(out, candidate{Column: m.columns[i], Edits: d, Distance: dist, SameLetters: d > 0 && sameLetters(nr, cr)})
	}
	if len(out) == 0 {
		return nil
	}
	// sahilm/fuzzy ranks the candidates that contain the name's characters
	// in order (typical of a dropped character or a shortened name).
	names := make([]string, len(out))
	for i, c := range out {
		names[i] = normalize(c.Column)
	}
	for _, fm := range fuzzy.FindNoSort(n, names) {
		out[fm.Index].Score = fm.Score
		out[fm.Index].Fuzzy = true
	}
	slices.SortStableFunc(out, compareCandidates)
	return out
}

func compareCandidates(a, b candidate) int {
	if c := cmp.Compare(a.Edits, b.Edits); c != 0 {
		return c
	}
	if a.SameLetters != b.SameLetters {
		if a.SameLetters {
			return -1
		}
		return 1
	}
	if a.Fuzzy != b.Fuzzy {
		if a.Fuzzy {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Distance, b.Distance); c != 0 {
		return c
	}
	return cmp.Compare(a.Column, b.Column)
}

// decide picks the column name should become: the unique column with the
// fewest edits, within the threshold, when the edits make a sure misspelling
// of it (see sureTypo) and no other column is about as close (one edit
// further and also a sure misspelling). Two or more columns with the fewest
// edits make the name ambiguous; anything else leaves it unknown.
func (m *matcher) decide(name string) decision {
	d := m.decideByEdits(name)
	if d.verdict == unknown {
		if c := m.vocabularyMatch(name); c != "" {
			return decision{verdict: corrected, best: candidate{Column: c}, why: whyVocabulary}
		}
	}
	return d
}

func (m *matcher) decideByEdits(name string) decision {
	cands := m.rank(name, false)
	if len(cands) == 0 || cands[0].Edits > maxTypoEdits {
		// Nothing a typo away. Rank every column, to say why (and which
		// columns are closest: Correct reports them).
		cands = m.rank(name, true)
		if len(cands) == 0 || cands[0].Distance > m.threshold {
			d := decision{verdict: unknown, all: cands}
			if len(cands) > 0 {
				d.best, d.why = cands[0], whyFar
			}
			return d
		}
	}
	if len(cands) == 0 {
		return decision{verdict: unknown}
	}
	best := cands[0]
	ties := 1
	for ties < len(cands) && cands[ties].Edits == best.Edits {
		ties++
	}
	if best.Distance > m.threshold {
		return decision{verdict: unknown, best: best, why: whyFar}
	}
	n := normalize(name)
	ok, why := sureTypo(n, normalize(best.Column), best.Edits, m.vocab)
	switch {
	case !ok && ties == 1:
		return decision{verdict: unknown, best: best, why: why}
	case !ok:
		return decision{verdict: unknown, best: best, why: whyTie}
	case ties > 1:
		return decision{verdict: ambiguous, ties: cands[:ties], why: whyTie}
	}
	if best.Edits > 0 && ties < len(cands) && cands[ties].Edits == best.Edits+1 {
		if next, _ := sureTypo(n, normalize(cands[ties].Column), cands[ties].Edits, m.vocab); next {
			return decision{verdict: ambiguous, ties: cands[:ties+1], why: whyTie}
		}
	}
	return decision{verdict: corrected, best: best}
}

// Closest returns up to n columns closest to name, for "did you mean"
// messages: first the columns that share more of name's words (so that
// "district" offers police_district and supervisor_district before point),
// then by fewest edits, ties ranked by sahilm/fuzzy. Unlike Correct it
// applies no threshold; it drops only columns that share neither a word nor
// a character in order with name. System fields are not offered.
func Closest(name string, columns []string, n int) []string {
	if n <= 0 || len(columns) == 0 {
		return nil
	}
	m := newMatcher(columns, DefaultThreshold)
	return m.closest(name, m.rank(name, true), n)
}

// closest orders cands, every column ranked against name, as Closest does
// and returns the first n.
func (m *matcher) closest(name string, cands []candidate, n int) []string {
	cands = slices.Clone(cands)
	nw := words(normalize(name))
	shared := make(map[string]int, len(cands))
	for _, c := range cands {
		shared[c.Column] = sharedWords(nw, words(normalize(c.Column)), &m.s)
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		return cmp.Compare(shared[b.Column], shared[a.Column])
	})
	var out []string
	for _, c := range cands {
		if len(out) == n {
			break
		}
		if shared[c.Column] == 0 && c.Distance >= 1 && !c.Fuzzy {
			continue
		}
		out = append(out, c.Column)
	}
	return out
}

// sameLetters reports whether a and b hold the same letters, in any order.
func sameLetters(a, b []rune) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[rune]int{}
	for _, r := range a {
		count[r]++
	}
	for _, r := range b {
		if count[r]--; count[r] < 0 {
			return false
		}
	}
	return true
}
