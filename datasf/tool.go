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

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo"
	"github.com/datasf-mcp/datasf-mcp/validate"
)

// tool is one MCP tool as a value: its definition (name, description,
// annotations, input and output schemas) and its handler. Each tool's file
// (search.go, query.go, ...) holds its input struct, whose tags are the one
// description of its arguments (the input schema is derived from it by
// validate.Schema, the validation is validate.Struct), its output type, its
// definition and its typed handler; newTool makes the tool of them.
type tool struct {
	def mcp.Tool
	// in is the input struct's type, input its schema.
	in    reflect.Type
	input *jsonschema.Schema
	// check decodes and validates raw arguments: an *argumentError or a
	// *validate.Error when they are refused.
	check func(raw any) error
	// handler is the MCP handler newTool made: decode and check the
	// arguments, run the typed handler, render its output or its error.
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

// toolDef is what a tool tells clients about itself besides its input and
// its output.
type toolDef struct {
	name, title, description string
	// openWorld is true for the tools that read the portal, false for those
	// that read only this server's stored results.
	openWorld bool
}

// toolInput is what every tool's input struct has: the format argument,
// which picks the text content's format (format.go).
type toolInput interface {
	format() string
}

// markdowner is a tool output whose text for clients that show text is
// markdown: a summary and a table.
type markdowner interface {
	markdown() string
}

// dualAnswer is a tool output that is a dual response (package dualresp):
// it renders as one, with mcpgo (a text block, a resource_link, and the
// response's structured content), and states dualresp.OutputSchema.
type dualAnswer interface {
	response() *dualresp.Response
}

// schemaStater is a tool output that states its output schema itself
// rather than having outputSchema derive one from its type.
type schemaStater interface {
	outputSchema() json.RawMessage
}

// newTool makes the tool of a definition and a typed handler: the input
// schema comes from In (validate.Schema), the output schema from Out
// (outputSchema, or Out's own: schemaStater, dualAnswer). The MCP handler
// it makes decodes and checks the call's arguments into an In (strictly,
// then by In's validate tags, then normalized), calls handler, and renders
// once: the structured content is the Out, the text its markdown or, with
// format=json, its JSON; a dualAnswer renders as its dual response. An
// error becomes the isError result the model reads (errorResult).
//
// The handler has mcp-go's typed shape (mcp.StructuredToolHandlerFunc),
// but mcp-go's adapter for it (mcp.NewStructuredToolHandler) is not used:
// it binds arguments with a plain json.Unmarshal, so an unknown or
// misspelt argument would pass unnoticed instead of being refused by name;
// it has no validation; its text is the JSON of the output (not markdown,
// not a dual response); and it answers every error with "tool execution
// failed: " and the Go error's text, where the model needs our words.
func newTool[In toolInput, Out any](d toolDef, handler mcp.StructuredToolHandlerFunc[In, Out]) tool {
	input, err := validate.Schema[In]()
	if err != nil {
		panic(fmt.Sprintf("datasf: %s's input: %v", d.name, err)) // the tags are wrong: a programming error
	}
	raw, err := json.Marshal(input)
	if err != nil {
		panic(fmt.Sprintf("datasf: %s's input schema: %v", d.name, err))
	}
	switch any(*new(Out)).(type) {
	case dualAnswer, markdowner:
	default:
		panic(fmt.Sprintf("datasf: %s's output %T is neither a dualAnswer nor a markdowner", d.name, *new(Out)))
	}
	def := mcp.NewToolWithRawSchema(d.name, d.description, raw)
	mcp.WithRawOutputSchema(outputSchemaOf[Out]())(&def)
	mcp.WithToolAnnotation(mcp.ToolAnnotation{
		Title:           d.title,
		ReadOnlyHint:    mcp.ToBoolPtr(true),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		OpenWorldHint:   mcp.ToBoolPtr(d.openWorld),
	})(&def)
	return tool{
		def:   def,
		in:    reflect.TypeFor[In](),
		input: input,
		check: func(raw any) error {
			_, err := decodeInput[In](raw)
			return err
		},
		handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			in, err := decodeInput[In](req.GetRawArguments())
			if err != nil {
				return errorResult(err, wantsNextStep(req)), nil
			}
			out, err := handler(ctx, req, *in)
			if err != nil {
				return errorResult(err, wantsNextStep(req)), nil
			}
			return withNextLeftOut(render(responseFormat(ctx, (*in).format()), out), out), nil
		},
	}
}

// outputSchemaOf is the output schema a tool whose output is an Out states.
func outputSchemaOf[Out any]() json.RawMessage {
	var zero Out
	switch o := any(zero).(type) {
	case dualAnswer:
		return dualresp.OutputSchema
	case schemaStater:
		return o.outputSchema()
	}
	return outputSchema[Out]()
}

// render renders a tool's output once: a dual response as mcpgo renders
// one; any other output as its structured content with, as text, its
// markdown or (format=json) its compact JSON.
func render(format string, out any) *mcp.CallToolResult {
	if d, ok := out.(dualAnswer); ok {
		if format == formatJSON {
			return withPicture(mcpgo.CallToolResultJSON(d.response()), out)
		}
		return withPicture(mcpgo.CallToolResult(d.response()), out)
	}
	var text string
	if format == formatJSON {
		if b, err := json.Marshal(out); err == nil { // outputs are plain data
			text = string(b)
		}
	}
	if text == "" {
		text = out.(markdowner).markdown() // newTool checked that Out is one
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(text)},
		StructuredContent: out,
	}
}

