package validate

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The test inputs look like the tools' (package datasf), with their own
// limits: this package has none.
type searchIn struct {
	Query  string `json:"query"`
	Limit  *int   `json:"limit,omitempty"`
	Format string `json:"format,omitempty"`
}

var searchRules = Rules{
	"query":  "required,cleantext,notblank," + Chars(1, 500),
	"limit":  "omitnil," + Between(1, 20),
	"format": "omitempty," + OneOf("auto", "json", "markdown"),
}

type listIn struct {
	Category string `json:"category,omitempty"`
	Limit    *int   `json:"limit,omitempty"`
}

var listRules = Rules{
	"category": "omitempty,cleantext," + Chars(0, 200),
	"limit":    "omitnil," + Between(1, 100),
}

type queryIn struct {
	DatasetID   string `json:"dataset_id"`
	SoQL        string `json:"soql"`
	AutoCorrect *bool  `json:"auto_correct,omitempty"`
	SampleSize  *int   `json:"sample_size,omitempty"`
}

var queryRules = Rules{
	"dataset_id":  "required,fourbyfour",
	"soql":        "required,cleansoql,notblank," + Chars(1, 4000),
	"sample_size": "omitnil," + Between(1, 100),
}

type analyzeIn struct {
	SQL     string            `json:"sql"`
	Results map[string]string `json:"results"`
}

var analyzeRules = Rules{
	"sql":     "required,notblank," + Chars(1, 25000),
	"results": "required," + Entries(1, 16),
}

// tagged takes its rules from struct tags.
type tagged struct {
	ID   string `json:"id" validate:"required,fourbyfour"`
	Name string `json:"name,omitempty" validate:"omitempty,cleantext"`
	Skip string `json:"-" validate:"required"`
	Free string `json:"free"`
}

// rule is the expected (field, rule) of a failure; "" means valid.
type rule struct{ Field, Rule string }

