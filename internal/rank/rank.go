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
	// Fields are the fields a query word matched, strongest first: "id"
	// (the query names the dataset's id), "name", "tags", "columns",
	// "category", "description", "column descriptions".
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

// posting is one dataset's counts of one term, per field (saturating at
// 255: BM25 saturates long before).
type posting struct {
	doc int32
	tf  [numFields]uint8
}

// docInfo is what the index keeps of a dataset besides its postings.
type docInfo struct {
	length  [numFields]uint32
	nameSeq []int32   // term ids of the name, in order, for phrases
	descSeq []int32   // term ids of the description, in order
	cols    [][]int32 // term ids of each column's name and field name
	prior   float64
}

// Index ranks the datasets it was built from: an inverted index (term ->
// the datasets that have it, with counts per field), so a search reads
// only the postings of its words. It is safe for concurrent use: Search
// only reads it.
type Index struct {
	docs     []Doc
	info     []docInfo
	terms    map[string]int32 // term -> id
	postings [][]posting      // by term id, datasets in order
	avgLen   [numFields]float64
	acronyms map[string][]string // acronym -> the stems it stands for
	byID     map[string]int32    // lower-case dataset id -> position
}

// New indexes docs. The slice is kept (not copied): do not change it
// afterwards.
func New(docs []Doc) *Index {
	ix := &Index{docs: docs, info: make([]docInfo, len(docs)), terms: map[string]int32{}, byID: map[string]int32{}}
	for i, d := range docs {
		ix.byID[strings.ToLower(d.ID)] = int32(i)
	}
	ix.acronyms = catalogAcronyms(docs)
	an := analyzer{stems: map[string]string{}}
	id := func(term string) int32 {
		if t, ok := ix.terms[term]; ok {
			return t
		}
		t := int32(len(ix.postings))
		ix.terms[term] = t
		ix.postings = append(ix.postings, nil)
		return t
	}
	counts := map[int32]*[numFields]uint8{}
	var total [numFields]float64
	for i := range docs {
		d := &docs[i]
		di := &ix.info[i]
		clear(counts)
		add := func(f field, toks []string) []int32 {
			ids := make([]int32, len(toks))
			for k, tok := range toks {
				t := id(tok)
				ids[k] = t
				c := counts[t]
				if c == nil {
					c = new([numFields]uint8)
					counts[t] = c
				}
				if c[f] < 255 {
					c[f]++
				}
			}
			di.length[f] += uint32(len(toks))
			return ids
		}
		di.nameSeq = add(fName, an.terms(d.Name))
		for _, tag := range d.Tags {
			add(fTags, an.terms(tag))
		}
		add(fCategory, an.terms(d.Category+" "+d.Department))
		di.descSeq = add(fDescription, an.terms(plainText(d.Description)))
		di.cols = make([][]int32, len(d.Columns))
		for j, c := range d.Columns {
			// A column named "Incident Category" with field name
			// incident_category counts each word once.
			toks := an.terms(c.Name + " " + c.FieldName)
			slices.Sort(toks)
			di.cols[j] = add(fColumns, slices.Compact(toks))
			add(fColumnDescriptions, an.terms(c.Description))
		}
		for t, c := range counts {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), tf: *c})
		}
		for f := range numFields {
			total[f] += float64(di.length[f])
		}
		if n := d.PageViews + d.Downloads; n > 0 {
			di.prior = math.Min(1+popularityWeight*math.Log1p(float64(n)), maxPopularity)
		} else {
			di.prior = 1
		}
	}
	for t := range ix.postings {
		ix.postings[t] = slices.Clip(ix.postings[t])
	}
	for f := range numFields {
		if len(docs) > 0 {
			ix.avgLen[f] = math.Max(total[f]/float64(len(docs)), 1)
		}
	}
	return ix
}

// analyzer is Terms with a memo of stems, for indexing many texts.
type analyzer struct{ stems map[string]string }

