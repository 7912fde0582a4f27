package properties_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// The fuzzy threshold as the design documents it: a name is within the
// threshold of a field when their edit distance divided by the longer
// length is at most 0.4, i.e. 5*edits <= 2*longer (exact in integers).
func withinThreshold(name, field string) bool {
	a, b := fuzzyNorm(name), fuzzyNorm(field)
	longer := max(utf8.RuneCountInString(a), utf8.RuneCountInString(b))
	return 5*fuzzymatch.Distance(a, b) <= 2*longer
}

// fuzzyNorm is the documented comparison form: lower case, '-' and white
// space read as '_'.
func fuzzyNorm(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || unicode.IsSpace(r) {
			return '_'
		}
		return unicode.ToLower(r)
	}, s)
}

// sameColumn is Socrata's name equality: case-insensitive, '-' equal to '_'.
func sameColumn(a, b string) bool {
	return strings.ReplaceAll(strings.ToLower(a), "-", "_") == strings.ReplaceAll(strings.ToLower(b), "-", "_")
}

var bareIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// contextualWords are read as keywords in some places (CASE … END, NULLS
// FIRST), so generated names avoid them.
var contextualWords = map[string]bool{"case": true, "when": true, "then": true, "else": true, "end": true, "nulls": true, "first": true, "last": true}

func usableBare(name string) bool {
	return bareIdent.MatchString(name) && !soql.IsReserved(name) && !contextualWords[strings.ToLower(name)]
}

// refSlot is one column reference written into a generated query.
type refSlot struct {
	start, end int    // byte range of the reference as written
	name       string // the name (unquoted)
	quoted     bool
}

// fuzzCase is a schema and a query referencing it.
type fuzzCase struct {
	columns []string
	query   string
	refs    []refSlot
}

// want is the documented decision for one reference: "" when it must stay
// as written, else the field it must become. ambiguous reports two or more
// fields equally close within the threshold (left alone).
func (fc *fuzzCase) want(ref refSlot) (field string, inThreshold []string, ambiguous bool) {
	for _, c := range fc.columns {
		if sameColumn(ref.name, c) {
			return "", nil, false
		}
	}
	best := -1
	var bestCols []string
	for _, c := range fc.columns {
		if !withinThreshold(ref.name, c) {
			continue
		}
		inThreshold = append(inThreshold, c)
		d := fuzzymatch.Distance(fuzzyNorm(ref.name), fuzzyNorm(c))
		switch {
		case best < 0 || d < best:
			best, bestCols = d, []string{c}
		case d == best:
			bestCols = append(bestCols, c)
		}
	}
	switch len(bestCols) {
	case 0:
		return "", nil, false
	case 1:
		return bestCols[0], inThreshold, false
	}
	return "", inThreshold, true
}

// spellRef is how a corrected reference is written: bare, or backtick-quoted
// when the original was quoted.
func spellRef(field string, quoted bool) string {
	if quoted {
		return "`" + field + "`"
	}
	return field
}

// genColumnName draws identifier-like names; a small alphabet makes near
// neighbours (and ties) common.
var genColumnName = rapid.OneOf(
	rapid.StringMatching(`[a-c][a-c_]{2,4}`),
	rapid.StringMatching(`[a-e][a-e_]{2,7}`),
	rapid.StringMatching(`[a-z][a-z0-9_]{2,14}`),
).Filter(usableBare)

// mutate applies 1 to 3 random edits (replace, insert, delete, swap).
func mutate(t *rapid.T, s string) string {
	r := []rune(s)
	alphabet := []rune("abcdeqxz_1")
	for range rapid.IntRange(1, 3).Draw(t, "edits") {
		if len(r) == 0 {
			r = append(r, 'a')
		}
		i := rapid.IntRange(0, len(r)-1).Draw(t, "at")
		c := rapid.SampledFrom(alphabet).Draw(t, "char")
		switch rapid.IntRange(0, 3).Draw(t, "edit") {
		case 0:
			r[i] = c
		case 1:
			r = slices.Insert(r, i, c)
		case 2:
			r = slices.Delete(r, i, i+1)
		default:
			if i+1 < len(r) {
				r[i], r[i+1] = r[i+1], r[i]
			}
		}
	}
	if len(r) == 0 {
		return "a"
	}
	return string(r)
}

