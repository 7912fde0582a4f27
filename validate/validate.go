// Package validate checks the MCP tools' inputs with
// github.com/go-playground/validator/v10 and reports problems in plain words
// that name the argument (its JSON name) and the rule it broke, for example
// "dataset_id must look like abcd-1234". It never shows validator's own
// struct-field text.
package validate

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
)

// Limits of the tools' arguments.
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

var datasetIDPattern = regexp.MustCompile(`^[a-z0-9]{4}-[a-z0-9]{4}$`)

// SearchInput is search_datasf's arguments.
type SearchInput struct {
	Query  string `json:"query" validate:"required,notblank,max=500,cleantext"`
	Limit  int    `json:"limit,omitempty" validate:"min=0,max=20"`
	Format string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

// ListInput is list_datasf's arguments.
type ListInput struct {
	Category string `json:"category,omitempty" validate:"max=200,cleantext"`
	Limit    int    `json:"limit,omitempty" validate:"min=0,max=100"`
	Format   string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

// SchemaInput is get_schema's arguments.
type SchemaInput struct {
	DatasetID string `json:"dataset_id" validate:"fourbyfour"`
	Format    string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

// QueryInput is query_datasf's arguments.
type QueryInput struct {
	DatasetID   string `json:"dataset_id" validate:"fourbyfour"`
	SoQL        string `json:"soql" validate:"required,notblank,max=4000,cleantext"`
	AutoCorrect *bool  `json:"auto_correct,omitempty"`
	SampleSize  int    `json:"sample_size,omitempty" validate:"min=0,max=100"`
	Format      string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

// Defaults fills the zero limits with their defaults; Struct calls it.
func (in *SearchInput) Defaults() {
	if in.Limit == 0 {
		in.Limit = DefaultSearchSize
	}
}

// Defaults fills the zero limit with its default; Struct calls it.
func (in *ListInput) Defaults() {
	if in.Limit == 0 {
		in.Limit = DefaultListSize
	}
}

// FieldError is one argument that failed one rule.
type FieldError struct {
	Field   string // the argument's JSON name, e.g. "dataset_id"
	Rule    string // e.g. "max", "fourbyfour"
	Message string // a sentence naming the field and the rule
}

// Error lists every argument that failed. Its text is the messages joined.
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

var (
	once     sync.Once
	instance *validator.Validate
)

func engine() *validator.Validate {
	once.Do(func() {
		v := validator.New(validator.WithRequiredStructEnabled())
		v.RegisterTagNameFunc(func(f reflect.StructField) string {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				return ""
			}
			return name
		})
		must(v.RegisterValidation("fourbyfour", func(fl validator.FieldLevel) bool {
			return datasetIDPattern.MatchString(fl.Field().String())
		}))
		must(v.RegisterValidation("notblank", func(fl validator.FieldLevel) bool {
			return strings.TrimSpace(fl.Field().String()) != ""
		}))
		must(v.RegisterValidation("cleantext", func(fl validator.FieldLevel) bool {
			return cleanText(fl.Field().String()) == nil
		}))
		instance = v
	})
	return instance
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

type defaulter interface{ Defaults() }

// Struct fills defaults in v (a pointer to one of the input structs) and
// validates it. The error, if any, is an *Error.
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
		return &Error{Fields: []FieldError{{Field: "arguments", Rule: "invalid", Message: "arguments are not valid: " + err.Error()}}}
	}
	out := &Error{}
	for _, fe := range verrs {
		out.Fields = append(out.Fields, FieldError{Field: fe.Field(), Rule: fe.Tag(), Message: message(fe.Field(), fe.Tag(), fe.Param(), fe.Value())})
	}
	return out
}

// message writes the sentence for one failed rule.
func message(field, rule, param string, value any) string {
	s, isString := value.(string)
	switch rule {
	case "required", "notblank":
		return field + " must not be empty"
	case "fourbyfour":
		return fmt.Sprintf("%s must look like abcd-1234 (4 lowercase letters or digits, a hyphen, 4 more); got %q", field, clip(s))
	case "max":
		if isString {
			return fmt.Sprintf("%s must be at most %s characters; got %d", field, param, utf8.RuneCountInString(s))
		}
		return fmt.Sprintf("%s must be at most %s; got %v", field, param, value)
	case "min":
		return fmt.Sprintf("%s must be at least %s; got %v", field, param, value)
	case "oneof":
		return fmt.Sprintf("%s must be one of %s; got %q", field, strings.ReplaceAll(param, " ", ", "), clip(s))
	case "cleantext":
		return field + " " + cleanText(s).Error()
	}
	return fmt.Sprintf("%s is not valid (rule %s)", field, rule)
}

// cleanText rejects invalid UTF-8 and control characters other than tab,
// newline and carriage return.
func cleanText(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("must be valid UTF-8 text")
	}
	for i, r := range s {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return fmt.Errorf("must not contain control characters; found U+%04X at byte %d", r, i)
		}
	}
	return nil
}

func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// DatasetID checks a dataset id.
func DatasetID(s string) error { return Struct(&SchemaInput{DatasetID: s}) }

// SearchQuery checks a search query.
func SearchQuery(s string) error { return Struct(&SearchInput{Query: s}) }

// SoQL checks a SoQL query's text (not its syntax: package soql does that).
func SoQL(s string) error {
	err := Struct(&QueryInput{DatasetID: "abcd-1234", SoQL: s})
	return err
}
