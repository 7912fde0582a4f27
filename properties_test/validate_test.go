package properties_test

import (
	"errors"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/validate"
)

// fourByFour is the dataset id shape, as the DataSF design states it.
var fourByFour = regexp.MustCompile(`^[a-z0-9]{4}-[a-z0-9]{4}$`)

// genDatasetID draws strings near and far from the 4x4 shape: valid ids,
// valid ids with one mutation (case, length, separator, white space,
// Unicode), and arbitrary short strings.
func genDatasetID() *rapid.Generator[string] {
	alnum := "abcdefghijklmnopqrstuvwxyz0123456789"
	part := rapid.StringOfN(rapid.RuneFrom([]rune(alnum)), 4, 4, -1)
	valid := rapid.Custom(func(t *rapid.T) string { return part.Draw(t, "a") + "-" + part.Draw(t, "b") })
	junk := []rune("aZ09-_ \t\n.é日😀\u00a0/\x00")
	mutated := rapid.Custom(func(t *rapid.T) string {
		r := []rune(valid.Draw(t, "id"))
		i := rapid.IntRange(0, len(r)-1).Draw(t, "at")
		c := rapid.SampledFrom(junk).Draw(t, "char")
		switch rapid.IntRange(0, 4).Draw(t, "mutation") {
		case 0: // replace
			r[i] = c
		case 1: // insert
			r = slices.Insert(r, i, c)
		case 2: // delete
			r = slices.Delete(r, i, i+1)
		case 3: // upper-case
			r[i] = unicode.ToUpper(r[i])
		default: // pad
			return string(c) + string(r)
		}
		return string(r)
	})
	random := rapid.StringOfN(rapid.RuneFrom([]rune(alnum+"-ABZ _.\n日")), 0, 12, -1)
	return rapid.OneOf(valid, mutated, random)
}

// Property 4: every string that is not a 4x4 id once lower-cased and
// trimmed of ASCII white space (^[a-z0-9]{4}-[a-z0-9]{4}$: ids are accepted
// as models write them), nor a dataset URL ending in one, is rejected
// as a dataset id, with an error naming dataset_id; every other one is
// accepted (by validate.DatasetID and by the get_schema and query_datasf
// input structs) and normalizes to the lower-case id.
func TestFastDatasetIDShape(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		id := genDatasetID().Draw(t, "id")
		if rapid.IntRange(0, 9).Draw(t, "as url") == 0 {
			id = rapid.SampledFrom([]string{"https://data.sfgov.org/Public-Safety/Some-Title/", "https://data.sfgov.org/resource/", "http://x/d/"}).Draw(t, "url") + id
		}
		bare := fourByFour.MatchString(strings.ToLower(strings.Trim(id, " \t\n\r")))
		trimmed := strings.Trim(id, " \t\n\r")
		url := strings.HasPrefix(trimmed, "http") && !strings.ContainsAny(trimmed, " \t\n\r") &&
			fourByFour.MatchString(strings.ToLower(trimmed[strings.LastIndex(trimmed, "/")+1:]))
		want := bare || url
		if want {
			if n := validate.NormalizeDatasetID(id); !fourByFour.MatchString(n) {
				t.Fatalf("NormalizeDatasetID(%q) = %q; want a lower-case 4x4", id, n)
			}
		}
		err := validate.DatasetID(id)
		if want && err != nil {
			t.Fatalf("DatasetID(%q) = %v; want nil (it matches the 4x4 shape)", id, err)
		}
		if !want {
			if err == nil {
				t.Fatalf("DatasetID(%q) = nil; want an error (not a 4x4 id)", id)
			}
			if !strings.Contains(err.Error(), "dataset_id") {
				t.Fatalf("DatasetID(%q) = %q; want the error to name dataset_id", id, err)
			}
		}
		for _, in := range []any{
			&datasf.SchemaInput{DatasetID: id},
			&datasf.QueryInput{DatasetID: id, SoQL: "SELECT *"},
		} {
			got := failingFields(t, validate.Struct(in))
			if wantFail := !want; slices.Contains(got, "dataset_id") != wantFail {
				t.Fatalf("validate.Struct(%+v) fails for %v; want dataset_id failing = %v", in, got, wantFail)
			}
		}
	})
}

