package validate

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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

func TestStruct(t *testing.T) {
	t.Parallel()
	no := false
	tests := []struct {
		name string
		in   any
		want []rule // nil: valid
	}{
		// search_datasf
		{"search ok", &SearchInput{Query: "fire incidents"}, nil},
		{"search 1 char", &SearchInput{Query: "x"}, nil},
		{"search 500 chars", &SearchInput{Query: strings.Repeat("a", 500)}, nil},
		{"search 501 chars", &SearchInput{Query: strings.Repeat("a", 501)}, []rule{{"query", "chars"}}},
		{"search 500 multibyte chars", &SearchInput{Query: strings.Repeat("é", 500)}, nil},
		{"search 500 emoji", &SearchInput{Query: strings.Repeat("🚒", 500)}, nil},
		{"search 501 multibyte chars", &SearchInput{Query: strings.Repeat("é", 501)}, []rule{{"query", "chars"}}},
		{"search empty", &SearchInput{}, []rule{{"query", "required"}}},
		{"search blank", &SearchInput{Query: " \u00a0 "}, []rule{{"query", "notblank"}}},
		{"search tab", &SearchInput{Query: "a\tb"}, []rule{{"query", "cleantext"}}},
		{"search newline", &SearchInput{Query: "a\nb"}, []rule{{"query", "cleantext"}}},
		{"search NUL", &SearchInput{Query: "ok\x00"}, []rule{{"query", "cleantext"}}},
		{"search DEL", &SearchInput{Query: "ok\x7f"}, []rule{{"query", "cleantext"}}},
		{"search C1 control", &SearchInput{Query: "ok\u0085"}, []rule{{"query", "cleantext"}}},
		{"search bad UTF-8", &SearchInput{Query: "caf\xe9"}, []rule{{"query", "cleantext"}}},
		{"search limit 1", &SearchInput{Query: "x", Limit: 1}, nil},
		{"search limit 20", &SearchInput{Query: "x", Limit: 20}, nil},
		{"search limit 21", &SearchInput{Query: "x", Limit: 21}, []rule{{"limit", "between"}}},
		{"search limit -1", &SearchInput{Query: "x", Limit: -1}, []rule{{"limit", "between"}}},
		{"search bad format", &SearchInput{Query: "x", Format: "xml"}, []rule{{"format", "oneof"}}},
		{"search two errors", &SearchInput{Query: "", Limit: 50}, []rule{{"query", "required"}, {"limit", "between"}}},

		// list_datasf
		{"list empty", &ListInput{}, nil},
		{"list category", &ListInput{Category: "Public Safety", Limit: 100}, nil},
		{"list category 200", &ListInput{Category: strings.Repeat("c", 200)}, nil},
		{"list category 201", &ListInput{Category: strings.Repeat("c", 201)}, []rule{{"category", "chars"}}},
		{"list category control", &ListInput{Category: "a\x1bb"}, []rule{{"category", "cleantext"}}},
		{"list limit 101", &ListInput{Limit: 101}, []rule{{"limit", "between"}}},
		{"list limit -5", &ListInput{Limit: -5}, []rule{{"limit", "between"}}},

		// get_schema
		{"schema ok", &SchemaInput{DatasetID: "wg3w-h783"}, nil},
		{"schema digits", &SchemaInput{DatasetID: "1234-5678"}, nil},
		{"schema empty", &SchemaInput{}, []rule{{"dataset_id", "required"}}},
		{"schema upper", &SchemaInput{DatasetID: "ABCD-1234"}, []rule{{"dataset_id", "fourbyfour"}}},
		{"schema short", &SchemaInput{DatasetID: "ABC"}, []rule{{"dataset_id", "fourbyfour"}}},
		{"schema no hyphen", &SchemaInput{DatasetID: "abcd1234"}, []rule{{"dataset_id", "fourbyfour"}}},
		{"schema 3-5", &SchemaInput{DatasetID: "abc-12345"}, []rule{{"dataset_id", "fourbyfour"}}},
		{"schema trailing", &SchemaInput{DatasetID: "abcd-1234-x"}, []rule{{"dataset_id", "fourbyfour"}}},
		{"schema trailing newline", &SchemaInput{DatasetID: "abcd-1234\n"}, []rule{{"dataset_id", "fourbyfour"}}},
		{"schema accent", &SchemaInput{DatasetID: "abcd-123é"}, []rule{{"dataset_id", "fourbyfour"}}},
		{"schema path", &SchemaInput{DatasetID: "../../etc"}, []rule{{"dataset_id", "fourbyfour"}}},

		// query_datasf
		{"query ok", &QueryInput{DatasetID: "wg3w-h783", SoQL: "SELECT count(*)"}, nil},
		{"query tabs and newlines", &QueryInput{DatasetID: "wg3w-h783", SoQL: "SELECT a,\n\tb\r\nWHERE c > 1"}, nil},
		{"query 4000", &QueryInput{DatasetID: "wg3w-h783", SoQL: strings.Repeat("x", 4000)}, nil},
		{"query 4001", &QueryInput{DatasetID: "wg3w-h783", SoQL: strings.Repeat("x", 4001)}, []rule{{"soql", "chars"}}},
		{"query 4000 multibyte", &QueryInput{DatasetID: "wg3w-h783", SoQL: strings.Repeat("ü", 4000)}, nil},
		{"query 4001 multibyte", &QueryInput{DatasetID: "wg3w-h783", SoQL: strings.Repeat("ü", 4001)}, []rule{{"soql", "chars"}}},
		{"query empty", &QueryInput{DatasetID: "wg3w-h783"}, []rule{{"soql", "required"}}},
		{"query blank", &QueryInput{DatasetID: "wg3w-h783", SoQL: "\n\t "}, []rule{{"soql", "notblank"}}},
		{"query control", &QueryInput{DatasetID: "wg3w-h783", SoQL: "SELECT n\x01"}, []rule{{"soql", "cleansoql"}}},
		{"query bad UTF-8", &QueryInput{DatasetID: "wg3w-h783", SoQL: "SELECT \xff\xfe"}, []rule{{"soql", "cleansoql"}}},
		{"query sample 1", &QueryInput{DatasetID: "wg3w-h783", SoQL: "SELECT a", SampleSize: 1}, nil},
		{"query sample 100", &QueryInput{DatasetID: "wg3w-h783", SoQL: "SELECT a", SampleSize: 100}, nil},
		{"query sample 101", &QueryInput{DatasetID: "wg3w-h783", SoQL: "SELECT a", SampleSize: 101}, []rule{{"sample_size", "between"}}},
		{"query sample -1", &QueryInput{DatasetID: "wg3w-h783", SoQL: "SELECT a", SampleSize: -1}, []rule{{"sample_size", "between"}}},
		{"query auto_correct false", &QueryInput{DatasetID: "wg3w-h783", SoQL: "SELECT a", AutoCorrect: &no}, nil},
		{"query all wrong", &QueryInput{DatasetID: "x", SampleSize: 1000}, []rule{{"dataset_id", "fourbyfour"}, {"soql", "required"}, {"sample_size", "between"}}},
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

// TestMessages checks the exact wording of the common messages.
func TestMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"dataset id", DatasetID("ABC"), `dataset_id must look like abcd-1234 (4 lowercase letters or digits, a hyphen, 4 more); got "ABC"`},
		{"dataset id empty", DatasetID(""), `dataset_id must not be empty`},
		{"query too long", SearchQuery(strings.Repeat("q", 612)), `query must be 1 to 500 characters; got 612`},
		{"query too long multibyte", SearchQuery(strings.Repeat("日", 501)), `query must be 1 to 500 characters; got 501`},
		{"query blank", SearchQuery("   "), `query must not be empty`},
		{"soql empty", SoQL(""), `soql must not be empty`},
		{"soql too long", SoQL(strings.Repeat("s", 4001)), `soql must be 1 to 4000 characters; got 4001`},
		{"soql control", SoQL("SELECT a\x07"), `soql must not contain control characters; found U+0007 at byte 8`},
		{"soql bad UTF-8", SoQL("SELECT \xff"), `soql must be valid UTF-8 text; byte 7 (0xFF) is not`},
		{"limit", Struct(&SearchInput{Query: "x", Limit: 50}), `limit must be between 1 and 20; got 50`},
		{"list limit", Struct(&ListInput{Limit: 101}), `limit must be between 1 and 100; got 101`},
		{"category", Struct(&ListInput{Category: strings.Repeat("c", 201)}), `category must be at most 200 characters; got 201`},
		{"sample size", Struct(&QueryInput{DatasetID: "abcd-1234", SoQL: "SELECT a", SampleSize: 0 - 3}), `sample_size must be between 1 and 100; got -3`},
		{"format", Struct(&SchemaInput{DatasetID: "abcd-1234", Format: "xml"}), `format must be one of auto, json, markdown; got "xml"`},
		{"two fields", Struct(&SearchInput{Limit: 21}), `query must not be empty; limit must be between 1 and 20; got 21`},
		{"long value clipped", DatasetID(strings.Repeat("x", 50)), `dataset_id must look like abcd-1234 (4 lowercase letters or digits, a hyphen, 4 more); got "` + strings.Repeat("x", 40) + `…"`},
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

// TestSingleValueFuncs checks that DatasetID, SearchQuery and SoQL accept
// good values and report only their own field.
func TestSingleValueFuncs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fn    func(string) error
		in    string
		field string // "" means valid
	}{
		{"DatasetID ok", DatasetID, "wg3w-h783", ""},
		{"DatasetID bad", DatasetID, "wg3w_h783", "dataset_id"},
		{"SearchQuery ok", SearchQuery, "311 cases", ""},
		{"SearchQuery bad", SearchQuery, "", "query"},
		{"SoQL ok", SoQL, "SELECT *", ""},
		{"SoQL bad", SoQL, " ", "soql"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.fn(tt.in)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("%s(%q) = %v; want nil", tt.name, tt.in, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != tt.field {
				t.Fatalf("%s(%q) = %#v; want one error on %s", tt.name, tt.in, err, tt.field)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	s := SearchInput{Query: "x"}
	l := ListInput{}
	q := QueryInput{DatasetID: "abcd-1234", SoQL: "SELECT a"}
	for _, v := range []any{&s, &l, &q} {
		if err := Struct(v); err != nil {
			t.Fatalf("Struct(%T) = %v", v, err)
		}
	}
	if s.Limit != DefaultSearchSize || l.Limit != DefaultListSize {
		t.Errorf("limits after defaults = %d, %d; want %d, %d", s.Limit, l.Limit, DefaultSearchSize, DefaultListSize)
	}
	if q.AutoCorrect == nil || !*q.AutoCorrect {
		t.Errorf("QueryInput.AutoCorrect after defaults = %v; want true", q.AutoCorrect)
	}
	no := false
	q2 := QueryInput{DatasetID: "abcd-1234", SoQL: "SELECT a", AutoCorrect: &no}
	if err := Struct(&q2); err != nil || *q2.AutoCorrect {
		t.Errorf("Struct kept AutoCorrect=false? err=%v value=%v", err, *q2.AutoCorrect)
	}
}

// rawValidatorText matches go-playground/validator's own error wording.
var rawValidatorText = regexp.MustCompile(`Key: '|Error:Field validation|failed on the '|SearchInput\.|ListInput\.|SchemaInput\.|QueryInput\.`)

// TestMessagesNameTheJSONField builds failing inputs for every rule of every
// input struct and checks that each message names the field's JSON name,
// never its Go name, and never shows validator's raw text.
func TestMessagesNameTheJSONField(t *testing.T) {
	t.Parallel()
	inputs := []any{
		&SearchInput{Query: "", Limit: 99, Format: "x"},
		&SearchInput{Query: strings.Repeat("a", 501)},
		&SearchInput{Query: "a\x00"},
		&SearchInput{Query: "  "},
		&ListInput{Category: strings.Repeat("a", 201), Limit: -1, Format: "x"},
		&ListInput{Category: "\x01"},
		&SchemaInput{DatasetID: "", Format: "x"},
		&SchemaInput{DatasetID: "ABCD-EFGH"},
		&QueryInput{DatasetID: "nope", SoQL: "", SampleSize: 101, Format: "x"},
		&QueryInput{DatasetID: "nope", SoQL: strings.Repeat("a", 4001)},
		&QueryInput{DatasetID: "nope", SoQL: "\x1b"},
		&QueryInput{DatasetID: "nope", SoQL: " \n "},
	}
	goNames := map[string]bool{}
	for _, in := range inputs {
		tp := reflect.TypeOf(in).Elem()
		for i := range tp.NumField() {
			goNames[tp.Field(i).Name] = true
		}
	}
	seen := map[string]bool{}
	for _, in := range inputs {
		err := Struct(in)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("Struct(%+v) = %v; want *Error", in, err)
		}
		for _, f := range e.Fields {
			seen[f.Field+"/"+f.Rule] = true
			if !strings.HasPrefix(f.Message, f.Field+" ") {
				t.Errorf("message %q does not start with its field's JSON name %q", f.Message, f.Field)
			}
			if goNames[f.Field] {
				t.Errorf("field %q is a Go name, not a JSON name (message %q)", f.Field, f.Message)
			}
			if strings.Contains(f.Message, "breaks the rule") {
				t.Errorf("rule %q of %q has no plain-words message: %q", f.Rule, f.Field, f.Message)
			}
			if rawValidatorText.MatchString(f.Message) {
				t.Errorf("message %q shows validator's raw text", f.Message)
			}
		}
		if rawValidatorText.MatchString(err.Error()) {
			t.Errorf("error %q shows validator's raw text", err.Error())
		}
	}
	// Every (field, rule) pair declared in the struct tags was exercised.
	for _, in := range inputs {
		tp := reflect.TypeOf(in).Elem()
		for i := range tp.NumField() {
			f := tp.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			for tag := range strings.SplitSeq(f.Tag.Get("validate"), ",") {
				tag, _, _ = strings.Cut(tag, "=")
				if tag == "" || tag == "omitempty" {
					continue
				}
				if !seen[name+"/"+tag] {
					t.Errorf("no test input breaks rule %q of %s.%s (%s)", tag, tp.Name(), f.Name, name)
				}
			}
		}
	}
}

func TestStructNotAStruct(t *testing.T) {
	t.Parallel()
	err := Struct(42)
	var e *Error
	if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Field != "arguments" {
		t.Fatalf("Struct(42) = %#v; want an *Error on arguments", err)
	}
	if rawValidatorText.MatchString(err.Error()) {
		t.Errorf("Struct(42) = %q shows validator's raw text", err)
	}
}

var fourByFour = regexp.MustCompile(`^[a-z0-9]{4}-[a-z0-9]{4}$`)

// FuzzDatasetID: DatasetID accepts a string iff it is a 4x4, never panics,
// and its message names dataset_id.
func FuzzDatasetID(f *testing.F) {
	for _, s := range []string{"", "abcd-1234", "ABCD-1234", "abc-12345", "abcd-1234\n", "wg3w-h783", "\xff\xfe", "abcd-12é", "0000-0000", "abcd—1234"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := DatasetID(s)
		if want := fourByFour.MatchString(s); (err == nil) != want {
			t.Fatalf("DatasetID(%q) = %v; want accepted=%v", s, err, want)
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
