package validate

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// The test inputs look like the tools' (package datasf), with their own
// limits: this package has none.
type searchIn struct {
	Query  string `json:"query" validate:"required,cleantext,notblank,min=1,max=500" jsonschema:"Keywords."`
	Limit  *int   `json:"limit,omitempty" validate:"omitnil,min=1,max=20" default:"5"`
	Format string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

type listIn struct {
	Category string `json:"category,omitempty" validate:"omitempty,cleantext,max=200"`
	Limit    *int   `json:"limit,omitempty" validate:"omitnil,min=1,max=100"`
}

type queryIn struct {
	DatasetID   string `json:"dataset_id" validate:"required,fourbyfour"`
	SoQL        string `json:"soql" validate:"required,cleansoql,notblank,min=1,max=4000"`
	AutoCorrect *bool  `json:"auto_correct,omitempty" default:"true"`
	SampleSize  *int   `json:"sample_size,omitempty" validate:"omitnil,min=1,max=100"`
}

type analyzeIn struct {
	SQL     string            `json:"sql" validate:"required,notblank,min=1,max=25000"`
	Results map[string]string `json:"results" validate:"required,min=1,max=16"`
}

// tagged has fields JSON skips or no rule.
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
		name string
		in   any
		want []rule // nil: valid
	}{
		{"search ok", &searchIn{Query: "fire incidents"}, nil},
		{"search 1 char", &searchIn{Query: "x"}, nil},
		{"search 500 chars", &searchIn{Query: strings.Repeat("a", 500)}, nil},
		{"search 501 chars", &searchIn{Query: strings.Repeat("a", 501)}, []rule{{"query", "max"}}},
		{"search 500 multibyte chars", &searchIn{Query: strings.Repeat("é", 500)}, nil},
		{"search 500 emoji", &searchIn{Query: strings.Repeat("🚒", 500)}, nil},
		{"search 501 multibyte chars", &searchIn{Query: strings.Repeat("é", 501)}, []rule{{"query", "max"}}},
		{"search empty", &searchIn{}, []rule{{"query", "required"}}},
		{"search blank", &searchIn{Query: " \u00a0 "}, []rule{{"query", "notblank"}}},
		{"search tab", &searchIn{Query: "a\tb"}, []rule{{"query", "cleantext"}}},
		{"search newline", &searchIn{Query: "a\nb"}, []rule{{"query", "cleantext"}}},
		{"search NUL", &searchIn{Query: "ok\x00"}, []rule{{"query", "cleantext"}}},
		{"search DEL", &searchIn{Query: "ok\x7f"}, []rule{{"query", "cleantext"}}},
		{"search C1 control", &searchIn{Query: "ok\u0085"}, []rule{{"query", "cleantext"}}},
		{"search bad UTF-8", &searchIn{Query: "caf\xe9"}, []rule{{"query", "cleantext"}}},
		{"search limit unset", &searchIn{Query: "x", Limit: nil}, nil},
		{"search limit 0", &searchIn{Query: "x", Limit: ptr(0)}, []rule{{"limit", "min"}}},
		{"search limit 1", &searchIn{Query: "x", Limit: ptr(1)}, nil},
		{"search limit 20", &searchIn{Query: "x", Limit: ptr(20)}, nil},
		{"search limit 21", &searchIn{Query: "x", Limit: ptr(21)}, []rule{{"limit", "max"}}},
		{"search limit -1", &searchIn{Query: "x", Limit: ptr(-1)}, []rule{{"limit", "min"}}},
		{"search bad format", &searchIn{Query: "x", Format: "xml"}, []rule{{"format", "oneof"}}},
		{"search two errors", &searchIn{Query: "", Limit: ptr(50)}, []rule{{"query", "required"}, {"limit", "max"}}},
		{"search by value", searchIn{Query: "x"}, nil},

		{"list empty", &listIn{}, nil},
		{"list category", &listIn{Category: "Public Safety", Limit: ptr(100)}, nil},
		{"list category 200", &listIn{Category: strings.Repeat("c", 200)}, nil},
		{"list category 201", &listIn{Category: strings.Repeat("c", 201)}, []rule{{"category", "max"}}},
		{"list category control", &listIn{Category: "a\x1bb"}, []rule{{"category", "cleantext"}}},
		{"list limit 0", &listIn{Limit: ptr(0)}, []rule{{"limit", "min"}}},
		{"list limit 101", &listIn{Limit: ptr(101)}, []rule{{"limit", "max"}}},

		{"query ok", &queryIn{DatasetID: id, SoQL: "SELECT count(*)"}, nil},
		{"query tabs and newlines", &queryIn{DatasetID: id, SoQL: "SELECT a,\n\tb\r\nWHERE c > 1"}, nil},
		{"query 4000 multibyte", &queryIn{DatasetID: id, SoQL: strings.Repeat("ü", 4000)}, nil},
		{"query 4001", &queryIn{DatasetID: id, SoQL: strings.Repeat("x", 4001)}, []rule{{"soql", "max"}}},
		{"query blank", &queryIn{DatasetID: id, SoQL: "\n\t "}, []rule{{"soql", "notblank"}}},
		{"query control", &queryIn{DatasetID: id, SoQL: "SELECT n\x01"}, []rule{{"soql", "cleansoql"}}},
		{"query bad UTF-8", &queryIn{DatasetID: id, SoQL: "SELECT \xff\xfe"}, []rule{{"soql", "cleansoql"}}},
		{"query sample 0", &queryIn{DatasetID: id, SoQL: "SELECT a", SampleSize: ptr(0)}, []rule{{"sample_size", "min"}}},
		{"query sample 100", &queryIn{DatasetID: id, SoQL: "SELECT a", SampleSize: ptr(100)}, nil},
		{"query auto_correct false", &queryIn{DatasetID: id, SoQL: "SELECT a", AutoCorrect: ptr(false)}, nil},
		{"query all wrong", &queryIn{DatasetID: "x", SampleSize: ptr(1000)}, []rule{{"dataset_id", "fourbyfour"}, {"soql", "required"}, {"sample_size", "max"}}},
		{"query upper id", &queryIn{DatasetID: "ABCD-1234", SoQL: "SELECT a"}, nil},
		{"query id with underscore", &queryIn{DatasetID: "abcd_1234", SoQL: "SELECT a"}, []rule{{"dataset_id", "fourbyfour"}}},

		{"analyze ok", &analyzeIn{SQL: "SELECT 1", Results: map[string]string{"t": "x"}}, nil},
		{"analyze no results", &analyzeIn{SQL: "SELECT 1"}, []rule{{"results", "required"}}},
		{"analyze empty results", &analyzeIn{SQL: "SELECT 1", Results: map[string]string{}}, []rule{{"results", "min"}}},
		{"analyze 17 results", &analyzeIn{SQL: "SELECT 1", Results: manyEntries(17)}, []rule{{"results", "max"}}},
		{"analyze 16 results", &analyzeIn{SQL: "SELECT 1", Results: manyEntries(16)}, nil},
		{"analyze blank sql", &analyzeIn{SQL: "  ", Results: manyEntries(1)}, []rule{{"sql", "notblank"}}},

		{"tags ok", &tagged{ID: id}, nil},
		{"tags bad", &tagged{ID: "x", Name: "\x00"}, []rule{{"id", "fourbyfour"}, {"name", "cleantext"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Struct(tt.in)
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
		{"query too long", Struct(&searchIn{Query: strings.Repeat("q", 612)}), `query must be 1 to 500 characters; got 612`},
		{"query too long multibyte", Struct(&searchIn{Query: strings.Repeat("日", 501)}), `query must be 1 to 500 characters; got 501`},
		{"query blank", Struct(&searchIn{Query: "   "}), `query must not be empty`},
		{"soql empty", Struct(&queryIn{DatasetID: id}), `soql must not be empty`},
		{"soql too long", Struct(&queryIn{DatasetID: id, SoQL: strings.Repeat("s", 4001)}), `soql must be 1 to 4000 characters; got 4001`},
		{"soql control", Struct(&queryIn{DatasetID: id, SoQL: "SELECT a\x07"}), `soql must not contain control characters; found U+0007 at byte 8`},
		{"soql bad UTF-8", Struct(&queryIn{DatasetID: id, SoQL: "SELECT \xff"}), `soql must be valid UTF-8 text; byte 7 (0xFF) is not`},
		{"limit", Struct(&searchIn{Query: "x", Limit: ptr(50)}), `limit must be between 1 and 20; got 50`},
		{"limit zero", Struct(&searchIn{Query: "x", Limit: ptr(0)}), `limit must be between 1 and 20; got 0`},
		{"list limit", Struct(&listIn{Limit: ptr(101)}), `limit must be between 1 and 100; got 101`},
		{"category", Struct(&listIn{Category: strings.Repeat("c", 201)}), `category must be at most 200 characters; got 201`},
		{"sample size", Struct(&queryIn{DatasetID: id, SoQL: "SELECT a", SampleSize: ptr(-3)}), `sample_size must be between 1 and 100; got -3`},
		{"format", Struct(&searchIn{Query: "x", Format: "xml"}), `format must be one of auto, json, markdown; got "xml"`},
		{"entries", Struct(&analyzeIn{SQL: "SELECT 1", Results: map[string]string{}}), `results must have 1 to 16 entries; got 0`},
		{"two fields", Struct(&searchIn{Limit: ptr(21)}), `query must not be empty; limit must be between 1 and 20; got 21`},
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
		in any
	}{
		{&searchIn{Query: "", Limit: ptr(99), Format: "x"}},
		{&searchIn{Query: strings.Repeat("a", 501)}},
		{&searchIn{Query: "a\x00"}},
		{&searchIn{Query: "  "}},
		{&listIn{Category: strings.Repeat("a", 201), Limit: ptr(-1)}},
		{&listIn{Category: "\x01"}},
		{&queryIn{DatasetID: "", SoQL: "", SampleSize: ptr(101)}},
		{&queryIn{DatasetID: "nope", SoQL: strings.Repeat("a", 4001)}},
		{&queryIn{DatasetID: "nope", SoQL: "\x1b"}},
		{&queryIn{DatasetID: "nope", SoQL: " \n "}},
		{&analyzeIn{SQL: " "}},
		{&analyzeIn{SQL: strings.Repeat("a", 25001), Results: manyEntries(17)}},
		{&analyzeIn{SQL: "", Results: map[string]string{}}},
	}
	seen := map[string]bool{}
	for _, tt := range inputs {
		err := Struct(tt.in)
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
	for _, r := range []string{"required", "notblank", "fourbyfour", "cleantext", "cleansoql", "min", "max", "oneof"} {
		if !seen[r] {
			t.Errorf("no test input breaks rule %q", r)
		}
	}
}

func TestStructNotAStruct(t *testing.T) {
	t.Parallel()
	for _, v := range []any{42, nil, (*searchIn)(nil)} {
		err := Struct(v)
		var e *Error
		if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "arguments" {
			t.Fatalf("Struct(%#v) = %#v; want an *Error on arguments", v, err)
		}
		if rawValidatorText.MatchString(err.Error()) {
			t.Errorf("Struct(%#v) = %q shows validator's raw text", v, err)
		}
	}
}

// TestSchema: the schema states what the tags say, once.
func TestSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  func() (*jsonschema.Schema, error)
		want string
	}{
		{"search", Schema[searchIn], `{"type":"object","properties":{` +
			`"query":{"type":"string","description":"Keywords.","minLength":1,"maxLength":500},` +
			`"limit":{"type":"integer","default":5,"minimum":1,"maximum":20},` +
			`"format":{"type":"string","enum":["auto","json","markdown"]}},` +
			`"required":["query"],"additionalProperties":false}`},
		{"list", Schema[listIn], `{"type":"object","properties":{` +
			`"category":{"type":"string","maxLength":200},` +
			`"limit":{"type":"integer","minimum":1,"maximum":100}},` +
			`"additionalProperties":false}`},
		{"query", Schema[queryIn], `{"type":"object","properties":{` +
			`"dataset_id":{"type":"string"},` +
			`"soql":{"type":"string","minLength":1,"maxLength":4000},` +
			`"auto_correct":{"type":"boolean","default":true},` +
			`"sample_size":{"type":"integer","minimum":1,"maximum":100}},` +
			`"required":["dataset_id","soql"],"additionalProperties":false}`},
		{"analyze", Schema[analyzeIn], `{"type":"object","properties":{` +
			`"sql":{"type":"string","minLength":1,"maxLength":25000},` +
			`"results":{"type":"object","additionalProperties":{"type":"string"},"minProperties":1,"maxProperties":16}},` +
			`"required":["sql","results"],"additionalProperties":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Schema (-want +got):\n%s\ngot %s", diff, b)
			}
		})
	}
}

type badDefault struct {
	N *int `json:"n,omitempty" default:"five"`
}

func TestSchemaBadDefault(t *testing.T) {
	t.Parallel()
	if _, err := Schema[badDefault](); err == nil || !strings.Contains(err.Error(), "default") {
		t.Fatalf("Schema[badDefault]() = %v; want an error about the default", err)
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

// A FieldError's Problem is its Message without the field's name, so a
// caller can name the field its own way.
func TestFieldErrorProblem(t *testing.T) {
	t.Parallel()
	var verr *Error
	if err := Struct(queryIn{}); !errors.As(err, &verr) {
		t.Fatalf("Struct(queryIn{}) = %v; want an *Error", err)
	}
	for _, f := range verr.Fields {
		if f.Problem == "" || f.Message != f.Field+" "+f.Problem {
			t.Errorf("FieldError %+v: Message is not Field, a space, Problem", f)
		}
	}
}
