package fuzzymatch

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// This file holds the rule that decides whether a name is surely a
// misspelling of a column, rather than a different name. Models rarely
// misspell; they invent plausible names (call_datetime for a dataset with
// received_datetime and close_datetime, year_added for date_added). Such a
// name is often only a few edits from some column, but the edits replace a
// whole word, and rewriting it would silently answer another question.

// minTypoLength is the length (in runes, normalized) below which a name is
// never corrected by edits: one edit in "lat" or "zip" makes another word.
const minTypoLength = 4

// maxTypoEdits is the most edits a typo makes (in two words).
const maxTypoEdits = 2

// minWordTypo is the length of the shortest word in which one edit counts as
// a misspelling: in shorter words ("st", "lot", "age") one edit makes another
// word.
const minWordTypo = 4

// Why a name was not corrected.
const (
	whyWholeWord  = "whole word"     // the nearest column differs by a whole word or more
	whyNumber     = "number"         // the nearest column differs in a number
	whyShort      = "short"          // the name is too short to tell a misspelling from another word
	whyFar        = "far"            // more edits than a misspelling makes
	whyTie        = "about as close" // another column is about as close
	whyVocabulary = "vocabulary"     // corrected: the portal's words for the same thing
)

// words splits a normalized name into its words (at '_').
func words(n string) []string {
	return strings.FieldsFunc(n, func(r rune) bool { return r == '_' })
}

// sureTypo reports whether name can only be a misspelling of column, given
// the edits between them (both normalized). When it cannot, why says which
// rule refused it.
//
// The edits must stay inside words: with the same number of words, each
// word that differs differs by one edit, and is at least minWordTypo long
// unless other words carry the name; two edits must be in two such words.
// One edit may also join or split words (an underscore added or dropped). The digits must be the same: a number is never a typo of
// another number (statefp20, district_2012). Names shorter than
// minTypoLength are corrected only without edits.
//
// A word that differs must not itself be a word: one of the schema's words
// (vocab) or a common word of column names (commonWords), unless it is the
// other's plural or singular. "transaction_data" is not a typo of
// transaction_date when the schema also has data_as_of.
func sureTypo(name, column string, edits int, vocab map[string]bool) (ok bool, why string) {
	switch {
	case edits == 0:
		return true, ""
	case edits > maxTypoEdits:
		var scr scratch
		if sharedWords(words(name), words(column), &scr) > 0 {
			return false, whyWholeWord // call_datetime and report_datetime
		}
		return false, whyFar
	case utf8.RuneCountInString(name) < minTypoLength:
		return false, whyShort
	case digits(name) != digits(column):
		return false, whyNumber
	}
	nw, cw := words(name), words(column)
	if len(nw) != len(cw) {
		// One edit that changes the number of words adds or drops an
		// underscore ("policedistrict"), or replaces one by a letter
		// between two long words ("policeidistrict"). Next to a short word
		// that makes another name (q11_1 and q11a1, bld_sqft and bldgsqft).
		if edits == 1 && abs(len(nw)-len(cw)) == 1 {
			if len(name) != len(column) && strings.ReplaceAll(name, "_", "") == strings.ReplaceAll(column, "_", "") {
				return true, ""
			}
			if len(name) == len(column) && longWordsAround(name, column) {
				return true, ""
			}
		}
		return false, whyWholeWord
	}
	var scr scratch
	changed := 0
	for i := range nw {
		v, w := nw[i], cw[i]
		if v == w {
			continue
		}
		changed++
		d := scr.distance([]rune(v), []rune(w), -1)
		longer := max(utf8.RuneCountInString(v), utf8.RuneCountInString(w))
		switch {
		case d != 1:
			return false, whyWholeWord
		case singular(v) == singular(w):
			// the same word, plural or singular
		case digits(v) != "" || digits(w) != "":
			// a code such as q15a or 2019: one edit makes another code
			return false, whyNumber
		case vocab[v] || commonWords[v]:
			return false, whyWholeWord
		case longer >= minWordTypo:
		case longer >= 2 && len(nw) > 1 && edits == 1 && len(v) != len(w):
			// A short word among others, a letter dropped or added
			// ("data_a_of"): the other words carry the name. (A letter
			// replaced in a short word makes another abbreviation: dt, da.)
		case longer >= 2 && len(nw) > 1 && edits == 1 && swapped(v, w):
			// "data_as_fo"
		default:
			return false, whyWholeWord
		}
	}
	if changed == 0 {
		// Same words, so the edits moved an underscore: "incident_dat_e".
		return edits == 1, whyWholeWord
	}
	return true, ""
}

// singular strips an English plural ending: districts, categories, boxes.
func singular(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ses") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3:
		return w[:len(w)-1]
	}
	return w
}

// vocabulary returns the words of the normalized column names.
func vocabulary(norm []string) map[string]bool {
	v := make(map[string]bool, 2*len(norm))
	for _, n := range norm {
		for _, w := range words(n) {
			v[w] = true
		}
	}
	return v
}