// genFuzzCase draws a schema of 1..8 distinct columns and a query whose
// column references are exact names (any case), misspellings of them
// (1 to 3 edits), unrelated names, and backtick-quoted forms (also with
// white space), placed in SELECT items, WHERE conditions (next to string
// literals and comments that hold column-like words) and ORDER BY.
func genFuzzCase(t *rapid.T) *fuzzCase {
	fc := &fuzzCase{}
	fc.columns = rapid.SliceOfNDistinct(genColumnName, 1, 8, func(s string) string {
		return strings.ReplaceAll(strings.ToLower(s), "-", "_")
	}).Draw(t, "columns")

	genRef := func() (name string, quoted bool) {
		col := rapid.SampledFrom(fc.columns).Draw(t, "of")
		switch rapid.IntRange(0, 5).Draw(t, "ref kind") {
		case 0: // exact, maybe in another case
			if rapid.Bool().Draw(t, "upper") {
				name = strings.ToUpper(col)
			} else {
				name = col
			}
		case 1, 2: // misspelt
			name = mutate(t, col)
		case 3: // unrelated
			name = genColumnName.Draw(t, "unrelated")
		case 4: // quoted, with white space for an underscore
			name = strings.Replace(mutate(t, col), "_", " ", 1)
			quoted = true
		default:
			name, quoted = col, true
		}
		if !quoted && !usableBare(name) {
			quoted = true
		}
		if quoted && strings.ContainsAny(name, "`") {
			name = col
		}
		return name, quoted
	}

	var b strings.Builder
	ref := func() {
		name, quoted := genRef()
		start := b.Len()
		b.WriteString(spellRef(name, quoted))
		fc.refs = append(fc.refs, refSlot{start: start, end: b.Len(), name: name, quoted: quoted})
	}
	literal := func() {
		// A string literal holding column-like words, which must never change.
		words := []string{rapid.SampledFrom(fc.columns).Draw(t, "lit col"), mutate(t, rapid.SampledFrom(fc.columns).Draw(t, "lit of"))}
		b.WriteString("'" + strings.Join(words, " ") + "'")
	}

	b.WriteString(rapid.SampledFrom([]string{"SELECT ", "select ", "SELECT  "}).Draw(t, "select"))
	for i := range rapid.IntRange(1, 3).Draw(t, "items") {
		if i > 0 {
			b.WriteString(", ")
		}
		switch rapid.IntRange(0, 4).Draw(t, "item") {
		case 0:
			b.WriteString("upper(")
			ref()
			b.WriteString(")")
		case 1:
			ref()
			b.WriteString(" + 1")
		case 2:
			b.WriteString(":id, ")
			ref()
		default:
			ref()
		}
	}
	if rapid.Bool().Draw(t, "where") {
		b.WriteString(" WHERE ")
		for i := range rapid.IntRange(1, 3).Draw(t, "conds") {
			if i > 0 {
				b.WriteString(rapid.SampledFrom([]string{" AND ", " or ", " AND /* " + rapid.SampledFrom(fc.columns).Draw(t, "comment") + " */ "}).Draw(t, "op"))
			}
			switch rapid.IntRange(0, 4).Draw(t, "cond") {
			case 0:
				ref()
				b.WriteString(" > 5")
			case 1:
				ref()
				b.WriteString(" = ")
				literal()
			case 2:
				ref()
				b.WriteString(" IS NOT NULL")
			case 3:
				b.WriteString("upper(")
				ref()
				b.WriteString(") LIKE ")
				literal()
			default:
				ref()
				b.WriteString(" IN (")
				literal()
				b.WriteString(", 'x')")
			}
		}
	}
	if rapid.Bool().Draw(t, "order") {
		b.WriteString(" ORDER BY ")
		ref()
		if rapid.Bool().Draw(t, "desc") {
			b.WriteString(" DESC")
		}
		b.WriteString(", :id")
	}
	if rapid.Bool().Draw(t, "limit") {
		b.WriteString(" LIMIT 10")
	}
	fc.query = b.String()
	return fc
}

// correctCase runs fuzzymatch.Correct on a generated case and checks that
// the generated query parsed with the references where the generator put
// them (so that the case means what it says).
func correctCase(t *rapid.T) (*fuzzCase, fuzzymatch.Result) {
	fc := genFuzzCase(t)
	q, err := soql.Parse(fc.query)
	if err != nil {
		t.Fatalf("generated query %q does not parse: %v", fc.query, err)
	}
	refs := q.ColumnRefs()
	if len(refs) != len(fc.refs) {
		t.Fatalf("generated query %q has %d column references; the generator wrote %d", fc.query, len(refs), len(fc.refs))
	}
	for i, r := range refs {
		if r.NamePos.Offset != fc.refs[i].start || r.Name != fc.refs[i].name {
			t.Fatalf("generated query %q: reference %d is %q at %d; the generator wrote %q at %d", fc.query, i, r.Name, r.NamePos.Offset, fc.refs[i].name, fc.refs[i].start)
		}
	}
	res, err := fuzzymatch.Correct(fc.query, fc.columns, fuzzymatch.Options{})
	if err != nil {
		t.Fatalf("Correct(%q) = %v", fc.query, err)
	}
	return fc, res
}

// refsAfter returns the column references of the corrected query.
func refsAfter(t *rapid.T, query string) []*soql.Ident {
	q, err := soql.Parse(query)
	if err != nil {
		t.Fatalf("corrected query %q does not parse: %v", query, err)
	}
	return q.ColumnRefs()
}

