//go:build e2e

package fuzzymatch_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// This file builds a corpus of invented column names, the kind a language
// model writes when it guesses (call_datetime, year_added, district), from
// the catalog's real column sets and the DataSF query corpus, and
// checks that Correct never rewrites one to a column it does not mean.

// catalogDataset is one dataset of the catalog fixture.
type catalogDataset struct {
	id, category, department string
	columns                  []string
}

func loadCatalog(t *testing.T) []catalogDataset {
	t.Helper()
	f, err := os.Open(fixtures.Path(t, "catalog", "datasf-catalog-630-with-signals.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []catalogDataset
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var line struct {
			Endpoint   string `json:"endpoint"`
			Category   string `json:"category"`
			Department any    `json:"publishing_department"`
			Columns    []struct {
				FieldName string `json:"fieldName"`
			} `json:"columns"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		ds := catalogDataset{id: line.Endpoint, category: line.Category, department: fmt.Sprint(line.Department)}
		for _, c := range line.Columns {
			if !strings.HasPrefix(c.FieldName, ":") && c.FieldName != "" {
				ds.columns = append(ds.columns, c.FieldName)
			}
		}
		if len(ds.columns) > 0 {
			out = append(out, ds)
		}
	}
	return out
}

// synonyms are words a model writes for a word of a real column name.
var synonyms = map[string][]string{
	"date":          {"day", "time", "datetime", "dt", "year", "month"},
	"datetime":      {"date", "time", "timestamp", "date_time", "dt"},
	"time":          {"date", "hour", "datetime"},
	"year":          {"date", "yr", "fiscal_year"},
	"month":         {"date", "mo", "period"},
	"category":      {"type", "kind", "class", "group"},
	"subcategory":   {"subtype", "type", "detail"},
	"type":          {"category", "kind", "class"},
	"district":      {"area", "zone", "region", "ward"},
	"neighborhood":  {"area", "district", "hood", "nbhd"},
	"neighborhoods": {"areas", "districts"},
	"description":   {"desc", "details", "text", "summary"},
	"status":        {"state", "condition", "stage"},
	"number":        {"num", "no", "count", "id", "nbr"},
	"name":          {"title", "label"},
	"address":       {"addr", "location", "street"},
	"latitude":      {"lat", "y"},
	"longitude":     {"lon", "lng", "long", "x"},
	"received":      {"call", "open", "opened", "created", "reported"},
	"closed":        {"close", "resolved", "completed", "end"},
	"incident":      {"report", "case", "event", "crime"},
	"amount":        {"total", "value", "sum", "cost"},
	"id":            {"key", "code", "number"},
	"start":         {"begin", "from", "open"},
	"end":           {"finish", "stop", "close"},
	"code":          {"id", "number", "type"},
	"units":         {"count", "quantity", "total"},
	"added":         {"created", "inserted", "new"},
	"altered":       {"changed", "modified", "updated"},
	"dropped":       {"removed", "deleted"},
	"loaded":        {"updated", "refreshed", "imported"},
	"supervisor":    {"council", "board"},
	"permit":        {"license", "application"},
	"applicant":     {"owner", "company", "business"},
	"zip":           {"postal", "zipcode"},
	"street":        {"road", "address"},
	"police":        {"sfpd", "precinct"},
	"analysis":      {"planning", "census"},
	"dispatch":      {"sent", "assigned"},
	"onscene":       {"arrival", "arrived"},
	"resolution":    {"outcome", "result", "disposition"},
	"facility":      {"site", "location", "place"},
	"filed":         {"submitted", "received"},
	"issued":        {"approved", "granted"},
	"cost":          {"price", "amount"},
	"count":         {"total", "number", "num"},
}

// addedWords are words a model adds to a real column name.
var addedWords = []string{"name", "code", "type", "id", "date", "count", "desc", "year", "month", "total", "num", "value"}

// sampleEvery keeps one name in so many of the most numerous kinds, so
// that the corpus stays quick to check. FUZZYMATCH_FULL_CORPUS=1 keeps
// every name (about 175,000; half a minute).
var sampleEvery = map[string]int{"word swap": 61, "added word": 41, "neighbour dataset": 17, "query added word": 7, "dropped word": 2, "synonym": 2, "plural/singular": 2}

// invented is one invented name in a dataset: what a rewrite may become
// without being wrong.
type invented struct {
	kind    string
	name    string
	columns []string
	meant   map[string]bool // columns a rewrite may go to; empty: none
	// others are the columns of the neighbouring dataset a name comes
	// from: a rewrite to a column it also has is surely wrong (that
	// dataset tells the two apart); to any other, the meaning is unsure.
	others map[string]bool
	query  string // a query using the name ("" for SELECT `name`)
	ref    int    // byte offset of the reference in query
}

func canonical(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }

// singular strips a plural ending, for comparing names across datasets.
func singular(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3:
		return w[:len(w)-1]
	}
	return w
}

func singularName(n string) string {
	ws := strings.Split(canonical(n), "_")
	for i, w := range ws {
		ws[i] = singular(w)
	}
	return strings.Join(ws, "_")
}

// variants returns the invented names made from column col: whole-word
// substitutions (synonyms and words of other columns), a dropped word,
// an added word, and plural or singular forms.
func variants(col string, otherWords []string) map[string][]string {
	ws := strings.Split(canonical(col), "_")
	out := map[string][]string{}
	join := func(parts []string) string {
		return strings.Join(slices.DeleteFunc(slices.Clone(parts), func(s string) bool { return s == "" }), "_")
	}
	for i, w := range ws {
		for _, syn := range synonyms[w] {
			p := slices.Clone(ws)
			p[i] = syn
			out["synonym"] = append(out["synonym"], join(p))
		}
		for _, o := range otherWords {
			if o != w && len(o) > 2 && singular(o) != singular(w) {
				p := slices.Clone(ws)
				p[i] = o
				out["word swap"] = append(out["word swap"], join(p))
			}
		}
		if len(ws) > 1 {
			p := slices.Clone(ws)
			p[i] = ""
			out["dropped word"] = append(out["dropped word"], join(p))
		}
	}
	for _, a := range addedWords {
		out["added word"] = append(out["added word"], col+"_"+a, a+"_"+col)
	}
	last := ws[len(ws)-1]
	p := slices.Clone(ws)
	switch {
	case strings.HasSuffix(last, "y") && len(last) > 3:
		p[len(p)-1] = last[:len(last)-1] + "ies"
	case strings.HasSuffix(last, "s") && len(last) > 3:
		p[len(p)-1] = strings.TrimSuffix(last, "s")
	default:
		p[len(p)-1] = last + "s"
	}
	out["plural/singular"] = append(out["plural/singular"], join(p))
	return out
}

// inventedCorpus builds the corpus: from every catalog dataset, names
// invented from its columns and names taken from neighbouring datasets (same
// category and department); and from every valid corpus query, each column
// reference replaced by names invented from it.
func inventedCorpus(t *testing.T) []invented {
	t.Helper()
	sampleEvery := sampleEvery
	if os.Getenv("FUZZYMATCH_FULL_CORPUS") != "" {
		sampleEvery = nil
	}
	var out []invented
	cat := loadCatalog(t)
	// wordDatasets counts the datasets whose columns use each word: a
	// neighbour's name with a word no other dataset uses is likely its own
	// misspelling (priority_orginal) and is left out.
	wordDatasets := map[string]int{}
	for _, ds := range cat {
		seen := map[string]bool{}
		for _, c := range ds.columns {
			for _, w := range strings.Split(canonical(c), "_") {
				if !seen[w] {
					seen[w] = true
					wordDatasets[w]++
				}
			}
		}
	}
	common := func(name string) bool {
		for _, w := range strings.Split(canonical(name), "_") {
			if wordDatasets[w] < 2 {
				return false
			}
		}
		return true
	}
	for di, ds := range cat {
		known := map[string]bool{}
		var vocab []string
		for _, c := range ds.columns {
			known[canonical(c)] = true
			vocab = append(vocab, strings.Split(canonical(c), "_")...)
		}
		slices.Sort(vocab)
		vocab = slices.Compact(vocab)
		add := func(kind, name string, meant, others map[string]bool) {
			if name == "" || known[canonical(name)] || strings.ContainsAny(name, "`") {
				return
			}
			out = append(out, invented{kind: kind, name: name, columns: ds.columns, meant: meant, others: others})
		}
		// Whole-word swaps with other words of the same dataset, added
		// words and neighbours' names are many: keep a deterministic
		// sample of them (every sampleEvery-th).
		n := 0
		for _, col := range ds.columns {
			vs := variants(col, vocab)
			for _, kind := range slicesSortedKeys(vs) {
				for _, name := range vs[kind] {
					meant := map[string]bool{canonical(col): true}
					if (kind == "word swap" || kind == "synonym") && !sameThing(name, col) {
						// A whole word replaced: no column is surely meant.
						meant = map[string]bool{}
					}
					if every := sampleEvery[kind]; every > 1 {
						if n++; n%every != 0 {
							continue
						}
					}
					add(kind, name, meant, nil)
				}
			}
		}
		// Names from neighbouring datasets (same category and department).
		seen := map[string]bool{}
		for dj, other := range cat {
			if dj == di || other.category != ds.category || other.department != ds.department {
				continue
			}
			theirs := map[string]bool{}
			for _, c := range other.columns {
				theirs[canonical(c)] = true
			}
			for _, c := range other.columns {
				if seen[canonical(c)] || !common(c) {
					continue
				}
				seen[canonical(c)] = true
				if every := sampleEvery["neighbour dataset"]; every > 1 {
					if n++; n%every != 0 {
						continue
					}
				}
				meant := map[string]bool{}
				for _, mine := range ds.columns {
					if singularName(mine) == singularName(c) {
						meant[canonical(mine)] = true // the same name, plural or singular
					}
				}
				add("neighbour dataset", c, meant, theirs)
			}
		}
	}
	// The corpus queries: each reference replaced (everywhere in the query) by
	// names invented from it, so aliases and clauses stay as written.
	for _, cq := range loadCorpus(t) {
		q, err := soql.Parse(cq.soql)
		if err != nil || !refsKnown(q, cq.columns) {
			continue
		}
		known := map[string]bool{}
		for _, c := range cq.columns {
			known[canonical(c)] = true
		}
		for _, it := range q.Stages[0].Selection {
			if it.Alias != nil {
				known[canonical(it.Alias.Name)] = true
			}
		}
		seen := map[string]bool{}
		for _, ref := range q.ColumnRefs() {
			if seen[ref.Name] || ref.Quoted {
				continue
			}
			seen[ref.Name] = true
			n := 0
			vs := variants(ref.Name, nil)
			for _, kind := range slicesSortedKeys(vs) {
				for _, name := range vs[kind] {
					if known[canonical(name)] || !bareName(name) {
						continue
					}
					if every := sampleEvery["query "+kind]; every > 1 {
						if n++; n%every != 0 {
							continue
						}
					}
					meant := map[string]bool{canonical(ref.Name): true}
					if kind == "synonym" && !sameThing(name, ref.Name) {
						meant = map[string]bool{}
					}
					text := replaceRef(cq.soql, q, ref.Name, name)
					out = append(out, invented{kind: "query " + kind, name: name, columns: cq.columns, meant: meant, query: text, ref: ref.NamePos.Offset})
				}
			}
		}
	}
	return out
}