// decodeInput decodes and checks a call's arguments into an In: strictly
// (unknown arguments and wrong JSON types are refused, an *argumentError),
// then by its validate tags (a *validate.Error), then normalized.
func decodeInput[In any](raw any) (*In, error) {
	in := new(In)
	if err := decodeArgs(raw, in); err != nil {
		return nil, err
	}
	if err := validate.Struct(in); err != nil {
		return nil, err
	}
	if n, ok := any(in).(normalizer); ok {
		n.normalize()
	}
	return in, nil
}

// outputSchema is the output schema of a tool whose structured content is
// an Out: the fields always present with a value (no omitempty, not a
// pointer), each with its JSON type, all required. Fields present only
// sometimes (hints, categories, next_offset when null) are allowed without
// being listed, and the shapes inside are documented in the README and the
// Go types, not sent to the model with every conversation; clients
// validate what it states.
func outputSchema[Out any]() json.RawMessage {
	full, err := jsonschema.For[Out](&jsonschema.ForOptions{IgnoreInvalidTypes: true})
	if err != nil {
		panic(fmt.Sprintf("datasf: output schema of %T: %v", *new(Out), err))
	}
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for _, name := range full.PropertyOrder {
		p := full.Properties[name]
		if !slices.Contains(full.Required, name) || (p.Types != nil && p.Types[0] == "null" && !isSlice(p)) {
			continue
		}
		typ := p.Type
		if p.Types != nil {
			typ = p.Types[len(p.Types)-1] // a slice: ["null", "array"], though never null here
		}
		s.Properties[name] = &jsonschema.Schema{Type: typ}
		s.PropertyOrder = append(s.PropertyOrder, name)
		s.Required = append(s.Required, name)
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("datasf: output schema of %T: %v", *new(Out), err))
	}
	return b
}

// isSlice reports whether jsonschema.For made p of a Go slice.
func isSlice(p *jsonschema.Schema) bool { return slices.Contains(p.Types, "array") }

// ToolSpec describes one tool for front ends other than MCP (the command
// line): its name, title, description and arguments, read from the tool's
// input schema.
type ToolSpec struct {
	Name, Title, Description string
	// Args are the tool's arguments in the order of its input schema.
	Args []ArgSpec

	check func(raw any) error
}

// ArgSpec is one argument of a tool.
type ArgSpec struct {
	Name        string
	Kind        string // JSON Schema type: "string", "integer", "boolean" or "object"
	Description string
	Required    bool
	// Min and Max bound a string's length in characters (0: no bound), an
	// integer's value, or an object's number of entries.
	Min, Max int
	Enum     []string // the words a string may be, when only those
	Default  any      // the default, nil when none
}

// ToolSpecs returns the description of every tool a model calls (not the
// app-only ones), in the order tools/list shows them. It needs no portal,
// store or server.
func ToolSpecs() []ToolSpec {
	var out []ToolSpec
	for _, t := range new(toolServer).toolList() {
		if appOnly(t.def) {
			continue
		}
		spec := ToolSpec{Name: t.def.Name, Title: t.def.Annotations.Title, Description: t.def.Description, check: t.check}
		for _, name := range t.input.PropertyOrder {
			spec.Args = append(spec.Args, argSpec(name, t.input.Properties[name], slices.Contains(t.input.Required, name)))
		}
		out = append(out, spec)
	}
	return out
}

// argSpec reads one argument from its schema.
func argSpec(name string, p *jsonschema.Schema, required bool) ArgSpec {
	a := ArgSpec{Name: name, Kind: p.Type, Description: p.Description, Required: required}
	num := func(f *float64) int {
		if f == nil {
			return 0
		}
		return int(*f)
	}
	switch {
	case p.MaxLength != nil:
		a.Min, a.Max = or(p.MinLength, 0), *p.MaxLength
	case p.Maximum != nil:
		a.Min, a.Max = num(p.Minimum), num(p.Maximum)
	case p.MaxProperties != nil:
		a.Min, a.Max = or(p.MinProperties, 0), *p.MaxProperties
	}
	for _, w := range p.Enum {
		a.Enum = append(a.Enum, fmt.Sprint(w))
	}
	if p.Default != nil {
		var v any
		if p.Type == "integer" {
			var n int
			_ = json.Unmarshal(p.Default, &n)
			v = n
		} else {
			_ = json.Unmarshal(p.Default, &v)
		}
		a.Default = v
	}
	return a
}

// Check validates arguments as the tool does before it runs. Arguments
// that break a rule of the input (missing, too long, out of range) are a
// *validate.Error, one validate.FieldError per argument; unknown arguments
// and wrong JSON types an error whose message names the argument.
func (t ToolSpec) Check(arguments map[string]any) error {
	if t.check == nil {
		return errors.New("datasf: ToolSpec.Check on a ToolSpec not from ToolSpecs")
	}
	return t.check(arguments)
}

// argumentError is arguments that could not be decoded into the tool's
// input; field names the argument at fault, when one is.
type argumentError struct {
	msg, field string
}

func (e *argumentError) Error() string { return e.msg }

// decodeArgs decodes the tool arguments into v strictly: unknown arguments
// and wrong JSON types are *argumentErrors that name the argument.
func decodeArgs(args any, v any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return &argumentError{msg: "arguments could not be read: " + err.Error()}
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
			return &argumentError{msg: fmt.Sprintf("%s must be %s, not a JSON %s", te.Field, jsonKind(te.Type), te.Value), field: te.Field}
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return &argumentError{msg: fmt.Sprintf("unknown argument %q; accepted arguments: %s", name, strings.Join(jsonFields(v), ", ")), field: name}
		default:
			return &argumentError{msg: "arguments must be a JSON object: " + err.Error()}
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
