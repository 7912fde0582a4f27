package datasf

import (
	"encoding/json"
	"fmt"
)

// search_datasf's limits: its input schema and its validation use them.
const (
	MaxSearchQuery     = 500 // characters of query
	MaxSearchLimit     = 20  // datasets per answer
	DefaultSearchLimit = 5
)

// SearchInput is search_datasf's arguments. A nil Limit means
// DefaultSearchLimit.
type SearchInput struct {
	Query  string `json:"query"`
	Limit  *int   `json:"limit,omitempty"`
	Format string `json:"format,omitempty"`
}

// Validate checks the arguments as search_datasf does; the error is a
// *validate.Error naming each failing argument.
func (in *SearchInput) Validate() error { return searchArgs.validate(in) }

var searchArgs = args{
	{name: "query", kind: "string", required: true, min: 1, max: MaxSearchQuery, rules: "cleantext,notblank",
		description: `Words to look for in dataset names, descriptions and column names, e.g. "police incidents" or "food trucks".`},
	{name: "limit", kind: "integer", min: 1, max: MaxSearchLimit, def: DefaultSearchLimit,
		description: fmt.Sprintf("How many datasets to return (1-%d, default %d).", MaxSearchLimit, DefaultSearchLimit)},
	formatArg,
}

func searchTool(s *toolServer) tool {
	return newTool(toolDef{
		name:        "search_datasf",
		title:       "Search datasets",
		description: "Search the open data portal's catalog for datasets by keywords. Returns dataset ids (4x4, e.g. wg3w-h783), names and descriptions. Next step: get_schema on a dataset id.",
		openWorld:   true,
		args:        searchArgs,
		output:      searchOutputSchema,
	}, s.search)
}

// datasetItemSchema is one dataset of a search or list answer.
const datasetItemSchema = `{
  "type": "object",
  "properties": {
    "id": {"type": "string"},
    "name": {"type": "string"},
    "description": {"type": "string"},
    "category": {"type": "string"},
    "updated_at": {"type": "string"},
    "link": {"type": "string"},
    "columns": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["id", "name", "description"]
}`

var searchOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "summary": {"type": "string"},
    "query": {"type": "string"},
    "count": {"type": "integer"},
    "results": {"type": "array", "items": ` + datasetItemSchema + `},
    "categories": ` + categoriesSchema + `
  },
  "required": ["summary", "count", "results"]
}`)
