package datasf

import ()

// list_datasf's limits: its input schema and its validation use them.
const (
	MaxCategory      = 200 // characters of category
	MaxListLimit     = 100 // datasets per answer
	DefaultListLimit = 10
)

// ListInput is list_datasf's arguments. A nil Limit means DefaultListLimit.
type ListInput struct {
	Category string `json:"category,omitempty"`
	Limit    *int   `json:"limit,omitempty"`
	Domain   string `json:"domain,omitempty"`
	Format   string `json:"format,omitempty"`
}

// Validate checks the arguments as list_datasf does; the error is a
// *validate.Error naming each failing argument.
func (in *ListInput) Validate() error { return listArgs.validate(in) }

var listArgs = args{
	{name: "category", kind: "string", max: MaxCategory, rules: "cleantext",
		description: `e.g. "Public Safety"; omit for all.`},
	{name: "limit", kind: "integer", min: 1, max: MaxListLimit, def: DefaultListLimit,
		description: ""},
	domainArg(domainText + ` "*" lists portals.`),
	formatArg,
}

func listTool(s *toolServer) tool {
	return newTool(toolDef{
		name:        "list_datasf",
		title:       "List datasets",
		description: "Datasets, most recently updated first, optionally of one category. Next: get_schema.",
		openWorld:   true,
		args:        listArgs,
		output:      listOutputSchema,
	}, s.list)
}

var listOutputSchema = outputSchema([]string{"summary", "count", "results"},
	field{"summary", "string"}, field{"count", "integer"}, field{"results", "array"})
