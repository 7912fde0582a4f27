package datasf

import (
	"encoding/json"
	"fmt"
)

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
	Format   string `json:"format,omitempty"`
}

// Validate checks the arguments as list_datasf does; the error is a
// *validate.Error naming each failing argument.
func (in *ListInput) Validate() error { return listArgs.validate(in) }

var listArgs = args{
	{name: "category", kind: "string", max: MaxCategory, rules: "cleantext",
		description: `Only datasets of this category, e.g. "Public Safety" or "Transportation". Omit for all categories.`},
	{name: "limit", kind: "integer", min: 1, max: MaxListLimit, def: DefaultListLimit,
		description: fmt.Sprintf("How many datasets to return, newest first (1-%d, default %d).", MaxListLimit, DefaultListLimit)},
	formatArg,
}

func listTool(s *toolServer) tool {
	return newTool(toolDef{
		name:        "list_datasf",
		title:       "List datasets",
		description: `List the portal's datasets, most recently updated first, optionally only one category (e.g. "Public Safety"). Next step: get_schema on a dataset id.`,
		openWorld:   true,
		args:        listArgs,
		output:      listOutputSchema,
	}, s.list)
}

var listOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "summary": {"type": "string"},
    "category": {"type": "string"},
    "count": {"type": "integer"},
    "results": {"type": "array", "items": ` + datasetItemSchema + `},
    "categories": ` + categoriesSchema + `
  },
  "required": ["summary", "count", "results"]
}`)
