// Package rank ranks a portal's datasets for a search: the one ranker that
// search_datasf uses over a cached whole catalog, over the Discovery API's
// candidates when several portals are searched, and that the offline
// portal's Discovery API uses over its catalog.
//
// It reads like a search engine, not a substring test:
//
//   - text is cut into word tokens (letters and digits; field names such as
//     incident_category are split at their underscores), lower-cased and
//     stemmed with the Snowball English stemmer, so "crashes" finds "Crash"
//     and "permitted" finds "Permits";
//   - stop words are dropped: Snowball's English list, question and request
//     words ("how", "many", "show", "find", …) and the words every dataset
//     page says ("dataset", "data");
//   - a dataset scores by BM25F over its fields, each with its own weight
//     and length normalisation: the name weighs most, then tags, column
//     names, category and department, the description, and column
//     descriptions least; a word common to many datasets counts less than a
//     rare one (inverse document frequency);
//   - query words that follow each other in the name (or the description)
//     add a phrase bonus;
//   - acronyms the catalog itself spells out ("Privately Owned Public Open
//     Spaces (POPOS)") find the words they stand for, and the other way
//     round: the only synonyms, taken from the catalog, never from a list
//     of questions;
//   - page views and downloads, where the catalog has them, raise a score
//     by a bounded prior (a dataset used a thousand times more gains less
//     than a second matching word); the more recently updated dataset wins
//     a tie.
//
// The stemmer and the stop-word list come from github.com/kljensen/snowball:
// a pure-Go implementation of the published Snowball English (Porter2)
// algorithm with its test vocabulary, no dependencies and no cgo, small
// enough to read. A full index library (bleve) would bring its own storage
// and query language for a few thousand short documents held in memory;
// BM25F over them is a page of code and takes well under a millisecond.
//
// Package rank is imported by package datasf (search_datasf) and by the
// offline portal (internal/localportal); it is not a library API.
package rank

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// Column is one column of a dataset as the catalog describes it.
type Column struct {
	Name        string // display name
	FieldName   string // the name used in SoQL
	Description string
}

// Doc is one dataset of a catalog.
type Doc struct {
	ID          string
	Name        string
	Description string // plain text or HTML (tags are ignored)
	Category    string
	Department  string // attribution
	Tags        []string
	Columns     []Column
	UpdatedAt   time.Time
	// PageViews and Downloads are the popularity the catalog reports;
	// zero when it reports none.
	PageViews, Downloads int64
}

// Hit is one ranked dataset.
type Hit struct {
	Index int // the dataset's position in the slice given to New
	Score float64
	// Fields are the fields a query word matched, strongest first: "name",
	// "tags", "columns", "category", "description", "column descriptions".
	Fields []string
	// Columns are up to three field names of the columns whose names
	// matched a query word.
	Columns []string
}

// The fields of a document, with their BM25F weights and length
// normalisation (b).
type field int

const (
	fName field = iota
	fTags
	fColumns
	fCategory
	fDescription
	fColumnDescriptions
	numFields
)

var fieldNames = [numFields]string{"name", "tags", "columns", "category", "description", "column descriptions"}

var fieldWeight = [numFields]float64{5, 2.5, 1.5, 1.5, 1, 0.3}

var fieldB = [numFields]float64{0.6, 0.5, 0.75, 0.3, 0.75, 0.75}

const (
	k1 = 1.2
	// phraseBonus is added, times the pair's IDF, for each pair of
	// consecutive query words found next to each other in the name
	// (a quarter of it in the description).
	phraseBonus = 0.6
	// popularityWeight scales ln(1+views+downloads) into a multiplier of
	// the score: 1 + popularityWeight*ln(1+n), at most maxPopularity.
	popularityWeight = 0.03
	maxPopularity    = 1.4
	// expansionWeight is the weight of the words an acronym stands for
	// (and of an acronym for its words) against the words typed.
	expansionWeight = 0.6
)

type docIndex struct {
	tf      [numFields]map[string]int32
	length  [numFields]int32
	nameSeq []string // stems of the name, in order, for phrases
	descSeq []string // stems of the description, in order
	cols    []map[string]bool
	prior   float64
}

// Index ranks the datasets it was built from. It is safe for concurrent
// use: Search only reads it.
type Index struct {
	docs     []Doc
	idx      []docIndex
	df       map[string]int
	avgLen   [numFields]float64
	acronyms map[string][]string // acronym -> the stems it stands for
	expands  map[string][]string // stem -> acronyms that contain it, when the whole expansion matches
}

