// Package fuzzymatch corrects column names in SoQL that are slightly wrong
// against a dataset's real columns, without ever corrupting a valid query.
//
// Correct parses the query with package soql and looks only at column
// references (never string literals, function names, keywords, aliases the
// query defines, or system fields such as :id). A reference that already
// names a column (Socrata compares names case-insensitively, with '-' equal
// to '_') is left alone. Otherwise the closest column by edit distance
// (optimal string alignment: a swap of two neighbours is one edit), ranked
// with github.com/sahilm/fuzzy among equals, replaces it when its normalized
// distance is within the threshold (default 0.4) and no other column is as
// close. Only the byte ranges of corrected references change; the rest of the
// text is byte-identical.
package fuzzymatch

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sahilm/fuzzy"

	"github.com/datasf-mcp/datasf-mcp/soql"
)

// DefaultThreshold is the largest normalized edit distance (edits divided by
// the longer name's length) at which a name is corrected.
const DefaultThreshold = 0.4

// Options configures Correct. The zero value gives the defaults.
type Options struct {
	// Threshold overrides DefaultThreshold when positive.
	Threshold float64
	// Disabled turns correction off: the query is returned unchanged (it is
	// still parsed, so syntax errors are reported).
	Disabled bool
}

// Correction reports one column name that was (or, when WasChanged is false,
// was not) rewritten.
type Correction struct {
	Original   string  `json:"original"`
	Corrected  string  `json:"corrected"`
	WasChanged bool    `json:"wasChanged"`
	Distance   float64 `json:"distance"`
}

// Ambiguity is a name left unchanged because two or more columns are equally
// close to it.
type Ambiguity struct {
	Name       string   `json:"name"`
	Candidates []string `json:"candidates"`
}

// Result is Correct's answer.
type Result struct {
	// Query is the corrected query text.
	Query string
	// Corrections has one entry per distinct name that was changed.
	Corrections []Correction
	// Ambiguous lists names left alone because of ties.
	Ambiguous []Ambiguity
	// Unknown lists names that match no column and have no column within the
	// threshold; they are left alone (the portal will report them).
	Unknown []string
}

// Correct rewrites the column references of query that are slightly wrong
// against columns (the dataset's field names). It returns the parse error
// (a *soql.SyntaxError) when query does not parse.
func Correct(query string, columns []string, opts Options) (Result, error) {
	res := Result{Query: query}
	q, err := soql.Parse(query)
	if err != nil {
		return res, err
	}
	if opts.Disabled || len(columns) == 0 {
		return res, nil
	}
	threshold := opts.Threshold
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	known := make(map[string]bool, len(columns))
	for _, c := range columns {
		known[canonical(c)] = true
	}

	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	seen := map[string]bool{}
	for _, ref := range q.ColumnRefs() {
		if known[canonical(ref.Name)] {
			continue
		}
		m := match(ref.Name, columns, threshold)
		switch {
		case m.best != "":
			edits = append(edits, edit{ref.NamePos.Offset, ref.NamePos.Offset + len(ref.Raw), spell(m.best, ref.Quoted)})
			key := ref.Name + "\x00" + m.best
			if !seen[key] {
				seen[key] = true
				res.Corrections = append(res.Corrections, Correction{Original: ref.Name, Corrected: m.best, WasChanged: true, Distance: m.distance})
			}
		case len(m.ties) > 1:
			if !seen["amb\x00"+ref.Name] {
				seen["amb\x00"+ref.Name] = true
				res.Ambiguous = append(res.Ambiguous, Ambiguity{Name: ref.Name, Candidates: m.ties})
			}
		default:
			if !seen["unk\x00"+ref.Name] {
				seen["unk\x00"+ref.Name] = true
				res.Unknown = append(res.Unknown, ref.Name)
			}
		}
	}
	if len(edits) == 0 {
		return res, nil
	}
	slices.SortFunc(edits, func(a, b edit) int { return cmp.Compare(a.start, b.start) })
	var b strings.Builder
	last := 0
	for _, e := range edits {
		b.WriteString(query[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.WriteString(query[last:])
	res.Query = b.String()
	return res, nil
}

// canonical is how Socrata compares column names: case-insensitively, with
// '-' equal to '_'.
func canonical(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "-", "_")
}

// normalize is canonical with spaces also read as underscores, for distances.
func normalize(s string) string {
	return strings.ReplaceAll(canonical(s), " ", "_")
}

var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// spell writes a column name as an identifier: bare when it can be, else
// backtick-quoted (and always quoted when the original was).
func spell(name string, quoted bool) string {
	if !quoted && plainIdent.MatchString(name) && !soql.IsReserved(name) {
		return name
	}
	return "`" + name + "`"
}

type matchResult struct {
	best     string
	distance float64
	ties     []string
}

// match finds the unique closest column within threshold.
func match(name string, columns []string, threshold float64) matchResult {
	n := normalize(name)
	bestD := -1
	var ties []string
	for _, c := range columns {
		d := Distance(n, normalize(c))
		longer := max(utf8.RuneCountInString(n), utf8.RuneCountInString(c))
		if longer == 0 || float64(d)/float64(longer) > threshold {
			continue
		}
		switch {
		case bestD < 0 || d < bestD:
			bestD, ties = d, []string{c}
		case d == bestD:
			ties = append(ties, c)
		}
	}
	if len(ties) == 1 {
		longer := max(utf8.RuneCountInString(n), utf8.RuneCountInString(ties[0]))
		return matchResult{best: ties[0], distance: float64(bestD) / float64(longer)}
	}
	return matchResult{ties: rank(name, ties)}
}

// rank orders names by sahilm/fuzzy's score for pattern (best first), then
// alphabetically.
func rank(pattern string, names []string) []string {
	score := map[string]int{}
	for _, m := range fuzzy.Find(normalize(pattern), names) {
		score[m.Str] = m.Score
	}
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int {
		if c := cmp.Compare(score[b], score[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return out
}

// Closest returns up to n columns closest to name by edit distance, ties
// ranked by sahilm/fuzzy, for "did you mean" messages. It applies no
// threshold beyond dropping columns that share nothing with name.
func Closest(name string, columns []string, n int) []string {
	if n <= 0 || len(columns) == 0 {
		return nil
	}
	nn := normalize(name)
	type scored struct {
		col string
		d   float64
	}
	fz := map[string]int{}
	for _, m := range fuzzy.Find(nn, columns) {
		fz[m.Str] = m.Score
	}
	var all []scored
	for _, c := range columns {
		longer := max(utf8.RuneCountInString(nn), utf8.RuneCountInString(c), 1)
		d := float64(Distance(nn, normalize(c))) / float64(longer)
		if d >= 1 && fz[c] == 0 {
			continue
		}
		all = append(all, scored{c, d})
	}
	slices.SortStableFunc(all, func(a, b scored) int {
		if c := cmp.Compare(a.d, b.d); c != 0 {
			return c
		}
		return cmp.Compare(fz[b.col], fz[a.col])
	})
	out := make([]string, 0, min(n, len(all)))
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.col)
	}
	return out
}

// Distance is the optimal string alignment distance between a and b, in
// runes: insertions, deletions, substitutions and swaps of two neighbouring
// runes each cost one.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) == 0 {
		return len(rb)
	}
	if len(rb) == 0 {
		return len(ra)
	}
	// Three rolling rows: i-2, i-1, i.
	prev2 := make([]int, len(rb)+1)
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
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