// failingFields returns the sorted field names of a validate error (nil for
// nil), failing when err is not a *validate.Error.
func failingFields(t interface{ Fatalf(string, ...any) }, err error) []string {
	if err == nil {
		return nil
	}
	var verr *validate.Error
	if !errors.As(err, &verr) {
		t.Fatalf("error %v is %T; want a *validate.Error", err, err)
	}
	var out []string
	for _, f := range verr.Fields {
		out = append(out, f.Field)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// spaceRunes are white space that is not a control character (U+0085 is
// both, so it is left out); wordRunes are visible characters.
var (
	spaceRunes = []rune{' ', '\u00a0', '\u2003', '\u3000', '\u2028'}
	wordRunes  = []rune("aZ09_'\"%|é日😀-()*")
)

// genText draws valid UTF-8 text without control characters (but with tabs
// and line breaks when lines is set) whose length in characters is spread
// around 0, around limit and below 2*limit; some texts are only white space.
// The characters come from a small palette cycled by a seeded generator, so
// long texts stay cheap to draw and shrink.
func genText(limit int, lines bool) *rapid.Generator[string] {
	spaces := spaceRunes
	if lines {
		spaces = append(slices.Clone(spaceRunes), '\t', '\n', '\r')
	}
	return rapid.Custom(func(t *rapid.T) string {
		n := rapid.OneOf(
			rapid.IntRange(0, 3),
			rapid.IntRange(limit-3, limit+3),
			rapid.IntRange(0, 2*limit),
		).Draw(t, "length")
		var palette []rune
		switch rapid.IntRange(0, 2).Draw(t, "kind") {
		case 0: // only white space
			palette = rapid.SliceOfN(rapid.SampledFrom(spaces), 1, 3).Draw(t, "spaces")
		case 1: // words
			palette = rapid.SliceOfN(rapid.SampledFrom(wordRunes), 1, 4).Draw(t, "letters")
		default: // words and white space
			palette = append(rapid.SliceOfN(rapid.SampledFrom(wordRunes), 1, 3).Draw(t, "letters"),
				rapid.SliceOfN(rapid.SampledFrom(spaces), 1, 2).Draw(t, "spaces")...)
		}
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1))
		out := make([]rune, n)
		for i := range out {
			out[i] = palette[r.IntN(len(palette))]
		}
		return string(out)
	})
}

// blank reports whether s is empty once white space is trimmed.
func blank(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// Property 14: over valid UTF-8 text without control characters, search-query
// validation fails exactly when the text is blank (empty after trimming white
// space) or longer than 500 characters; the error names the field "query".
func TestFastSearchQueryLength(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		q := genText(datasf.MaxSearchQuery, false).Draw(t, "query")
		n := utf8.RuneCountInString(q)
		wantFail := blank(q) || n > 500
		err := validate.Struct(&datasf.SearchInput{Query: q})
		if err != nil && !strings.Contains(err.Error(), "query") {
			t.Fatalf("validate.Struct(SearchInput) error %q does not name the field query", err)
		}
		got := failingFields(t, err)
		if slices.Contains(got, "query") != wantFail || len(got) > 1 {
			t.Fatalf("validate.Struct(SearchInput{Query: %d characters, blank %v}) fails for %v; want [query] failing = %v", n, blank(q), got, wantFail)
		}
	})
}

// Property 15: over valid UTF-8 text without control characters other than
// tab and line breaks (which SoQL allows), SoQL validation fails exactly when
// the text is blank or longer than datasf.MaxSoQL characters; the error names "soql".
func TestFastSoQLLength(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		q := genText(datasf.MaxSoQL, true).Draw(t, "soql")
		n := utf8.RuneCountInString(q)
		wantFail := blank(q) || n > datasf.MaxSoQL
		err := validate.Struct(&datasf.QueryInput{DatasetID: "abcd-1234", SoQL: q})
		if err != nil && !strings.Contains(err.Error(), "soql") {
			t.Fatalf("validate.Struct(QueryInput) error %q does not name the field soql", err)
		}
		got := failingFields(t, err)
		if slices.Contains(got, "soql") != wantFail || len(got) > 1 {
			t.Fatalf("validate.Struct(QueryInput{SoQL: %d characters, blank %v}) fails for %v; want [soql] failing = %v", n, blank(q), got, wantFail)
		}
	})
}

// genAnyText draws text that may also break the character rules: control
// characters and invalid UTF-8.
func genAnyText(limit int, lines bool) *rapid.Generator[string] {
	bad := rapid.Custom(func(t *rapid.T) string {
		s := genText(limit, lines).Draw(t, "text")
		junk := rapid.SampledFrom([]string{"\x00", "\x07", "\x1b[31m", "\u0085", "\xff", "\xc3", "\x7f"}).Draw(t, "junk")
		at := rapid.IntRange(0, len(s)).Draw(t, "at")
		for at > 0 && at < len(s) && !utf8.RuneStart(s[at]) {
			at--
		}
		return s[:at] + junk + s[at:]
	})
	return rapid.OneOf(genText(limit, lines), bad)
}

// cleanText is the character rule: valid UTF-8 and no control characters
// (tab, LF and CR allowed when lines is set).
func cleanText(s string, lines bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) && !(lines && (r == '\t' || r == '\n' || r == '\r')) {
			return false
		}
	}
	return true
}

var genFormat = rapid.SampledFrom([]string{"", "auto", "json", "markdown", "JSON", "xml", " json"})

