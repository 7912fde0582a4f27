// Package validate is the rule engine of the MCP tools' inputs, on
// github.com/go-playground/validator/v10. It reports problems in plain words
// that name the argument (its JSON name) and the rule it broke, for example
//
//	dataset_id must be a dataset id like abcd-1234 (4 letters or digits, a hyphen, 4 more) or the dataset's URL; got "ABC"
//	query must be 1 to 500 characters; got 612
//	limit must be between 1 and 20; got 0
//
// It never shows validator's own "Key: 'X.Y' Error:Field validation" text.
// Lengths are counted in characters (runes), not bytes. Text must be valid
// UTF-8 without control characters (cleantext; cleansoql also allows tabs
// and line breaks), and text that is only white space counts as empty
// (notblank).
//
// The rules are the `validate` struct tags of the tools' input structs
// (package datasf), each limit written there once: validator's own rules
// (required, omitempty, omitnil, oneof, and min and max, which count a
// string's characters, bound a number and count a map's entries), and these
// domain rules:
//
//	fourbyfour    a dataset id or its URL (DatasetIDPattern; see NormalizeDatasetID)
//	notblank      not only white space
//	cleantext     valid UTF-8, no control characters
//	cleansoql     valid UTF-8, no control characters but tab, LF and CR
//
// Struct checks a struct against its tags; Schema states the same struct
// as the JSON Schema a tool publishes; DatasetID checks one value.
//
// Dataset ids are accepted as models write them: in any case, with white
// space around them, or as the dataset's URL on the portal
// (https://data.sfgov.org/Public-Safety/Police-…/wg3w-h783, …/resource/
// wg3w-h783.json, …/d/wg3w-h783/about_data). NormalizeDatasetID turns any
// accepted form into the id itself, in lower case.
//
// A library for any MCP server whose tools take arguments from a language
// model: package datasf declares its tools' inputs with it. validator/v10
// is the rule engine because its struct tags are the common way to state
// rules in Go; this package adds the domain rules and words a model can act
// on.
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

// DatasetIDPattern is the shape of a Socrata dataset id ("4x4") as models
// write it, as a JSON Schema pattern: the id in any case, or an http(s) URL
// whose path holds it as its last segment (perhaps with a file extension,
// then one more word such as about_data, a query or a fragment); white
// space (space, tab, CR, LF) around either. The fourbyfour rule accepts
// exactly the strings it matches (the pattern reads the same in ECMA-262
// and Go's RE2), and NormalizeDatasetID turns them into the bare id.
const DatasetIDPattern = `^[ \t\n\r]*(?:[A-Za-z0-9]{4}-[A-Za-z0-9]{4}|https?://[^ \t\n\r/?#]+(?:/[^ \t\n\r/?#]*)*/[A-Za-z0-9]{4}-[A-Za-z0-9]{4}(?:\.[A-Za-z]+)?(?:/[A-Za-z_]+)?/?(?:[?#][^ \t\n\r]*)?)[ \t\n\r]*$`

var (
	datasetID = regexp.MustCompile(DatasetIDPattern)
	bareID    = regexp.MustCompile(`^[A-Za-z0-9]{4}-[A-Za-z0-9]{4}$`)
)

// NormalizeDatasetID returns the dataset id that s (any form DatasetIDPattern
// accepts) names, in lower case: " WG3W-H783\n" and
// "https://data.sfgov.org/Public-Safety/Police-Department-Incident-Reports/wg3w-h783"
// are both "wg3w-h783". A string the pattern does not accept is returned
// unchanged.
func NormalizeDatasetID(s string) string {
	if !datasetID.MatchString(s) {
		return s
	}
	t := strings.Trim(s, " \t\n\r")
	if bareID.MatchString(t) {
		return strings.ToLower(t)
	}
	if i := strings.IndexAny(t, "?#"); i >= 0 {
		t = t[:i]
	}
	segs := strings.Split(t, "/")
	for i := len(segs) - 1; i >= 3; i-- { // after "https:", "", the host
		seg, _, _ := strings.Cut(segs[i], ".")
		if bareID.MatchString(seg) {
			return strings.ToLower(seg)
		}
	}
	return s
}

// FieldError is one argument that failed one rule.
type FieldError struct {
	Field   string // the argument's JSON name, e.g. "dataset_id"
	Rule    string // the rule's tag, e.g. "required", "max", "fourbyfour"
	Message string // a sentence naming the field and the rule: Field, a space, Problem
	// Problem is the sentence without the field's name, e.g. "must not be
	// empty", for a caller that names the field its own way (a command
	// line's flag).
	Problem string
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
	rules := map[string]validator.Func{
		"fourbyfour": func(fl validator.FieldLevel) bool { return datasetID.MatchString(fl.Field().String()) },
		"notblank":   func(fl validator.FieldLevel) bool { return strings.TrimSpace(fl.Field().String()) != "" },
		"cleantext":  func(fl validator.FieldLevel) bool { return cleanText(fl.Field().String(), false) == nil },
		"cleansoql":  func(fl validator.FieldLevel) bool { return cleanText(fl.Field().String(), true) == nil },
	}
	for tag, fn := range rules {
		if err := v.RegisterValidation(tag, fn); err != nil {
			panic(err) // only a programming error (bad tag name) gets here
		}
	}
	return v
})