func (a analyzer) terms(s string) []string {
	var out []string
	for _, w := range Words(s) {
		if english.IsStopWord(w) || extraStopWords[w] {
			continue
		}
		st, ok := a.stems[w]
		if !ok {
			st = english.Stem(w, true)
			a.stems[w] = st
		}
		out = append(out, st)
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
	ids := ix.namedIDs(query)
	typed := Terms(query)
	if (len(typed) == 0 && len(ids) == 0) || len(ix.docs) == 0 {
		return nil
	}
	terms := ix.expand(typed)
	n := float64(len(ix.docs))
	scores := map[int32]float64{}
	matched := map[int32]uint8{} // bit f: field f matched
	var termIDs []int32
	for _, qt := range terms {
		t, ok := ix.terms[qt.stem]
		if !ok {
			continue
		}
		termIDs = append(termIDs, t)
		ps := ix.postings[t]
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			di := &ix.info[p.doc]
			tf := 0.0
			for f := range numFields {
				if p.tf[f] == 0 {
					continue
				}
				matched[p.doc] |= 1 << f
				norm := 1 - fieldB[f] + fieldB[f]*float64(di.length[f])/ix.avgLen[f]
				tf += fieldWeight[f] * float64(p.tf[f]) / norm
			}
			scores[p.doc] += qt.weight * idf * tf * (k1 + 1) / (tf + k1)
		}
	}
	hits := make([]Hit, 0, len(scores)+len(ids))
	top := 0.0
	for doc, score := range scores {
		di := &ix.info[doc]
		score += ix.phrases(di, typed)
		score *= di.prior
		h := Hit{Index: int(doc), Score: score}
		for f := range numFields {
			if matched[doc]&(1<<f) != 0 {
				h.Fields = append(h.Fields, fieldNames[f])
			}
		}
		if matched[doc]&(1<<fColumns) != 0 {
			h.Columns = ix.matchedColumns(int(doc), termIDs)
		}
		top = max(top, score)
		hits = append(hits, h)
	}
	// A dataset named by its id comes first, whatever its words.
	for k, doc := range ids {
		i := slices.IndexFunc(hits, func(h Hit) bool { return h.Index == int(doc) })
		if i < 0 {
			hits = append(hits, Hit{Index: int(doc)})
			i = len(hits) - 1
		}
		hits[i].Score = top + float64(len(ids)-k)
		hits[i].Fields = append([]string{"id"}, hits[i].Fields...)
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if math.Abs(a.Score-b.Score) > 1e-9 {
			return cmp.Compare(b.Score, a.Score)
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

// namedIDs are the datasets whose ids (4x4, "wg3w-h783") the query
// names, in the query's order.
func (ix *Index) namedIDs(query string) []int32 {
	var out []int32
	words := Words(query)
	for i := 0; i+1 < len(words); i++ {
		if len(words[i]) == 4 && len(words[i+1]) == 4 {
			if doc, ok := ix.byID[words[i]+"-"+words[i+1]]; ok && !slices.Contains(out, doc) {
				out = append(out, doc)
			}
		}
	}
	return out
}

// phrases is the phrase bonus of di for the typed query terms.
func (ix *Index) phrases(di *docInfo, typed []string) float64 {
	if len(typed) < 2 {
		return 0
	}
	bonus := 0.0
	n := float64(len(ix.docs))
	for i := 0; i+1 < len(typed); i++ {
		a, okA := ix.terms[typed[i]]
		b, okB := ix.terms[typed[i+1]]
		if !okA || !okB || a == b {
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
			df := float64(max(len(ix.postings[a]), len(ix.postings[b])))
			bonus += w * phraseBonus * math.Log(1+(n-df+0.5)/(df+0.5))
		}
	}
	return bonus
}

func adjacent(seq []int32, a, b int32) bool {
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

// matchedColumns lists up to three field names of the dataset's columns
// whose names contain one of the terms.
func (ix *Index) matchedColumns(doc int, terms []int32) []string {
	var out []string
	for j, col := range ix.info[doc].cols {
		for _, t := range terms {
			if slices.Contains(col, t) {
				out = append(out, ix.docs[doc].Columns[j].FieldName)
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

// catalogAcronyms reads the acronyms the catalog spells out in names and
// descriptions: "(POPOS)" after "Privately-owned public open spaces". An
// acronym counts when its letters are the initials of the words before it
// (stop words may be skipped), so "(SFPD)" after "San Francisco Police
// Department" counts and "(2019)" or a stray "(Note)" does not.
func catalogAcronyms(docs []Doc) map[string][]string {
	out := map[string][]string{}
	for _, d := range docs {
		for _, text := range []string{d.Name, plainText(d.Description)} {
			for before, after, ok := strings.Cut(text, "("); ok; before, after, ok = strings.Cut(after, "(") {
				acr, _, closed := strings.Cut(after, ")")
				if !closed || !isAcronym(acr) {
					continue
				}
				acr = strings.ToLower(acr)
				key := english.Stem(acr, true)
				if _, ok := out[key]; ok || english.IsStopWord(acr) {
					continue
				}
				// The words just before the parenthesis.
				if len(before) > 160 {
					before = before[len(before)-160:]
				}
				if words := spelledOut(Words(before), acr); words != nil {
					out[key] = words
				}
			}
		}
	}
	return out
}

// isAcronym reports whether s looks like an acronym: 2 to 8 ASCII
// letters, the first upper-case ("POPOS", "PCI", "SFMTA").
func isAcronym(s string) bool {
	if len(s) < 2 || len(s) > 8 || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
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
