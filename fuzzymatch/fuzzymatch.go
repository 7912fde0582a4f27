// Package fuzzymatch corrects column names in SoQL that are misspelt
// against a dataset's real columns, without ever corrupting a valid query
// and without ever guessing.
//
// Match decides from names: the names a query's column references use and
// the aliases it defines (Names), and the dataset's field names, all
// strings, so any program can call it, and a caller that has parsed the
// query already need not have it parsed again. Correct takes the query as
// text instead: it parses it with its own SoQL parser, reads the names of
// the column references of its first stage (never string literals,
// function names, keywords, aliases the query defines, cast types, or
// system fields such as :id), calls Match and rewrites the text. A reference that already names a column is left alone: Socrata
// compares names case-insensitively, with '-' equal to '_'. Any other
// reference is compared with every column after normalizing both (lower
// case, '-' and spaces read as '_'), counting edits as the optimal string
// alignment distance (swapping two neighbouring characters is one edit).
//
// Only what is surely a typo is rewritten. The column with the fewest edits
// replaces the reference when all of these hold:
//
//   - no other column has as few edits, and no other column one edit
//     further is also a possible misspelling ("several columns fit about as
//     well");
//   - the edits stay inside words (words are separated by '_'): each word
//     that differs differs by one edit and has at least 4 letters, or one
//     word of 8 letters or more differs by two; a number never becomes
//     another number; one edit may also join or split two words. A name
//     whose nearest column differs by a whole word (call_datetime and
//     close_datetime, year_added and date_added) or by more than two edits
//     is not a typo: it is left alone;
//   - the name has at least 4 letters (or differs only in case, '-' or
//     spaces), and the edits divided by the longer name's length are
//     within the threshold (default 0.4).
//
// A reference left alone is reported in Result.Unknown (no sure match),
// Result.Ambiguous (ties, ordered by github.com/sahilm/fuzzy's ranking) and,
// when some column was near, Result.Rejected with the reason. Closest ranks
// columns for "did you mean" messages, those sharing the name's words first.
//
// Correct changes only the byte ranges of corrected references; every
// other byte of the query is kept as written. Result.Renames says which
// names became which columns, for a caller of Match that renames its own
// text or parse of the query.
//
// A library for any client of a Socrata portal: package datasf uses it for
// query_datasf and its "did you mean" messages, package hints for its
// suggestions. github.com/sahilm/fuzzy ranks ties because its scores
// follow how people abbreviate; the edit distance is written here because
// the typo rules need it per word.
package fuzzymatch