// sameWords reports whether two names are the same words, perhaps plural,
// perhaps joined differently ("filing_type" and "filingtype"): a rewrite
// between them is not to another column's meaning.
func sameWords(a, b string) bool {
	squash := func(s string) string { return strings.ReplaceAll(canonical(s), "_", "") }
	return squash(a) == squash(b) || squash(singularName(a)) == squash(singularName(b))
}

func bareName(s string) bool {
	if s == "" || soql.IsReserved(s) || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, c := range s {
		if !(c == '_' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return !slices.Contains([]string{"case", "when", "then", "else", "end", "nulls", "first", "last"}, s)
}

// inventedTally is the outcome over the invented corpus.
type inventedTally struct {
	total, leftAlone, meant, unsure, wrong int
	perKind                                map[string][5]int // total, left alone, meant, unsure, wrong
	examples, unsureExamples               []string
}

var inventedOnce struct {
	sync.Once
	tally inventedTally
}

// runInvented runs Correct over the invented corpus (once per test binary).
func runInvented(t *testing.T) inventedTally {
	t.Helper()
	inventedOnce.Do(func() { inventedOnce.tally = tallyInvented(t) })
	return inventedOnce.tally
}

func tallyInvented(t *testing.T) inventedTally {
	t.Helper()
	tally := inventedTally{perKind: map[string][5]int{}}
	for _, iv := range inventedCorpus(t) {
		query := iv.query
		if query == "" {
			query = "SELECT `" + iv.name + "`"
		}
		res, err := fuzzymatch.Correct(query, iv.columns, fuzzymatch.Options{})
		if err != nil {
			continue // the name made the query unparsable (a keyword)
		}
		got := ""
		for _, c := range res.Corrections {
			if canonical(c.Original) == canonical(iv.name) {
				got = c.Corrected
			}
		}
		k := tally.perKind[iv.kind]
		k[0]++
		tally.total++
		switch {
		case got == "":
			k[1]++
			tally.leftAlone++
		case iv.meant[canonical(got)] || sameWords(iv.name, got):
			k[2]++
			tally.meant++
		case iv.others != nil && !iv.others[canonical(got)]:
			k[3]++
			tally.unsure++
			tally.unsureExamples = append(tally.unsureExamples, iv.name+" -> "+got)
		default:
			k[4]++
			tally.wrong++
			tally.examples = append(tally.examples, iv.kind+": "+iv.name+" -> "+got)
		}
		tally.perKind[iv.kind] = k
	}
	return tally
}

// TestRewriteFigures prints the three figures of the rewrite rule over the
// corpora: false corrections on valid queries (must be 0), typo fixes right
// / left alone / wrong (right at least 95%, wrong 0), and invented names
// rewritten to a wrong column (must be 0).
func TestRewriteFigures(t *testing.T) {
	t.Parallel()
	valid, falseCorr := 0, 0
	for _, cq := range loadCorpus(t) {
		q, err := soql.Parse(cq.soql)
		if err != nil || !refsKnown(q, cq.columns) {
			continue
		}
		valid++
		res, err := fuzzymatch.Correct(cq.soql, cq.columns, fuzzymatch.Options{})
		if err != nil || res.Query != cq.soql || len(res.Corrections) > 0 {
			falseCorr++
		}
	}
	_, typos := typoBenchmark(t)
	inv := runInvented(t)
	n := typos.n()
	t.Logf("figure 1: false corrections on valid queries: %d of %d", falseCorr, valid)
	t.Logf("figure 2: typo fixes: right %.1f%% (%d), left alone %.1f%% (%d), wrong %d, of %d single-edit typos",
		pct(typos.right, n), typos.right, pct(typos.alone, n), typos.alone, typos.wrong, n)
	t.Logf("figure 3: invented names rewritten to a wrong column: %d of %d (left alone %d, rewritten to the meant column %d)",
		inv.wrong, inv.total, inv.leftAlone, inv.meant)
	if falseCorr != 0 || typos.wrong != 0 || inv.wrong != 0 || pct(typos.right, n) < 95 {
		t.Errorf("figures out of bounds: false corrections %d (want 0), typo right %.1f%% (want >= 95%%), typo wrong %d (want 0), invented wrong %d (want 0)",
			falseCorr, pct(typos.right, n), typos.wrong, inv.wrong)
	}
}

// TestInventedNamesNeverRewrittenWrongly: no invented name is rewritten to
// a column it does not mean.
func TestInventedNamesNeverRewrittenWrongly(t *testing.T) {
	t.Parallel()
	tally := runInvented(t)
	for _, kind := range slicesSortedKeys(tally.perKind) {
		k := tally.perKind[kind]
		t.Logf("invented %-26s %6d: left alone %6d, rewritten to the meant column %5d, meaning unsure %2d, to a wrong column %d", kind, k[0], k[1], k[2], k[3], k[4])
	}
	t.Logf("invented names: %d; left alone %d, rewritten to the meant column %d, rewritten to a wrong column %d",
		tally.total, tally.leftAlone, tally.meant, tally.wrong)
	slices.Sort(tally.unsureExamples)
	t.Logf("neighbours' names rewritten to a column their own dataset lacks (meaning unsure, not counted wrong): %d: %s",
		tally.unsure, strings.Join(slices.Compact(tally.unsureExamples), ", "))
	if tally.total < 20000 {
		t.Errorf("only %d invented names; the corpus should have more", tally.total)
	}
	for i, e := range tally.examples {
		if i == 20 {
			break
		}
		t.Errorf("rewritten to a wrong column: %s", e)
	}
}

func slicesSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// timestampWords name the same thing in the portal's column names
// (received_dttm, received_datetime, received_timestamp).
var timestampWords = []string{"dttm", "datetime", "timestamp", "date_time"}

// sameThing reports whether name says what column says in the portal's own
// vocabulary: one timestamp word for another, or data_as_of with its first
// word misspelt as another word (date_as_of). Such a rewrite is meant,
// not a guess.
func sameThing(name, column string) bool {
	n, c := "_"+canonical(name)+"_", "_"+canonical(column)+"_"
	for _, w := range timestampWords {
		for _, o := range timestampWords {
			if w != o && strings.Contains(n, "_"+w+"_") && strings.Replace(n, "_"+w+"_", "_"+o+"_", 1) == c {
				return true
			}
		}
	}
	nh, ok1 := strings.CutSuffix(strings.Trim(n, "_"), "_as_of")
	ch, ok2 := strings.CutSuffix(strings.Trim(c, "_"), "_as_of")
	return ok1 && ok2 && fuzzymatch.Distance(nh, ch) == 1
}
