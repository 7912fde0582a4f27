// Package validate checks the MCP tools' inputs with
// github.com/go-playground/validator/v10 and reports problems in plain words
// that name the argument (its JSON name) and the rule it broke, for example
//
//	dataset_id must look like abcd-1234 (4 lowercase letters or digits, a hyphen, 4 more); got "ABC"
//	query must be 1 to 500 characters; got 612
//	limit must be between 1 and 20; got 50
//
// It never shows validator's own "Key: 'X.Y' Error:Field validation" text.
// Lengths are counted in characters (runes), not bytes. Text must be valid
// UTF-8 without control characters (SoQL may contain tabs and line breaks),
// and text that is only white space counts as empty.
//
// Struct validates one of the input structs (after filling its defaults);
// DatasetID, SearchQuery and SoQL check a single value.
package validate

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
)

// Limits and defaults of the tools' arguments.
const (
	MaxSearchQuery    = 500
	MaxSoQL           = 4000
	MaxCategory       = 200
	DefaultSearchSize = 5
	MaxSearchSize     = 20
	DefaultListSize   = 10
	MaxListSize       = 100
	MaxSampleSize     = 100
)

// datasetIDPattern is the shape of a Socrata dataset id ("4x4").
var datasetIDPattern = regexp.MustCompile(`^[a-z0-9]{4}-[a-z0-9]{4}$`)

// SearchInput is search_datasf's arguments. A zero Limit means
// DefaultSearchSize.
type SearchInput struct {
	Query  string `json:"query" validate:"required,cleantext,notblank,chars=1 500"`
	Limit  int    `json:"limit,omitempty" validate:"omitempty,between=1 20"`
	Format string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

// ListInput is list_datasf's arguments. A zero Limit means DefaultListSize.
type ListInput struct {
	Category string `json:"category,omitempty" validate:"omitempty,cleantext,chars=0 200"`
	Limit    int    `json:"limit,omitempty" validate:"omitempty,between=1 100"`
	Format   string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

// SchemaInput is get_schema's arguments.
type SchemaInput struct {
	DatasetID string `json:"dataset_id" validate:"required,fourbyfour"`
	Format    string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

// QueryInput is query_datasf's arguments. A nil AutoCorrect means true; a
// zero SampleSize means the server's default.
type QueryInput struct {
	DatasetID   string `json:"dataset_id" validate:"required,fourbyfour"`
	SoQL        string `json:"soql" validate:"required,cleansoql,notblank,chars=1 4000"`
	AutoCorrect *bool  `json:"auto_correct,omitempty"`
	SampleSize  int    `json:"sample_size,omitempty" validate:"omitempty,between=1 100"`
	Format      string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

// Defaults fills a zero Limit with DefaultSearchSize; Struct calls it.
func (in *SearchInput) Defaults() {
	if in.Limit == 0 {
		in.Limit = DefaultSearchSize
	}
}

// Defaults fills a zero Limit with DefaultListSize; Struct calls it.
func (in *ListInput) Defaults() {
	if in.Limit == 0 {
		in.Limit = DefaultListSize
	}
}

// Defaults sets a nil AutoCorrect to true; Struct calls it.
func (in *QueryInput) Defaults() {
	if in.AutoCorrect == nil {
		t := true
		in.AutoCorrect = &t
	}
}

// FieldError is one argument that failed one rule.
type FieldError struct {
	Field   string // the argument's JSON name, e.g. "dataset_id"
	Rule    string // the rule's tag, e.g. "chars", "between", "fourbyfour"
	Message string // a sentence naming the field and the rule
}

// Error lists every argument that failed. Its text is the messages joined
// with "; ".
type Error struct {
	Fields []FieldError
}

func (e *Error) Error() string {
	msgs := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		msgs[i] = f.Message
	}
	return strings.Join(msgs, "; ")
}

var engine = sync.OnceValue(func() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			return ""
		case "":
			return f.Name
		}
		return name
	})
	rules := map[string]validator.Func{
		"fourbyfour": func(fl validator.FieldLevel) bool { return datasetIDPattern.MatchString(fl.Field().String()) },
		"notblank":   func(fl validator.FieldLevel) bool { return strings.TrimSpace(fl.Field().String()) != "" },
		"cleantext":  func(fl validator.FieldLevel) bool { return cleanText(fl.Field().String(), false) == nil },
		"cleansoql":  func(fl validator.FieldLevel) bool { return cleanText(fl.Field().String(), true) == nil },
		"chars": func(fl validator.FieldLevel) bool {
			lo, hi := bounds(fl.Param())
			n := int64(utf8.RuneCountInString(fl.Field().String()))
			return n >= lo && n <= hi
		},
		"between": func(fl validator.FieldLevel) bool {
			lo, hi := bounds(fl.Param())
			switch fl.Field().Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				n := fl.Field().Int()
				return n >= lo && n <= hi
			}
			return false
		},
	}
	for tag, fn := range rules {
		if err := v.RegisterValidation(tag, fn); err != nil {
			panic(err) // only a programming error (bad tag name) gets here
		}
	}
	return v
})