// New indexes docs. The slice is kept (not copied): do not change it
// afterwards.
func New(docs []Doc) *Index {
	ix := &Index{docs: docs, idx: make([]docIndex, len(docs)), df: map[string]int{}}
	ix.acronyms = catalogAcronyms(docs)
	var total [numFields]float64
	for i := range docs {
		d := &docs[i]
		di := &ix.idx[i]
		add := func(f field, toks []string) {
			if di.tf[f] == nil {
				di.tf[f] = map[string]int32{}
			}
			for _, t := range toks {
				di.tf[f][t]++
			}
			di.length[f] += int32(len(toks))
		}
		di.nameSeq = Terms(d.Name)
		add(fName, di.nameSeq)
		for _, t := range d.Tags {
			add(fTags, Terms(t))
		}
		add(fCategory, Terms(d.Category+" "+d.Department))
		desc := plainText(d.Description)
		di.descSeq = Terms(desc)
		add(fDescription, di.descSeq)
		di.cols = make([]map[string]bool, len(d.Columns))
		for j, c := range d.Columns {
			toks := Terms(c.Name + " " + c.FieldName)
			set := map[string]bool{}
			for _, t := range toks {
				set[t] = true
			}
			add(fColumns, setTerms(set))
			di.cols[j] = set
			add(fColumnDescriptions, Terms(c.Description))
		}
		seen := map[string]bool{}
		for f := range numFields {
			total[f] += float64(di.length[f])
			for t := range di.tf[f] {
				if !seen[t] {
					seen[t] = true
					ix.df[t]++
				}
			}
		}
		if n := d.PageViews + d.Downloads; n > 0 {
			di.prior = math.Min(1+popularityWeight*math.Log1p(float64(n)), maxPopularity)
		} else {
			di.prior = 1
		}
	}
	for f := range numFields {
		if len(docs) > 0 {
			ix.avgLen[f] = math.Max(total[f]/float64(len(docs)), 1)
		}
	}
	return ix
}

// setTerms lists a column's distinct terms once each: a column named
// "Incident Category" with field name incident_category counts "incident"
// once.
func setTerms(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	return out
}

// Len is the number of datasets indexed.
func (ix *Index) Len() int { return len(ix.docs) }

// Doc returns the dataset at position i of the slice given to New.
func (ix *Index) Doc(i int) *Doc { return &ix.docs[i] }

// queryTerm is one word of a query, with the weight it counts with.
type queryTerm struct {
	stem   string
	weight float64
}

