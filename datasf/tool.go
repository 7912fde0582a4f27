package datasf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/datasf-mcp/datasf-mcp/validate"
)

// tool is one MCP tool as a value: its definition (name, description,
// annotations, input and output schemas), its arguments and its handler.
// The input schema and the validation are both made from args, so each
// limit is written once, as a constant next to the tool's input type.
type tool struct {
	def  mcp.Tool
	args args
	// input is the type of the tool's input struct (SearchInput, ...).
	input reflect.Type
	// check decodes and validates raw arguments, returning the input (a
	// pointer to a new input struct) or the isError result to answer.
	check func(raw any) (any, *mcp.CallToolResult)
	// handler is the MCP handler: check, then the tool's own work.
	handler server.ToolHandlerFunc
}

// toolList is every tool of the server, in the order tools/list shows them.
// newToolServer registers exactly these; Tools, the tests and the docs checks
// read them from here. query_datasf and analyze_results declare the result
// viewer app; result_page is for that app only (hidden from the model and
// from clients that are not MCP Apps hosts, see app.go).
func (s *toolServer) toolList() []tool {
	return []tool{
		searchTool(s),
		listTool(s),
		schemaTool(s),
		withApp(queryTool(s)),
		listResultsTool(s),
		withApp(analyzeTool(s)),
		resultPageTool(s),
	}
}

// toolDef is what a tool tells clients about itself.
type toolDef struct {
	name, title, description string
	// openWorld is true for the tools that read the portal, false for those
	// that read only this server's stored results.
	openWorld bool
	args      args
	output    json.RawMessage
}

// newTool binds a tool's definition to its handler, which receives the
// decoded and validated input.
func newTool[In any](d toolDef, handle func(context.Context, mcp.CallToolRequest, *In) (*mcp.CallToolResult, error)) tool {
	def := mcp.NewToolWithRawSchema(d.name, d.description, d.args.schema())
	mcp.WithRawOutputSchema(d.output)(&def)
	mcp.WithToolAnnotation(mcp.ToolAnnotation{
		Title:           d.title,
		ReadOnlyHint:    mcp.ToBoolPtr(true),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		OpenWorldHint:   mcp.ToBoolPtr(d.openWorld),
	})(&def)
	check := func(raw any) (*In, *mcp.CallToolResult) {
		in := new(In)
		if res := decodeArgs(raw, in); res != nil {
			return nil, res
		}
		if err := d.args.validate(in); err != nil {
			return nil, invalid(err)
		}
		if n, ok := any(in).(normalizer); ok {
			n.normalize()
		}
		return in, nil
	}
	return tool{
		def:   def,
		args:  d.args,
		input: reflect.TypeFor[In](),
		check: func(raw any) (any, *mcp.CallToolResult) {
			in, res := check(raw)
			if res != nil {
				return nil, res
			}
			return in, nil
		},
		handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			in, res := check(req.GetRawArguments())
			if res != nil {
				return res, nil
			}
			return handle(ctx, req, in)
		},
	}
}

// arg is one argument of a tool. Its JSON Schema and its validation rule
// are both made from these fields.
type arg struct {
	name        string
	kind        string // JSON Schema type: "string", "integer", "boolean" or "object"
	description string
	required    bool
	// min and max bound a string's length in characters (0: no bound), an
	// integer's value, or an object's number of entries.
	min, max int
	pattern  string   // a string's JSON Schema pattern; rules must check the same
	enum     []string // the words a string may be
	def      any      // the default, shown in the schema
	rules    string   // more validator rules: cleantext, notblank, fourbyfour, ...
}

// args are a tool's arguments, in the order of its input struct's fields.
type args []arg

// formatArg is the format argument every tool takes.
var formatArg = arg{
	name: "format", kind: "string", enum: []string{FormatAuto, FormatJSON, FormatMarkdown},
}

