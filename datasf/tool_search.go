package datasf

import ()

// search_datasf's limits: its input schema and its validation use them.
const (
	MaxSearchQuery     = 500 // characters of query
	MaxSearchLimit     = 20  // datasets per answer
	DefaultSearchLimit = 5
	// MaxSearchDomains is the number of characters of the domain
	// argument: a few domains separated by commas.
	MaxSearchDomains = 1000
)

// SearchInput is search_datasf's arguments. A nil Limit means
// DefaultSearchLimit.
type SearchInput struct {
	Query  string `json:"query"`
	Limit  *int   `json:"limit,omitempty"`
	Domain string `json:"domain,omitempty"`
	Format string `json:"format,omitempty"`
}

// Validate checks the arguments as search_datasf does; the error is a
// *validate.Error naming each failing argument.
func (in *SearchInput) Validate() error { return searchArgs.validate(in) }

var searchArgs = args{
	{name: "query", kind: "string", required: true, min: 1, max: MaxSearchQuery, rules: "cleantext,notblank",
		description: `Keywords, e.g. "police incidents".`},
	{name: "limit", kind: "integer", min: 1, max: MaxSearchLimit, def: DefaultSearchLimit,
		description: ""},
	domainArg(domainText + ` "a,b" or "*" (all).`),
	formatArg,
}

func searchTool(s *toolServer) tool {
	return newTool(toolDef{
		name:        "search_datasf",
		title:       "Search datasets",
		description: "Search datasets by keywords: ids (e.g. wg3w-h783), names, descriptions. Next: get_schema.",
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

var searchOutputSchema = outputSchema([]string{"summary", "count", "results"},
	field{"summary", "string"}, field{"count", "integer"}, field{"results", "array"})