// Search ranks the datasets for query and returns those that match at
// least one of its words, best first, at most limit (all when limit <= 0).
// A query with no searchable word (only stop words) matches nothing.
func (ix *Index) Search(query string, limit int) []Hit {
	typed := Terms(query)
	if len(typed) == 0 || len(ix.docs) == 0 {
		return nil
	}
	terms := ix.expand(typed)
	n := float64(len(ix.docs))
	idf := make([]float64, len(terms))
	for i, t := range terms {
		df := float64(ix.df[t.stem])
		idf[i] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	var hits []Hit
	for i := range ix.idx {
		di := &ix.idx[i]
		score := 0.0
		var matched [numFields]bool
		for qi, t := range terms {
			if ix.df[t.stem] == 0 {
				continue
			}
			tf := 0.0
			for f := range numFields {
				c := di.tf[f][t.stem]
				if c == 0 {
					continue
				}
				matched[f] = true
				norm := 1 - fieldB[f] + fieldB[f]*float64(di.length[f])/ix.avgLen[f]
				tf += fieldWeight[f] * float64(c) / norm
			}
			if tf > 0 {
				score += t.weight * idf[qi] * tf * (k1 + 1) / (tf + k1)
			}
		}
		if score == 0 {
			continue
		}
		score += ix.phrases(di, typed)
		score *= di.prior
		h := Hit{Index: i, Score: score}
		for f := range numFields {
			if matched[f] {
				h.Fields = append(h.Fields, fieldNames[f])
			}
		}
		if matched[fColumns] {
			h.Columns = matchedColumns(&ix.docs[i], di, terms)
		}
		hits = append(hits, h)
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 && math.Abs(a.Score-b.Score) > 1e-9 {
			return c
		}
		// A tie: the more recently updated first, then the id, so that the
		// order never depends on the catalog's order.
		da, db := &ix.docs[a.Index], &ix.docs[b.Index]
		if c := db.UpdatedAt.Compare(da.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(da.ID, db.ID)
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// phrases is the phrase bonus of di for the typed query terms.
func (ix *Index) phrases(di *docIndex, typed []string) float64 {
	if len(typed) < 2 {
		return 0
	}
	bonus := 0.0
	n := float64(len(ix.docs))
	for i := 0; i+1 < len(typed); i++ {
		a, b := typed[i], typed[i+1]
		if a == b {
			continue
		}
		w := 0.0
		switch {
		case adjacent(di.nameSeq, a, b):
			w = 1
		case adjacent(di.descSeq, a, b):
			w = 0.25
		}
		if w > 0 {
			df := float64(max(ix.df[a], ix.df[b]))
			bonus += w * phraseBonus * math.Log(1+(n-df+0.5)/(df+0.5))
		}
	}
	return bonus
}

func adjacent(seq []string, a, b string) bool {
	for i := 0; i+1 < len(seq); i++ {
		if seq[i] == a && seq[i+1] == b {
			return true
		}
	}
	return false
}

// expand adds to the typed terms the words of the acronyms among them
// and the acronyms whose words all appear among them, at expansionWeight.
func (ix *Index) expand(typed []string) []queryTerm {
	var out []queryTerm
	seen := map[string]bool{}
	for _, t := range typed {
		if !seen[t] {
			seen[t] = true
			out = append(out, queryTerm{stem: t, weight: 1})
		}
	}
	have := func(words []string) bool {
		for _, w := range words {
			if !slices.Contains(typed, w) {
				return false
			}
		}
		return true
	}
	base := len(out)
	for _, t := range typed {
		for _, w := range ix.acronyms[t] {
			if !seen[w] {
				seen[w] = true
				out = append(out, queryTerm{stem: w, weight: expansionWeight})
			}
		}
	}
	for acr, words := range ix.acronyms {
		if !seen[acr] && have(words) {
			seen[acr] = true
			out = append(out, queryTerm{stem: acr, weight: expansionWeight})
		}
	}
	slices.SortStableFunc(out[base:], func(a, b queryTerm) int { return cmp.Compare(a.stem, b.stem) })
	return out
}

// matchedColumns lists up to three field names of d's columns whose names
// contain a query term.
func matchedColumns(d *Doc, di *docIndex, terms []queryTerm) []string {
	var out []string
	for j, set := range di.cols {
		for _, t := range terms {
			if set[t.stem] {
				out = append(out, d.Columns[j].FieldName)
				break
			}
		}
		if len(out) == 3 {
			break
		}
	}
	return out
}

// extraStopWords are dropped from queries and text besides Snowball's
// English stop words: words that ask rather than name ("how many", "show
// me", "list", …) and words every dataset page uses.
var extraStopWords = map[string]bool{
	"show": true, "find": true, "list": true, "give": true, "get": true, "want": true, "need": true,
	"looking": true, "look": true, "many": true, "much": true, "tell": true, "please": true,
	"can": true, "could": true, "would": true, "whose": true, "also": true, "like": true,
	"dataset": true, "datasets": true, "data": true, "table": true, "info": true, "information": true,
	"us": true, "let": true, "know": true, "anyone": true, "there": true, "one": true,
}

// Terms cuts s into searchable terms: word tokens, lower-cased, stop
// words dropped, stemmed.
func Terms(s string) []string {
	var out []string
	for _, w := range Words(s) {
		if english.IsStopWord(w) || extraStopWords[w] {
			continue
		}
		out = append(out, english.Stem(w, true))
	}
	return out
}

// Words cuts s into lower-case word tokens: runs of letters and digits.
// An apostrophe inside a word is dropped ("owner's" is "owners").
func Words(s string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case (r == '\'' || r == '’') && b.Len() > 0 && i+1 < len(rs) && unicode.IsLetter(rs[i+1]):
			// inside a word: skip it
		default:
			flush()
		}
	}
	flush()
	return out
}

var (
	htmlTag    = regexp.MustCompile(`<[^>]*>`)
	htmlEntity = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'", "&nbsp;", " ")
)

// plainText drops HTML tags from a description.
func plainText(s string) string {
	if !strings.Contains(s, "<") && !strings.Contains(s, "&") {
		return s
	}
	return htmlEntity.Replace(htmlTag.ReplaceAllString(s, " "))
}

// acronymDef finds "Words Spelled Out (WSO)" in a catalog's text.
var acronymDef = regexp.MustCompile(`((?:[A-Za-z][\w'’-]*[\s/&-]+){1,8})\(([A-Z][A-Za-z]{1,7})\)`)

// catalogAcronyms reads the acronyms the catalog spells out in names and
// descriptions: "(POPOS)" after "Privately-owned public open spaces". An
// acronym counts when its letters are the initials of the words before it
// (stop words may be skipped), so "(SFPD)" after "San Francisco Police
// Department" counts and "(2019)" or a stray "(Note)" does not.
func catalogAcronyms(docs []Doc) map[string][]string {
	out := map[string][]string{}
	for _, d := range docs {
		for _, text := range []string{d.Name, plainText(d.Description)} {
			for _, m := range acronymDef.FindAllStringSubmatch(text, -1) {
				acr := strings.ToLower(m[2])
				key := english.Stem(acr, true)
				if _, ok := out[key]; ok || english.IsStopWord(acr) {
					continue
				}
				if words := spelledOut(Words(m[1]), acr); words != nil {
					out[key] = words
				}
			}
		}
	}
	return out
}

// spelledOut returns the stems of the last words of words whose initials
// spell acr, or nil.
func spelledOut(words []string, acr string) []string {
	// Match the acronym's letters against the words' initials from the
	// end, skipping stop words that the acronym leaves out.
	j := len(acr) - 1
	i := len(words) - 1
	start := -1
	for i >= 0 && j >= 0 {
		w := words[i]
		switch {
		case w[0] == acr[j]:
			j--
			start = i
		case english.IsStopWord(w):
		default:
			return nil
		}
		i--
	}
	if j >= 0 || start < 0 {
		return nil
	}
	var stems []string
	for _, w := range words[start:] {
		if !english.IsStopWord(w) {
			stems = append(stems, english.Stem(w, true))
		}
	}
	if len(stems) < 2 {
		return nil
	}
	return stems
}
