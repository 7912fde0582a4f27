package validate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema returns the JSON Schema of the struct T as a tool's input: the
// schema jsonschema.For derives from its fields (a field's `jsonschema`
// tag is its description), with what its other tags say, so that each
// limit is written once, in the struct:
//
//   - `validate`: required makes the field required; chars=LO HI becomes
//     minLength (when LO > 0) and maxLength, between=LO HI minimum and
//     maximum, entries=LO HI minProperties and maxProperties, oneof the
//     enum;
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
			case "chars":
				lo, hi := bounds(param)
				if lo > 0 {
					p.MinLength = jsonschema.Ptr(int(lo))
				}
				p.MaxLength = jsonschema.Ptr(int(hi))
			case "between":
				lo, hi := bounds(param)
				p.Minimum, p.Maximum = jsonschema.Ptr(float64(lo)), jsonschema.Ptr(float64(hi))
			case "entries":
				lo, hi := bounds(param)
				p.MinProperties, p.MaxProperties = jsonschema.Ptr(int(lo)), jsonschema.Ptr(int(hi))
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