// bounds reads a "lo hi" rule parameter. The parameters are constants in
// this file's struct tags.
func bounds(param string) (lo, hi int64) {
	a, b, _ := strings.Cut(param, " ")
	lo, err1 := strconv.ParseInt(a, 10, 64)
	hi, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil {
		panic(fmt.Sprintf("validate: bad range parameter %q", param))
	}
	return lo, hi
}

type defaulter interface{ Defaults() }

// Struct fills the defaults of v (a pointer to one of the input structs)
// and validates it. The error, if any, is an *Error with one FieldError per
// failing argument.
func Struct(v any) error {
	if d, ok := v.(defaulter); ok {
		d.Defaults()
	}
	err := engine().Struct(v)
	if err == nil {
		return nil
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) {
		return &Error{Fields: []FieldError{{Field: "arguments", Rule: "object", Message: fmt.Sprintf("arguments must be an object of named fields; got %T", v)}}}
	}
	out := &Error{Fields: make([]FieldError, 0, len(verrs))}
	for _, fe := range verrs {
		out.Fields = append(out.Fields, FieldError{
			Field:   fe.Field(),
			Rule:    fe.Tag(),
			Message: message(fe.Field(), fe.Tag(), fe.Param(), fe.Value()),
		})
	}
	return out
}

// message writes the sentence for one failed rule.
func message(field, rule, param string, value any) string {
	s, _ := value.(string)
	switch rule {
	case "required", "notblank":
		return field + " must not be empty"
	case "fourbyfour":
		return fmt.Sprintf("%s must look like abcd-1234 (4 lowercase letters or digits, a hyphen, 4 more); got %q", field, clip(s))
	case "chars":
		lo, hi := bounds(param)
		n := utf8.RuneCountInString(s)
		if lo == 0 {
			return fmt.Sprintf("%s must be at most %d characters; got %d", field, hi, n)
		}
		return fmt.Sprintf("%s must be %d to %d characters; got %d", field, lo, hi, n)
	case "between":
		lo, hi := bounds(param)
		return fmt.Sprintf("%s must be between %d and %d; got %v", field, lo, hi, value)
	case "oneof":
		return fmt.Sprintf("%s must be one of %s; got %q", field, strings.ReplaceAll(param, " ", ", "), clip(s))
	case "cleantext":
		return field + " " + cleanText(s, false).Error()
	case "cleansoql":
		return field + " " + cleanText(s, true).Error()
	}
	return fmt.Sprintf("%s breaks the rule %q", field, rule)
}

// cleanText rejects invalid UTF-8 and control characters; lines allows tab,
// newline and carriage return.
func cleanText(s string, lines bool) error {
	if !utf8.ValidString(s) {
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size <= 1 {
				return fmt.Errorf("must be valid UTF-8 text; byte %d (0x%02X) is not", i, s[i])
			}
			i += size
		}
	}
	for i, r := range s {
		if unicode.IsControl(r) && !(lines && (r == '\t' || r == '\n' || r == '\r')) {
			return fmt.Errorf("must not contain control characters; found U+%04X at byte %d", r, i)
		}
	}
	return nil
}

// clip shortens a value quoted in a message to 40 characters.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	return string([]rune(s)[:40]) + "…"
}

// DatasetID checks a dataset id such as "wg3w-h783".
func DatasetID(s string) error { return single(&SchemaInput{DatasetID: s}, "dataset_id") }

// SearchQuery checks a search_datasf query text.
func SearchQuery(s string) error { return single(&SearchInput{Query: s}, "query") }

// SoQL checks a SoQL query's text: not empty, at most MaxSoQL characters,
// valid UTF-8 without control characters other than tab and line breaks. It
// does not check the syntax; package soql does that.
func SoQL(s string) error { return single(&QueryInput{DatasetID: "abcd-1234", SoQL: s}, "soql") }

// single validates v and keeps only the errors of field (the other fields
// are valid placeholders).
func single(v any, field string) error {
	err := Struct(v)
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	out := &Error{}
	for _, f := range e.Fields {
		if f.Field == field {
			out.Fields = append(out.Fields, f)
		}
	}
	if len(out.Fields) == 0 {
		return nil
	}
	return out
}