func validFormat(f string) bool { return f == "" || f == "auto" || f == "json" || f == "markdown" }

// genOptionalInt draws nil (the argument left out) or an int in [lo, hi].
func genOptionalInt(lo, hi int) *rapid.Generator[*int] {
	return rapid.Custom(func(t *rapid.T) *int {
		if rapid.Bool().Draw(t, "absent") {
			return nil
		}
		n := rapid.IntRange(lo, hi).Draw(t, "n")
		return &n
	})
}

// outside reports whether an argument that was given lies outside [lo, hi];
// zero is a value like any other, not "unset".
func outside(p *int, lo, hi int) bool { return p != nil && (*p < lo || *p > hi) }

// Property 16: every validation error message contains the (JSON) name of
// the field that failed, and the fields reported are exactly those that
// break their documented rule, for every input type of the six tools.
func TestFastValidationErrorsNameFields(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		var (
			in   any
			want []string
		)
		fail := func(field string, bad bool) {
			if bad {
				want = append(want, field)
			}
		}
		switch rapid.IntRange(0, 5).Draw(t, "tool") {
		case 0:
			s := &datasf.SearchInput{
				Query:  genAnyText(datasf.MaxSearchQuery, false).Draw(t, "query"),
				Limit:  genOptionalInt(-3, 25).Draw(t, "limit"),
				Format: genFormat.Draw(t, "format"),
			}
			fail("query", !cleanText(s.Query, false) || blank(s.Query) || utf8.RuneCountInString(s.Query) > 500)
			fail("limit", outside(s.Limit, 1, 20))
			fail("format", !validFormat(s.Format))
			in = s
		case 1:
			s := &datasf.ListInput{
				Category: genAnyText(datasf.MaxCategory, false).Draw(t, "category"),
				Limit:    genOptionalInt(-3, 110).Draw(t, "limit"),
				Format:   genFormat.Draw(t, "format"),
			}
			fail("category", !cleanText(s.Category, false) || utf8.RuneCountInString(s.Category) > 200)
			fail("limit", outside(s.Limit, 1, 100))
			fail("format", !validFormat(s.Format))
			in = s
		case 2:
			s := &datasf.SchemaInput{
				DatasetID: genDatasetID().Draw(t, "dataset_id"),
				Format:    genFormat.Draw(t, "format"),
			}
			fail("dataset_id", !fourByFour.MatchString(validate.NormalizeDatasetID(s.DatasetID)))
			fail("format", !validFormat(s.Format))
			in = s
		case 3:
			s := &datasf.QueryInput{
				DatasetID:  genDatasetID().Draw(t, "dataset_id"),
				SoQL:       genAnyText(datasf.MaxSoQL, true).Draw(t, "soql"),
				SampleSize: genOptionalInt(-3, 110).Draw(t, "sample_size"),
				Format:     genFormat.Draw(t, "format"),
			}
			fail("dataset_id", !fourByFour.MatchString(validate.NormalizeDatasetID(s.DatasetID)))
			fail("soql", !cleanText(s.SoQL, true) || blank(s.SoQL) || utf8.RuneCountInString(s.SoQL) > datasf.MaxSoQL)
			fail("sample_size", outside(s.SampleSize, 1, 100))
			fail("format", !validFormat(s.Format))
			in = s
		case 4:
			s := &datasf.ListResultsInput{Format: genFormat.Draw(t, "format")}
			fail("format", !validFormat(s.Format))
			in = s
		default:
			s := &datasf.AnalyzeInput{
				SQL:     genText(datasf.MaxAnalyzeSQL, true).Draw(t, "sql"),
				Results: rapid.MapOfN(rapid.StringMatching(`t[0-9]{1,3}`), rapid.Just("resource://x"), 0, 18).Draw(t, "results"),
				Format:  genFormat.Draw(t, "format"),
			}
			if rapid.IntRange(0, 9).Draw(t, "nil results") == 0 {
				s.Results = nil
			}
			fail("sql", blank(s.SQL) || utf8.RuneCountInString(s.SQL) > 25000)
			fail("results", len(s.Results) < 1 || len(s.Results) > 16)
			fail("format", !validFormat(s.Format))
			in = s
		}
		slices.Sort(want)
		err := validate.Struct(in)
		got := failingFields(t, err)
		if !slices.Equal(got, want) {
			t.Fatalf("validate.Struct(%T) fails for %v; want %v (error: %v)", in, got, want, err)
		}
		if err == nil {
			return
		}
		var verr *validate.Error
		errors.As(err, &verr)
		for _, f := range verr.Fields {
			if !strings.Contains(f.Message, f.Field) {
				t.Fatalf("message %q of field %s does not contain the field name", f.Message, f.Field)
			}
			if !strings.Contains(err.Error(), f.Field) {
				t.Fatalf("error text %q does not contain the failing field %s", err, f.Field)
			}
		}
	})
}