// bounds returns the min= and max= parameters of a rule; has says which
// it has.
func bounds(rule string) (lo, hi int64, hasLo, hasHi bool) {
	for part := range strings.SplitSeq(rule, ",") {
		word, param, _ := strings.Cut(part, "=")
		n, err := strconv.ParseInt(param, 10, 64)
		switch {
		case word == "min" && err == nil:
			lo, hasLo = n, true
		case word == "max" && err == nil:
			hi, hasHi = n, true
		}
	}
	return lo, hi, hasLo, hasHi
}

// Struct validates the fields of the struct v (or v points to), each
// against its `validate` struct tag. The error, if any, is an *Error with
// one FieldError per failing field, in the order of the struct's fields.
func Struct(v any) error {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		problem := fmt.Sprintf("must be an object of named fields; got %T", v)
		return &Error{Fields: []FieldError{{Field: "arguments", Rule: "object", Message: "arguments " + problem, Problem: problem}}}
	}
	out := &Error{}
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		name := JSONName(f)
		rule := f.Tag.Get("validate")
		if !f.IsExported() || name == "" || rule == "" {
			continue
		}
		if fe := check(name, rv.Field(i).Interface(), rule); fe != nil {
			out.Fields = append(out.Fields, *fe)
		}
	}
	if len(out.Fields) == 0 {
		return nil
	}
	return out
}

// JSONName is the name of a struct field in JSON: its json tag's name, else
// the Go name; "" for a field that JSON skips.
func JSONName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return f.Name
	}
	return name
}

// check validates one value; validator stops at a field's first failing
// rule, so there is at most one error.
func check(field string, value any, rule string) *FieldError {
	err := engine().Var(value, rule)
	if err == nil {
		return nil
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) || len(verrs) == 0 {
		// A bad rule (a programming error) or a value validator cannot read.
		problem := fmt.Sprintf("could not be checked: %v", err)
		return &FieldError{Field: field, Rule: "invalid", Message: field + " " + problem, Problem: problem}
	}
	fe := verrs[0]
	problem := problem(fe.Tag(), fe.Param(), fe.Value())
	if fe.Tag() == "min" || fe.Tag() == "max" {
		problem = outOfBounds(rule, fe.Value())
	}
	return &FieldError{Field: field, Rule: fe.Tag(), Message: field + " " + problem, Problem: problem}
}

// problem says how a value broke a rule, without the field's name.
func problem(rule, param string, value any) string {
	s, _ := value.(string)
	switch rule {
	case "required", "notblank":
		return "must not be empty"
	case "fourbyfour":
		return fmt.Sprintf("must be a dataset id like abcd-1234 (4 letters or digits, a hyphen, 4 more) or the dataset's URL; got %q", clip(s))
	case "oneof":
		return fmt.Sprintf("must be one of %s; got %q", strings.ReplaceAll(param, " ", ", "), clip(s))
	case "cleantext":
		return cleanText(s, false).Error()
	case "cleansoql":
		return cleanText(s, true).Error()
	}
	return fmt.Sprintf("breaks the rule %q", rule)
}

// outOfBounds says how value broke the min and max of rule: a string's
// length in characters, a number's value or a map's entries.
func outOfBounds(rule string, value any) string {
	lo, hi, hasLo, hasHi := bounds(rule)
	rv := reflect.ValueOf(value)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	var unit string
	var got any
	switch rv.Kind() {
	case reflect.String:
		unit, got = " characters", utf8.RuneCountInString(rv.String())
	case reflect.Map, reflect.Slice:
		unit, got = " entries", rv.Len()
	default:
		got = rv.Interface()
	}
	verb := "be"
	if unit == " entries" {
		verb = "have"
	}
	switch {
	case hasLo && hasHi && unit == "":
		return fmt.Sprintf("must be between %d and %d; got %v", lo, hi, got)
	case hasLo && hasHi && !(unit == " characters" && lo == 0):
		return fmt.Sprintf("must %s %d to %d%s; got %v", verb, lo, hi, unit, got)
	case hasHi:
		return fmt.Sprintf("must %s at most %d%s; got %v", verb, hi, unit, got)
	default:
		return fmt.Sprintf("must %s at least %d%s; got %v", verb, lo, unit, got)
	}
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

// DatasetID checks a dataset id such as "wg3w-h783" (or any form
// DatasetIDPattern accepts); its errors name the field dataset_id.
func DatasetID(s string) error {
	if fe := check("dataset_id", s, "required,fourbyfour"); fe != nil {
		return &Error{Fields: []FieldError{*fe}}
	}
	return nil
}
