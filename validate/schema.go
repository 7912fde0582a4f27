package validate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema returns the JSON Schema of the struct T as a tool's input: the
// schema jsonschema.For derives from its fields (a field's `jsonschema`
// tag is its description), with what its other tags say, so that each
// limit is written once, in the struct:
//
//   - `validate`: required makes the field required; min and max become
//     minLength (when above 0) and maxLength for a string, minimum and
//     maximum for a number, minProperties and maxProperties for a map;
//     oneof becomes the enum;
//   - `default`: the default, as JSON (shown to clients; the handler
//     applies it).
//
// A pointer field (absent means the default) has its element's type: a
// tool takes no null.
func Schema[T any]() (*jsonschema.Schema, error) {
	t := reflect.TypeFor[T]()
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	s.Required = nil
	for i := range t.NumField() {
		f := t.Field(i)
		name := JSONName(f)
		p := s.Properties[name]
		if !f.IsExported() || p == nil {
			continue
		}
		if p.Types != nil { // a pointer: ["null", T]
			p.Type, p.Types = p.Types[len(p.Types)-1], nil
		}
		if def, ok := f.Tag.Lookup("default"); ok {
			if !json.Valid([]byte(def)) {
				return nil, fmt.Errorf("validate: %s.%s: default %q is not JSON", t.Name(), f.Name, def)
			}
			p.Default = json.RawMessage(def)
		}
		for rule := range strings.SplitSeq(f.Tag.Get("validate"), ",") {
			word, param, _ := strings.Cut(rule, "=")
			switch word {
			case "required":
				s.Required = append(s.Required, name)
			case "min", "max":
				n, err := strconv.Atoi(param)
				if err != nil {
					return nil, fmt.Errorf("validate: %s.%s: %s=%q is not a whole number", t.Name(), f.Name, word, param)
				}
				bound(p, f.Type, word, n)
			case "oneof":
				p.Enum = nil
				for w := range strings.FieldsSeq(param) {
					p.Enum = append(p.Enum, w)
				}
			}
		}
	}
	return s, nil
}

// bound states a min or max rule of a field of type t in its schema p.
func bound(p *jsonschema.Schema, t reflect.Type, word string, n int) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.String && word == "min":
		if n > 0 {
			p.MinLength = jsonschema.Ptr(n)
		}
	case t.Kind() == reflect.String:
		p.MaxLength = jsonschema.Ptr(n)
	case t.Kind() == reflect.Map && word == "min":
		p.MinProperties = jsonschema.Ptr(n)
	case t.Kind() == reflect.Map:
		p.MaxProperties = jsonschema.Ptr(n)
	case word == "min":
		p.Minimum = jsonschema.Ptr(float64(n))
	default:
		p.Maximum = jsonschema.Ptr(float64(n))
	}
}
