package datasf

import (
	"encoding/json"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
)

// ToolSpec describes one tool for front ends other than MCP (the command
// line): its name, title, description and arguments, read from the same
// declarations as the tool's input schema and validation.
type ToolSpec struct {
	Name, Title, Description string
	// Args are the tool's arguments in the order of its input schema.
	Args []ArgSpec

	check func(raw any) (any, *mcp.CallToolResult)
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
		spec := ToolSpec{Name: t.def.Name, Description: t.def.Description, check: t.check}
		if t.def.Annotations.Title != "" {
			spec.Title = t.def.Annotations.Title
		}
		for _, a := range t.args {
			spec.Args = append(spec.Args, ArgSpec{
				Name: a.name, Kind: a.kind, Description: a.description, Required: a.required,
				Min: a.min, Max: a.max, Enum: a.enum, Default: a.def,
			})
		}
		out = append(out, spec)
	}
	return out
}

// Check validates arguments as the tool does before it runs: unknown
// arguments, wrong types, missing required ones and limits are errors
// whose message names the argument.
func (t ToolSpec) Check(arguments map[string]any) error {
	if t.check == nil {
		return errors.New("datasf: ToolSpec.Check on a ToolSpec not from ToolSpecs")
	}
	_, res := t.check(arguments)
	if res == nil {
		return nil
	}
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			var body toolError
			if json.Unmarshal([]byte(tc.Text), &body) == nil && body.Error != "" {
				return errors.New(body.Error)
			}
			return errors.New(tc.Text)
		}
	}
	return errors.New("invalid arguments")
}