func rules(err error) []rule {
	var e *Error
	if !errors.As(err, &e) {
		return nil
	}
	out := make([]rule, len(e.Fields))
	for i, f := range e.Fields {
		out[i] = rule{f.Field, f.Rule}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestStruct(t *testing.T) {
	t.Parallel()
	const id = "wg3w-h783"
	tests := []struct {
		name  string
		in    any
		rules Rules
		want  []rule // nil: valid
	}{
		{"search ok", &searchIn{Query: "fire incidents"}, searchRules, nil},
		{"search 1 char", &searchIn{Query: "x"}, searchRules, nil},
		{"search 500 chars", &searchIn{Query: strings.Repeat("a", 500)}, searchRules, nil},
		{"search 501 chars", &searchIn{Query: strings.Repeat("a", 501)}, searchRules, []rule{{"query", "chars"}}},
		{"search 500 multibyte chars", &searchIn{Query: strings.Repeat("é", 500)}, searchRules, nil},
		{"search 500 emoji", &searchIn{Query: strings.Repeat("🚒", 500)}, searchRules, nil},
		{"search 501 multibyte chars", &searchIn{Query: strings.Repeat("é", 501)}, searchRules, []rule{{"query", "chars"}}},
		{"search empty", &searchIn{}, searchRules, []rule{{"query", "required"}}},
		{"search blank", &searchIn{Query: " \u00a0 "}, searchRules, []rule{{"query", "notblank"}}},
		{"search tab", &searchIn{Query: "a\tb"}, searchRules, []rule{{"query", "cleantext"}}},
		{"search newline", &searchIn{Query: "a\nb"}, searchRules, []rule{{"query", "cleantext"}}},
		{"search NUL", &searchIn{Query: "ok\x00"}, searchRules, []rule{{"query", "cleantext"}}},
		{"search DEL", &searchIn{Query: "ok\x7f"}, searchRules, []rule{{"query", "cleantext"}}},
		{"search C1 control", &searchIn{Query: "ok\u0085"}, searchRules, []rule{{"query", "cleantext"}}},
		{"search bad UTF-8", &searchIn{Query: "caf\xe9"}, searchRules, []rule{{"query", "cleantext"}}},
		{"search limit unset", &searchIn{Query: "x", Limit: nil}, searchRules, nil},
		{"search limit 0", &searchIn{Query: "x", Limit: ptr(0)}, searchRules, []rule{{"limit", "between"}}},
		{"search limit 1", &searchIn{Query: "x", Limit: ptr(1)}, searchRules, nil},
		{"search limit 20", &searchIn{Query: "x", Limit: ptr(20)}, searchRules, nil},
		{"search limit 21", &searchIn{Query: "x", Limit: ptr(21)}, searchRules, []rule{{"limit", "between"}}},
		{"search limit -1", &searchIn{Query: "x", Limit: ptr(-1)}, searchRules, []rule{{"limit", "between"}}},
		{"search bad format", &searchIn{Query: "x", Format: "xml"}, searchRules, []rule{{"format", "oneof"}}},
		{"search two errors", &searchIn{Query: "", Limit: ptr(50)}, searchRules, []rule{{"query", "required"}, {"limit", "between"}}},
		{"search by value", searchIn{Query: "x"}, searchRules, nil},

		{"list empty", &listIn{}, listRules, nil},
		{"list category", &listIn{Category: "Public Safety", Limit: ptr(100)}, listRules, nil},
		{"list category 200", &listIn{Category: strings.Repeat("c", 200)}, listRules, nil},
		{"list category 201", &listIn{Category: strings.Repeat("c", 201)}, listRules, []rule{{"category", "chars"}}},
		{"list category control", &listIn{Category: "a\x1bb"}, listRules, []rule{{"category", "cleantext"}}},
		{"list limit 0", &listIn{Limit: ptr(0)}, listRules, []rule{{"limit", "between"}}},
		{"list limit 101", &listIn{Limit: ptr(101)}, listRules, []rule{{"limit", "between"}}},

		{"query ok", &queryIn{DatasetID: id, SoQL: "SELECT count(*)"}, queryRules, nil},
		{"query tabs and newlines", &queryIn{DatasetID: id, SoQL: "SELECT a,\n\tb\r\nWHERE c > 1"}, queryRules, nil},
		{"query 4000 multibyte", &queryIn{DatasetID: id, SoQL: strings.Repeat("ü", 4000)}, queryRules, nil},
		{"query 4001", &queryIn{DatasetID: id, SoQL: strings.Repeat("x", 4001)}, queryRules, []rule{{"soql", "chars"}}},
		{"query blank", &queryIn{DatasetID: id, SoQL: "\n\t "}, queryRules, []rule{{"soql", "notblank"}}},
		{"query control", &queryIn{DatasetID: id, SoQL: "SELECT n\x01"}, queryRules, []rule{{"soql", "cleansoql"}}},
		{"query bad UTF-8", &queryIn{DatasetID: id, SoQL: "SELECT \xff\xfe"}, queryRules, []rule{{"soql", "cleansoql"}}},
		{"query sample 0", &queryIn{DatasetID: id, SoQL: "SELECT a", SampleSize: ptr(0)}, queryRules, []rule{{"sample_size", "between"}}},
		{"query sample 100", &queryIn{DatasetID: id, SoQL: "SELECT a", SampleSize: ptr(100)}, queryRules, nil},
		{"query auto_correct false", &queryIn{DatasetID: id, SoQL: "SELECT a", AutoCorrect: ptr(false)}, queryRules, nil},
		{"query all wrong", &queryIn{DatasetID: "x", SampleSize: ptr(1000)}, queryRules, []rule{{"dataset_id", "fourbyfour"}, {"soql", "required"}, {"sample_size", "between"}}},
		{"query upper id", &queryIn{DatasetID: "ABCD-1234", SoQL: "SELECT a"}, queryRules, nil},
		{"query id with underscore", &queryIn{DatasetID: "abcd_1234", SoQL: "SELECT a"}, queryRules, []rule{{"dataset_id", "fourbyfour"}}},

		{"analyze ok", &analyzeIn{SQL: "SELECT 1", Results: map[string]string{"t": "x"}}, analyzeRules, nil},
		{"analyze no results", &analyzeIn{SQL: "SELECT 1"}, analyzeRules, []rule{{"results", "required"}}},
		{"analyze empty results", &analyzeIn{SQL: "SELECT 1", Results: map[string]string{}}, analyzeRules, []rule{{"results", "entries"}}},
		{"analyze 17 results", &analyzeIn{SQL: "SELECT 1", Results: manyEntries(17)}, analyzeRules, []rule{{"results", "entries"}}},
		{"analyze 16 results", &analyzeIn{SQL: "SELECT 1", Results: manyEntries(16)}, analyzeRules, nil},
		{"analyze blank sql", &analyzeIn{SQL: "  ", Results: manyEntries(1)}, analyzeRules, []rule{{"sql", "notblank"}}},

		{"tags ok", &tagged{ID: id}, nil, nil},
		{"tags bad", &tagged{ID: "x", Name: "\x00"}, nil, []rule{{"id", "fourbyfour"}, {"name", "cleantext"}}},
		{"rules replace tags", &tagged{ID: "x"}, Rules{"id": "required"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Struct(tt.in, tt.rules)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Struct(%+v) = %v; want nil", tt.in, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Struct(%+v) = %v (%T); want *Error", tt.in, err, err)
			}
			if diff := cmp.Diff(tt.want, rules(err)); diff != "" {
				t.Errorf("Struct(%+v) rules (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func manyEntries(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[strings.Repeat("t", i+1)] = "x"
	}
	return m
}

// TestMessages checks the exact wording of the messages.
func TestMessages(t *testing.T) {
	t.Parallel()
	const id = "abcd-1234"
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"dataset id", DatasetID("ABC"), `dataset_id must be a dataset id like abcd-1234 (4 letters or digits, a hyphen, 4 more) or the dataset's URL; got "ABC"`},
		{"dataset id empty", DatasetID(""), `dataset_id must not be empty`},
		{"query too long", Struct(&searchIn{Query: strings.Repeat("q", 612)}, searchRules), `query must be 1 to 500 characters; got 612`},
		{"query too long multibyte", Struct(&searchIn{Query: strings.Repeat("日", 501)}, searchRules), `query must be 1 to 500 characters; got 501`},
		{"query blank", Struct(&searchIn{Query: "   "}, searchRules), `query must not be empty`},
		{"soql empty", Struct(&queryIn{DatasetID: id}, queryRules), `soql must not be empty`},
		{"soql too long", Struct(&queryIn{DatasetID: id, SoQL: strings.Repeat("s", 4001)}, queryRules), `soql must be 1 to 4000 characters; got 4001`},
		{"soql control", Struct(&queryIn{DatasetID: id, SoQL: "SELECT a\x07"}, queryRules), `soql must not contain control characters; found U+0007 at byte 8`},
		{"soql bad UTF-8", Struct(&queryIn{DatasetID: id, SoQL: "SELECT \xff"}, queryRules), `soql must be valid UTF-8 text; byte 7 (0xFF) is not`},
		{"limit", Struct(&searchIn{Query: "x", Limit: ptr(50)}, searchRules), `limit must be between 1 and 20; got 50`},
		{"limit zero", Struct(&searchIn{Query: "x", Limit: ptr(0)}, searchRules), `limit must be between 1 and 20; got 0`},
		{"list limit", Struct(&listIn{Limit: ptr(101)}, listRules), `limit must be between 1 and 100; got 101`},
		{"category", Struct(&listIn{Category: strings.Repeat("c", 201)}, listRules), `category must be at most 200 characters; got 201`},
		{"sample size", Struct(&queryIn{DatasetID: id, SoQL: "SELECT a", SampleSize: ptr(-3)}, queryRules), `sample_size must be between 1 and 100; got -3`},
		{"format", Struct(&searchIn{Query: "x", Format: "xml"}, searchRules), `format must be one of auto, json, markdown; got "xml"`},
		{"entries", Struct(&analyzeIn{SQL: "SELECT 1", Results: map[string]string{}}, analyzeRules), `results must have 1 to 16 entries; got 0`},
		{"two fields", Struct(&searchIn{Limit: ptr(21)}, searchRules), `query must not be empty; limit must be between 1 and 20; got 21`},
		{"long value clipped", DatasetID(strings.Repeat("x", 50)), `dataset_id must be a dataset id like abcd-1234 (4 letters or digits, a hyphen, 4 more) or the dataset's URL; got "` + strings.Repeat("x", 40) + `…"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.err == nil {
				t.Fatalf("got nil error; want %q", tt.want)
			}
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("message = %q; want %q", got, tt.want)
			}
		})
	}
}

// rawValidatorText matches go-playground/validator's own error wording.
var rawValidatorText = regexp.MustCompile(`Key: '|Error:Field validation|failed on the '|In\.`)

// TestEveryRuleHasAMessage breaks every rule of the test inputs and checks
// that each message starts with the field's JSON name, is written in plain
// words and never shows validator's raw text.
func TestEveryRuleHasAMessage(t *testing.T) {
	t.Parallel()
	inputs := []struct {
		in    any
		rules Rules
	}{
		{&searchIn{Query: "", Limit: ptr(99), Format: "x"}, searchRules},
		{&searchIn{Query: strings.Repeat("a", 501)}, searchRules},
		{&searchIn{Query: "a\x00"}, searchRules},
		{&searchIn{Query: "  "}, searchRules},
		{&listIn{Category: strings.Repeat("a", 201), Limit: ptr(-1)}, listRules},
		{&listIn{Category: "\x01"}, listRules},
		{&queryIn{DatasetID: "", SoQL: "", SampleSize: ptr(101)}, queryRules},
		{&queryIn{DatasetID: "nope", SoQL: strings.Repeat("a", 4001)}, queryRules},
		{&queryIn{DatasetID: "nope", SoQL: "\x1b"}, queryRules},
		{&queryIn{DatasetID: "nope", SoQL: " \n "}, queryRules},
		{&analyzeIn{SQL: " "}, analyzeRules},
		{&analyzeIn{SQL: strings.Repeat("a", 25001), Results: manyEntries(17)}, analyzeRules},
		{&analyzeIn{SQL: "", Results: map[string]string{}}, analyzeRules},
	}
	seen := map[string]bool{}
	for _, tt := range inputs {
		err := Struct(tt.in, tt.rules)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("Struct(%+v) = %v; want *Error", tt.in, err)
		}
		for _, f := range e.Fields {
			seen[f.Rule] = true
			if !strings.HasPrefix(f.Message, f.Field+" ") {
				t.Errorf("message %q does not start with its field's JSON name %q", f.Message, f.Field)
			}
			if strings.Contains(f.Message, "breaks the rule") {
				t.Errorf("rule %q of %q has no plain-words message: %q", f.Rule, f.Field, f.Message)
			}
			if rawValidatorText.MatchString(f.Message) {
				t.Errorf("message %q shows validator's raw text", f.Message)
			}
		}
	}
	for _, r := range []string{"required", "notblank", "fourbyfour", "cleantext", "cleansoql", "chars", "between", "entries", "oneof"} {
		if !seen[r] {
			t.Errorf("no test input breaks rule %q", r)
		}
	}
}

func TestStructNotAStruct(t *testing.T) {
	t.Parallel()
	for _, v := range []any{42, nil, (*searchIn)(nil)} {
		err := Struct(v, searchRules)
		var e *Error
		if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "arguments" {
			t.Fatalf("Struct(%#v) = %#v; want an *Error on arguments", v, err)
		}
		if rawValidatorText.MatchString(err.Error()) {
			t.Errorf("Struct(%#v) = %q shows validator's raw text", v, err)
		}
	}
}

func TestRuleBuilders(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ got, want string }{
		{Chars(1, 500), "chars=1 500"},
		{Between(1, 20), "between=1 20"},
		{Entries(1, 16), "entries=1 16"},
		{OneOf("auto", "json"), "oneof=auto json"},
	} {
		if tt.got != tt.want {
			t.Errorf("rule = %q; want %q", tt.got, tt.want)
		}
	}
}

var fourByFour = regexp.MustCompile(`^[a-z0-9]{4}-[a-z0-9]{4}$`)

// FuzzDatasetID: DatasetID accepts a string iff it is a 4x4 once its ASCII
// white space is trimmed and it is lower-cased, or a URL that
// NormalizeDatasetID reads a 4x4 from; it never panics, and its message
// names dataset_id.
func FuzzDatasetID(f *testing.F) {
	for _, s := range []string{"", "abcd-1234", "ABCD-1234", "abc-12345", "abcd-1234\n", "wg3w-h783", "https://data.sfgov.org/d/wg3w-h783", "https://x/wg3w-h783.json?a=b", "\xff\xfe", "abcd-12é", "0000-0000", "abcd—1234"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := DatasetID(s)
		bare := fourByFour.MatchString(strings.ToLower(strings.Trim(s, " \t\n\r")))
		url := strings.Contains(s, "://") && fourByFour.MatchString(NormalizeDatasetID(s))
		if want := bare || url; (err == nil) != want {
			t.Fatalf("DatasetID(%q) = %v; want accepted=%v", s, err, want)
		}
		if err == nil && !fourByFour.MatchString(NormalizeDatasetID(s)) {
			t.Fatalf("NormalizeDatasetID(%q) = %q; want a lower-case 4x4", s, NormalizeDatasetID(s))
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "dataset_id must ") {
				t.Fatalf("DatasetID(%q) = %q; want a message about dataset_id", s, err)
			}
			if rawValidatorText.MatchString(err.Error()) {
				t.Fatalf("DatasetID(%q) = %q shows validator's raw text", s, err)
			}
		}
	})
}

// Dataset ids are accepted as models write them and normalized to the bare
// lower-case id; everything else is refused and left as it is.
func TestNormalizeDatasetID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string // want "" means refused
	}{
		{"wg3w-h783", "wg3w-h783"},
		{"WG3W-H783", "wg3w-h783"},
		{"  Wg3w-H783\n", "wg3w-h783"},
		{"\twg3w-h783\r\n", "wg3w-h783"},
		{"https://data.sfgov.org/Public-Safety/Police-Department-Incident-Reports-2018-to-Present/wg3w-h783", "wg3w-h783"},
		{"https://data.sfgov.org/Public-Safety/Police-Department-Incident-Reports-2018-to-Present/wg3w-h783/about_data", "wg3w-h783"},
		{"https://data.sfgov.org/resource/wg3w-h783.json?$limit=5", "wg3w-h783"},
		{"https://data.sfgov.org/api/views/WG3W-H783.json", "wg3w-h783"},
		{"http://data.sfgov.org/d/wg3w-h783/", "wg3w-h783"},
		{"https://data.sfgov.org/d/wg3w-h783#section", "wg3w-h783"},
		{" https://data.sfgov.org/d/wg3w-h783 ", "wg3w-h783"},
		{"", ""},
		{"wg3w", ""},
		{"wg3w_h783", ""},
		{"wg3w-h783x", ""},
		{"wg3w-h78é", ""},
		{"wg3w -h783", ""},
		{"../../etc", ""},
		{"https://data.sfgov.org/", ""},
		{"https://data.sfgov.org/resource/wg3w-h783/rows/extra", ""},
		{"ftp://data.sfgov.org/d/wg3w-h783", ""},
		{"data.sfgov.org/d/wg3w-h783", ""},
		{"wg3w-h783\u00a0", ""}, // only ASCII white space is trimmed
	}
	for _, tt := range tests {
		err := DatasetID(tt.in)
		got := NormalizeDatasetID(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("DatasetID(%q) = nil; want an error", tt.in)
			}
			if got != tt.in {
				t.Errorf("NormalizeDatasetID(%q) = %q; want it unchanged", tt.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("DatasetID(%q) = %v; want nil", tt.in, err)
		}
		if got != tt.want {
			t.Errorf("NormalizeDatasetID(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