import (
	"fmt"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// DefaultThreshold is the largest normalized edit distance (edits divided by
// the longer name's length) at which a name is corrected.
const DefaultThreshold = 0.4

// Options configures Match and Correct. The zero value gives the defaults.
type Options struct {
	// Threshold overrides DefaultThreshold when positive.
	Threshold float64
	// Disabled turns correction off: the query is returned unchanged (it is
	// still parsed, so syntax errors are reported).
	Disabled bool
	// DisplayNames maps columns' display names to their field names (the
	// Views API's name and fieldName: "Category" to service_name). A
	// reference that is a display name, ignoring case and with spaces read
	// as underscores, is corrected to its field name before any spelling
	// is considered, and reported like any correction. A display name that
	// is another column's field name, or that two columns share, is not
	// used.
	DisplayNames map[string]string
}

// Correction reports one column name that was rewritten.
type Correction struct {
	Original   string  `json:"original"`         // the name as the query had it (unquoted)
	Corrected  string  `json:"corrected"`        // the column's field name
	WasChanged bool    `json:"wasChanged"`       // true: the query text was rewritten
	Distance   float64 `json:"distance"`         // normalized edit distance, 0 to Threshold
	Reason     string  `json:"reason,omitempty"` // why, in words
}

// Ambiguity is a name left unchanged because two or more columns are equally
// close to it.
type Ambiguity struct {
	Name       string   `json:"name"`
	Candidates []string `json:"candidates"` // closest first (sahilm/fuzzy's ranking)
}

// Result is Match's and Correct's answer.
type Result struct {
	// Query is the corrected query text (the input when nothing changed)
	// from Correct; Match, which sees no text, leaves it empty.
	Query string `json:"query"`
	// Corrections has one entry per distinct (original, corrected) pair.
	Corrections []Correction `json:"corrections,omitempty"`
	// Ambiguous lists names left alone because of ties.
	Ambiguous []Ambiguity `json:"ambiguous,omitempty"`
	// Unknown lists names that match no column and are surely a typo of
	// none; they are left alone (the query is wrong as written).
	Unknown []string `json:"unknown,omitempty"`
	// Rejected explains, for names left alone that are near some column
	// (in Unknown or Ambiguous), why that column was not taken.
	Rejected []Rejection `json:"rejected,omitempty"`
	// Closest holds, for each name in Unknown or Ambiguous, the columns
	// closest to it as Closest orders them (at most ClosestColumns), so
	// that a "did you mean" message needs no second ranking.
	Closest map[string][]string `json:"closest,omitempty"`
}

// ClosestColumns is how many columns Result.Closest offers for a name.
const ClosestColumns = 5

// Rejection is a name left alone although a column is near it.
type Rejection struct {
	Name    string `json:"name"`
	Nearest string `json:"nearest"` // the nearest column (the first of the ties)
	Edits   int    `json:"edits"`   // edits between the normalized names
	Reason  string `json:"reason"`  // why it is not surely a typo, in words
}

// Names are the names a query uses, which is all Match reads of it.
type Names struct {
	// Refs are the names of the query's column references as written
	// (unquoted), in source order, one per reference: a name used twice
	// appears twice. Function names, keywords, system fields and references
	// to the query's own aliases are not column references.
	Refs []string
	// Aliases are the aliases the query defines (SELECT x AS alias): a
	// reference as close to one of them as to a column is left alone.
	Aliases []string
}

// Match decides, from names alone, which references of a query are
// misspelt columns (Result.Corrections, Result.Renames) and which are left
// alone (Result.Unknown, Result.Ambiguous, Result.Rejected), against
// columns (the dataset's field names). It never sees the query's text:
// Result.Query is empty, and a caller renames its own text or parse with
// Result.Renames. Correct is Match for a caller with only the text.
func Match(names Names, columns []string, opts Options) Result {
	var res Result
	if opts.Disabled || len(columns) == 0 {
		return res
	}
	threshold := opts.Threshold
	if threshold <= 0 {
		threshold = DefaultThreshold
	}
	misses := unknownNames(names.Refs, columns)
	if len(misses) == 0 {
		return res
	}
	aliases := make(map[string]bool, len(names.Aliases))
	for _, a := range names.Aliases {
		aliases[Canonical(a)] = true
	}
	m := newMatcher(columns, threshold)
	order, decided := decideNames(misses, aliases, m, displayNames(opts.DisplayNames, columns))
	for _, name := range order {
		res.report(m, name, decided[name], threshold)
	}
	return res
}

// Correct rewrites the column references of query that are slightly wrong
// against columns (the dataset's field names): it parses query, decides
// with Match and returns the corrected text in Result.Query. It returns
// the parse error when query does not parse (its message gives the line
// and column).
func Correct(query string, columns []string, opts Options) (Result, error) {
	q, err := soql.Parse(query)
	if err != nil {
		return Result{Query: query}, err
	}
	refs, aliases := q.Names()
	res := Match(Names{Refs: refs, Aliases: aliases}, columns, opts)
	res.Query = q.Rename(query, res.Renames())
	return res, nil
}

// Renames maps each name Match or Correct corrected, as the query had it,
// to its column: what a caller renames its own text or parse with.
func (res Result) Renames() map[string]string {
	if len(res.Corrections) == 0 {
		return nil
	}
	to := make(map[string]string, len(res.Corrections))
	for _, c := range res.Corrections {
		to[c.Original] = c.Corrected
	}
	return to
}

// unknownNames returns the names of refs that name none of columns, in
// order.
func unknownNames(refs, columns []string) []string {
	known := make(map[string]bool, len(columns))
	for _, c := range columns {
		known[Canonical(c)] = true
	}
	var misses []string
	for _, ref := range refs {
		if !known[Canonical(ref)] {
			misses = append(misses, ref)
		}
	}
	return misses
}

// decideNames decides once for each name of misses (as written), and
// returns the names in order of first use with their decisions. A name as
// close to one of the query's own aliases (canonical names) as to any
// column is more likely a misspelt alias: it is left out (no decision).
func decideNames(misses []string, aliases map[string]bool, m *matcher, display map[string]string) ([]string, map[string]decision) {
	var names []string
	decided := map[string]decision{}
	for _, name := range misses {
		if aliases[Canonical(name)] {
			continue
		}
		if _, ok := decided[name]; ok {
			continue
		}
		if field, ok := display[displayKey(name)]; ok {
			decided[name] = decision{verdict: corrected, best: candidate{Column: field}, why: whyDisplayName}
			names = append(names, name)
			continue
		}
		d := m.decide(name)
		if d.verdict == corrected && nearAlias(name, d.best.Column, d.best.Edits, aliases, &m.s) {
			d = decision{verdict: unknown, best: d.best, why: "alias"}
		}
		decided[name] = d
		names = append(names, name)
	}
	return names, decided
}

// report adds what was decided for name to res: a correction, an
// ambiguity or an unknown name (with the columns nearest it).
func (res *Result) report(m *matcher, name string, d decision, threshold float64) {
	switch d.verdict {
	case corrected:
		res.Corrections = append(res.Corrections, Correction{
			Original:   name,
			Corrected:  d.best.Column,
			WasChanged: true,
			Distance:   d.best.Distance,
			Reason:     reason(name, d, threshold),
		})
	case ambiguous:
		cands := make([]string, len(d.ties))
		for i, c := range d.ties {
			cands[i] = c.Column
		}
		res.Ambiguous = append(res.Ambiguous, Ambiguity{Name: name, Candidates: cands})
		res.Rejected = append(res.Rejected, rejection(name, d))
		res.closest(m, name, d)
	default:
		res.Unknown = append(res.Unknown, name)
		if d.best.Column != "" {
			res.Rejected = append(res.Rejected, rejection(name, d))
		}
		res.closest(m, name, d)
	}
}

// whyDisplayName marks a correction from a display name.
const whyDisplayName = "display name"

// displayKey is how display names and references compare: case ignored,
// spaces and hyphens read as underscores.
func displayKey(s string) string {
	return Canonical(strings.Join(strings.Fields(strings.ReplaceAll(s, "_", " ")), "_"))
}

// displayNames keys byName (display name -> field name) by displayKey,
// leaving out names shared by two columns and names that are another
// column's field name.
func displayNames(byName map[string]string, columns []string) map[string]string {
	if len(byName) == 0 {
		return nil
	}
	fields := make(map[string]bool, len(columns))
	for _, c := range columns {
		fields[Canonical(c)] = true
	}
	out := map[string]string{}
	shared := map[string]bool{}
	for name, field := range byName {
		k := displayKey(name)
		if k == "" || fields[k] || !fields[Canonical(field)] {
			continue
		}
		if prev, ok := out[k]; ok && prev != field {
			shared[k] = true
		}
		out[k] = field
	}
	for k := range shared {
		delete(out, k)
	}
	return out
}

// closest records the columns closest to a name left alone, from the
// ranking its decision made when it had every column ranked.
func (res *Result) closest(m *matcher, name string, d decision) {
	all := d.all
	if all == nil {
		all = m.rank(name, true) // the decision looked only a typo away
	}
	if res.Closest == nil {
		res.Closest = map[string][]string{}
	}
	res.Closest[name] = m.closest(name, all, ClosestColumns)
}

// nearAlias reports whether name is at most edits away from one of the
// query's aliases other than column itself (an alias spelt like the column
// it stands for is written the same whichever name meant).
func nearAlias(name, column string, edits int, aliases map[string]bool, s *scratch) bool {
	n := []rune(normalize(name))
	for a := range aliases {
		if a == Canonical(column) {
			continue
		}
		if s.distance(n, []rune(normalize(a)), edits) <= edits {
			return true
		}
	}
	return false
}

// rejection explains why name was left alone.
func rejection(name string, d decision) Rejection {
	best := d.best
	if len(d.ties) > 0 {
		best = d.ties[0]
	}
	r := Rejection{Name: name, Nearest: best.Column, Edits: best.Edits}
	switch d.why {
	case whyTie:
		others := make([]string, 0, len(d.ties))
		for _, c := range d.ties {
			others = append(others, c.Column)
		}
		if len(others) < 2 {
			r.Reason = fmt.Sprintf("several columns are about as close to %q as %s", name, best.Column)
		} else {
			r.Reason = fmt.Sprintf("%s fit %q about as well", strings.Join(others, " and "), name)
		}
	case whyWholeWord:
		r.Reason = fmt.Sprintf("the nearest column, %s, differs from %q by a whole word, so it may mean something else", best.Column, name)
	case whyNumber:
		r.Reason = fmt.Sprintf("the nearest column, %s, has another number than %q", best.Column, name)
	case whyShort:
		r.Reason = fmt.Sprintf("%q is too short to tell a typo of %s from another word", name, best.Column)
	case "alias":
		r.Reason = fmt.Sprintf("%q is as close to an alias the query defines as to %s", name, best.Column)
	default:
		r.Reason = fmt.Sprintf("no column is within a typo of %q", name)
	}
	return r
}

func reason(name string, d decision, threshold float64) string {
	c := d.best
	if d.why == whyDisplayName {
		return fmt.Sprintf("%q is the display name of column %q; SoQL uses field names", name, c.Column)
	}
	if d.why == whyVocabulary {
		return fmt.Sprintf("no column %q; %q is the only column that names the same thing in this dataset's words", name, c.Column)
	}
	if c.Edits == 0 {
		return fmt.Sprintf("%q names column %q once spaces are read as underscores", name, c.Column)
	}
	plural := "s"
	if c.Edits == 1 {
		plural = ""
	}
	return fmt.Sprintf("no column %q; %q is the only column %d edit%s away (normalized distance %.2f, threshold %.2f)",
		name, c.Column, c.Edits, plural, c.Distance, threshold)
}