// Property 8: a column reference within the fuzzy threshold (normalized
// edit distance <= 0.4) of exactly one valid field is corrected to that
// field or left alone, never changed to another; with several fields within
// the threshold only the unique closest one may be taken, and a tie leaves
// the name alone. (Only what is surely a typo is rewritten, so a unique
// neighbour may be left alone; rules_test.go checks that narrower rule.)
func TestFastFuzzyCorrectsUniqueNeighbour(t *testing.T) {
	t.Parallel()
	var unique, several, corrected int
	rapid.Check(t, func(t *rapid.T) {
		fc, res := correctCase(t)
		after := refsAfter(t, res.Query)
		if len(after) != len(fc.refs) {
			t.Fatalf("Correct(%q, %v) = %q with %d references; want %d", fc.query, fc.columns, res.Query, len(after), len(fc.refs))
		}
		for i, r := range fc.refs {
			field, within, ambiguous := fc.want(r)
			got := after[i].Name
			if got != r.name {
				corrected++
			}
			switch {
			case len(within) == 1:
				unique++
				if got != within[0] && got != r.name {
					t.Fatalf("Correct(%q, %v): %q is within the threshold of only %q, but became %q (query %q)", fc.query, fc.columns, r.name, within[0], got, res.Query)
				}
			case ambiguous:
				several++
				if got != r.name {
					t.Fatalf("Correct(%q, %v): %q ties between %v, but became %q", fc.query, fc.columns, r.name, within, got)
				}
			case field != "":
				several++
				if got != field && got != r.name {
					t.Fatalf("Correct(%q, %v): %q is closest to %q of %v, but became %q", fc.query, fc.columns, r.name, field, within, got)
				}
			default:
				if got != r.name {
					t.Fatalf("Correct(%q, %v): %q has no field within the threshold, but became %q", fc.query, fc.columns, r.name, got)
				}
			}
		}
	})
	t.Logf("references within the threshold of exactly one field: %d; of several: %d; corrected: %d", unique, several, corrected)
}

// Property 9: when at least one field was changed, the corrections list has
// an entry (wasChanged true) for every changed field, and no entry for a
// field that was not changed.
func TestFastFuzzyCorrectionsListed(t *testing.T) {
	t.Parallel()
	var withChanges int
	rapid.Check(t, func(t *rapid.T) {
		fc, res := correctCase(t)
		after := refsAfter(t, res.Query)
		changed := map[[2]string]bool{}
		for i, r := range fc.refs {
			if i < len(after) && after[i].Name != r.name {
				changed[[2]string{r.name, after[i].Name}] = true
			}
		}
		if len(changed) > 0 {
			withChanges++
		}
		listed := map[[2]string]bool{}
		for _, c := range res.Corrections {
			if !c.WasChanged {
				continue
			}
			listed[[2]string{c.Original, c.Corrected}] = true
			if !changed[[2]string{c.Original, c.Corrected}] {
				t.Fatalf("Correct(%q, %v) lists the correction %q -> %q, but the query %q changed only %v", fc.query, fc.columns, c.Original, c.Corrected, res.Query, changed)
			}
		}
		for pair := range changed {
			if !listed[pair] {
				t.Fatalf("Correct(%q, %v) changed %q to %q (query %q) but its corrections %+v have no entry for it", fc.query, fc.columns, pair[0], pair[1], res.Query, res.Corrections)
			}
		}
	})
	t.Logf("cases with at least one change: %d", withChanges)
}

// Property 10: a field with no valid field within the threshold is left
// unchanged, and the query text around it is byte-identical: the corrected
// query equals the input with only the corrected references' byte ranges
// replaced (string literals, comments, spacing and keywords kept as written),
// each by the field the documented rule allows.
func TestFastFuzzyLeavesOthersAlone(t *testing.T) {
	t.Parallel()
	var untouched int
	rapid.Check(t, func(t *rapid.T) {
		fc, res := correctCase(t)
		after := refsAfter(t, res.Query)
		var b strings.Builder
		last := 0
		for i, r := range fc.refs {
			field, within, _ := fc.want(r)
			if len(within) == 0 {
				untouched++
			}
			if i >= len(after) || after[i].Name == r.name {
				continue
			}
			if field == "" {
				t.Fatalf("Correct(%q, %v) changed %q to %q; want it left alone", fc.query, fc.columns, r.name, after[i].Name)
			}
			b.WriteString(fc.query[last:r.start])
			b.WriteString(spellRef(field, r.quoted))
			last = r.end
		}
		b.WriteString(fc.query[last:])
		if want := b.String(); res.Query != want {
			t.Fatalf("Correct(%q, %v) = %q; want %q", fc.query, fc.columns, res.Query, want)
		}
	})
	t.Logf("references with no field within the threshold: %d", untouched)
}