// commonWords are words of column names that one edit turns into another
// (date and data, rate and race, state and stage, fee and feet): when a
// name has one of them where a column has the other, the name means
// something else. Written for this package from the vocabulary of public
// open-data column names.
var commonWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		ace act add added age ages aid air all altitude and area areas arm art ask back bad bag ban band bank bar base bat bay bed
		bid big bike bill bin bit black block board boat body bond bonds book box boxes bus buy cab call calls camp can cap car
		card care cars case cases cash cat cell cent city class close closed code codes cold cost costs count counts
		court cut dam data date dates day days deal debt deed desk dog door dose dot down due east employee employer end ends entry fact
		fail fair fall fare farm fee fees feet file filed fill film final fine fire firm fish fit flag flat flow fly
		food foot form free from fuel fund funds game gap gas gate gift goal gold grade grant gross hall hand hat head
		heat height hill hire hit hold hole home hour hours house ice id ids inch item items job jobs key kind land lane last
		late latitude law lead lease left leg len leng lens level lid life line lines link list load loan loans local lock log long loss
		lot lots low made mail main make male map mark mass max meal meet meter mile mine min mode model month name
		names near net new note now num oak odd off office old open order out owner owners pad page paid pair park
		part pass past path pay peak pen per pet phone pin pipe plan plant plate point pole pool port post pot price
		rain ran range rank rate rates ratio raw read real red rent rest ride right ring risk road role roof room root
		route row rule run safe sale sales seat sell sent set sex shape ship shop side sign site size sold sort stage
		star start state states station stop store street sum tag tax taxes team term test text tier tile time times
		title to ton top total tour town track trade tree trip type types unit units use used user users value van
		vote wage wait walk wall ward water way week weight west white wide will win wind work yard year years zip zone`) {
		m[w] = true
	}
	return m
}()

// longWordsAround reports whether a and b (of the same length) differ in
// one place where one of them has an underscore between two words of at
// least minWordTypo letters.
func longWordsAround(a, b string) bool {
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if i == len(a) || a[i+1:] != b[i+1:] {
		return false
	}
	s := a
	if b[i] == '_' {
		s = b
	}
	left := s[:i]
	if j := strings.LastIndexByte(left, '_'); j >= 0 {
		left = left[j+1:]
	}
	right := s[i+1:]
	if j := strings.IndexByte(right, '_'); j >= 0 {
		right = right[:j]
	}
	return utf8.RuneCountInString(left) >= minWordTypo && utf8.RuneCountInString(right) >= minWordTypo
}

// swapped reports whether b is a with two neighbouring letters swapped.
func swapped(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i+1 < len(a); i++ {
		if a[i] != b[i] {
			return a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
		}
	}
	return false
}

// digits returns the digits of s, in order.
func digits(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if '0' <= s[i] && s[i] <= '9' {
			b = append(b, s[i])
		}
	}
	return string(b)
}

// sharedWords counts the words of name that a column's words contain, as
// equal words or (for words of minWordTypo runes or more) one edit apart, so
// that "district" shares a word with police_district and "districts" with
// supervisor_district.
func sharedWords(nameWords, colWords []string, s *scratch) int {
	n := 0
	for _, v := range nameWords {
		for _, w := range colWords {
			if v == w || (min(len(v), len(w)) >= minWordTypo && s.distance([]rune(v), []rune(w), 1) <= 1) {
				n++
				break
			}
		}
	}
	return n
}

// Words that name the same thing in this portal's column names: a name
// that differs from exactly one column only by one of these for another is
// that column (dispatch_dttm for dispatch_datetime, received_timestamp for
// received_dttm).
var synonymWords = [][]string{{"dttm", "datetime", "timestamp", "date_time"}}

// asOf is the ending of the columns that say when a dataset's rows were
// last refreshed (data_as_of): a name with that ending whose first word is
// one edit from the column's (date_as_of) means it.
const asOf = "_as_of"

// vocabularyMatch returns the one column that name means by the portal's
// vocabulary (synonymWords, or asOf), or "" with no such column or
// several.
func (m *matcher) vocabularyMatch(name string) string {
	n := normalize(name)
	wrapped := "_" + n + "_" // every word between underscores
	matches := map[int]bool{}
	for _, group := range synonymWords {
		for _, w := range group {
			if !strings.Contains(wrapped, "_"+w+"_") {
				continue
			}
			for _, other := range group {
				variant := strings.Trim(strings.Replace(wrapped, "_"+w+"_", "_"+other+"_", 1), "_")
				if i := slices.Index(m.normStr, variant); other != w && i >= 0 {
					matches[i] = true
				}
			}
		}
	}
	if head, ok := strings.CutSuffix(n, asOf); ok {
		for i, c := range m.normStr {
			if chead, ok := strings.CutSuffix(c, asOf); ok && c != n && m.s.distance([]rune(head), []rune(chead), 1) <= 1 {
				matches[i] = true
			}
		}
	}
	if len(matches) != 1 {
		return ""
	}
	for i := range matches {
		return m.columns[i]
	}
	return ""
}