// schema is the JSON Schema of the arguments: an object that refuses
// unknown properties, with the properties in the order of args.
func (a args) schema() json.RawMessage {
	var props object
	var required []string
	for _, x := range a {
		p := object{{"type", x.kind}}
		switch x.kind {
		case "string":
			if x.min > 0 {
				p = append(p, field{"minLength", x.min})
			}
			if x.max > 0 {
				p = append(p, field{"maxLength", x.max})
			}
		case "integer":
			p = append(p, field{"minimum", x.min}, field{"maximum", x.max})
		case "object":
			p = append(p, field{"minProperties", x.min}, field{"maxProperties", x.max},
				field{"additionalProperties", object{{"type", "string"}}})
		}
		if x.pattern != "" {
			p = append(p, field{"pattern", x.pattern})
		}
		if x.enum != nil {
			p = append(p, field{"enum", x.enum})
		}
		if x.def != nil {
			p = append(p, field{"default", x.def})
		}
		if x.description != "" {
			p = append(p, field{"description", x.description})
		}
		props = append(props, field{x.name, p})
		if x.required {
			required = append(required, x.name)
		}
	}
	s := object{{"type", "object"}, {"properties", props}}
	if required != nil {
		s = append(s, field{"required", required})
	}
	s = append(s, field{"additionalProperties", false})
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("datasf: tool schema: %v", err)) // only strings, numbers and booleans
	}
	return b
}

// outputSchema is a tool's output schema: the top-level fields of its
// structured content that are always present, with their JSON types (a
// string, or a list such as []string{"integer", "null"}), all required;
// fields present only sometimes (hints, categories) are allowed without
// being listed. The
// shapes inside are documented in the README and the Go types, not sent to
// the model with every conversation; clients validate what it states.
func outputSchema(required []string, props ...field) json.RawMessage {
	p := make(object, len(props))
	for i, f := range props {
		p[i] = field{f.key, object{{"type", f.value}}}
	}
	b, err := json.Marshal(object{{"type", "object"}, {"properties", p}, {"required", required}})
	if err != nil {
		panic(fmt.Sprintf("datasf: output schema: %v", err)) // only strings
	}
	return b
}

// object is a JSON object that keeps the order of its fields.
type object []field

type field struct {
	key   string
	value any
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// rule is the validator rule of the argument (see package validate).
func (x arg) rule() string {
	var r []string
	switch {
	case x.required:
		r = append(r, "required")
	case x.kind == "integer" || x.kind == "boolean":
		r = append(r, "omitnil") // a pointer: absent means the default, 0 is a value
	default:
		r = append(r, "omitempty")
	}
	if x.rules != "" {
		r = append(r, x.rules)
	}
	switch x.kind {
	case "string":
		if x.min > 0 || x.max > 0 {
			r = append(r, validate.Chars(x.min, x.max))
		}
	case "integer":
		r = append(r, validate.Between(x.min, x.max))
	case "object":
		r = append(r, validate.Entries(x.min, x.max))
	}
	if x.enum != nil {
		r = append(r, validate.OneOf(x.enum...))
	}
	return strings.Join(r, ",")
}

// validate checks an input struct (a pointer) against the arguments' rules.
func (a args) validate(in any) error {
	rules := validate.Rules{}
	for _, x := range a {
		rules[x.name] = x.rule()
	}
	return validate.Struct(in, rules)
}

// names lists the arguments' names.
func (a args) names() []string {
	out := make([]string, len(a))
	for i, x := range a {
		out[i] = x.name
	}
	return out
}

// decodeArgs decodes the tool arguments into v strictly: unknown arguments
// and wrong JSON types are errors that name the argument.
func decodeArgs(args any, v any) *mcp.CallToolResult {
	raw, err := json.Marshal(args)
	if err != nil {
		return validationError("arguments could not be read: "+err.Error(), nil)
	}
	if string(raw) == "null" {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return validationError(fmt.Sprintf("%s must be %s, not a JSON %s", te.Field, jsonKind(te.Type), te.Value),
				map[string]any{"field": te.Field})
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return validationError(fmt.Sprintf("unknown argument %q; accepted arguments: %s", name, strings.Join(jsonFields(v), ", ")),
				map[string]any{"field": name})
		default:
			return validationError("arguments must be a JSON object: "+err.Error(), nil)
		}
	}
	return nil
}

// jsonKind names the JSON type of a Go type, with its article.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "a " + t.Kind().String()
}

// invalid turns a validation error into a tool result.
func invalid(err error) *mcp.CallToolResult {
	var verr *validate.Error
	if errors.As(err, &verr) {
		fields := make([]string, 0, len(verr.Fields))
		for _, f := range verr.Fields {
			fields = append(fields, f.Field)
		}
		return validationError(err.Error(), map[string]any{"fields": fields})
	}
	return validationError(err.Error(), nil)
}

// jsonFields lists the JSON argument names of the struct v points to.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for i := range t.NumField() {
		if name := validate.JSONName(t.Field(i)); name != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// or returns *p, or def when p is nil (the argument was not given).
func or[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
