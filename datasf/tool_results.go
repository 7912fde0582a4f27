package datasf

import (
	"encoding/json"
	"fmt"
)

// list_results' limits: its input schema and its validation use them.
const (
	MaxListResultsLimit     = 100 // results per answer
	DefaultListResultsLimit = 20
	// MaxResultsPerOwner is how many result ids list_results remembers for
	// one session or bearer token (the newest); it also bounds offset.
	MaxResultsPerOwner = 200
)

// ListResultsInput is list_results' arguments. A nil Limit means
// DefaultListResultsLimit, a nil Offset 0.
type ListResultsInput struct {
	Limit  *int   `json:"limit,omitempty"`
	Offset *int   `json:"offset,omitempty"`
	Format string `json:"format,omitempty"`
}

// Validate checks the arguments as list_results does.
func (in *ListResultsInput) Validate() error { return listResultsArgs.validate(in) }

var listResultsArgs = args{
	{name: "limit", kind: "integer", min: 1, max: MaxListResultsLimit, def: DefaultListResultsLimit,
		description: fmt.Sprintf("How many results to return, newest first (1-%d, default %d).", MaxListResultsLimit, DefaultListResultsLimit)},
	{name: "offset", kind: "integer", min: 0, max: MaxResultsPerOwner, def: 0,
		description: "How many of the newest results to skip: the next_offset of the previous answer."},
	formatArg,
}

func listResultsTool(s *toolServer) tool {
	return newTool(toolDef{
		name:        "list_results",
		title:       "List stored results",
		description: "List the query results of this session (or bearer token) that are still available, newest first: dataset, query, total rows, columns, creation, expiry and link. Use it to find a result again instead of re-running a query; page with limit and offset.",
		args:        listResultsArgs,
		output:      listResultsOutputSchema,
	}, s.listResults)
}

var listResultsOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "summary": {"type": "string"},
    "count": {"type": "integer"},
    "total": {"type": "integer"},
    "offset": {"type": "integer"},
    "next_offset": {"type": ["integer", "null"]},
    "results": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "id": {"type": "string"},
        "uri": {"type": "string"},
        "url": {"type": "string"},
        "name": {"type": "string"},
        "dataset_id": {"type": "string"},
        "query": {"type": "string"},
        "total_count": {"type": "integer"},
        "columns": {"type": "array", "items": {"type": "string"}},
        "created_at": {"type": "string"},
        "expires_at": {"type": ["string", "null"]},
        "pinned": {"type": "boolean"}
      },
      "required": ["id", "uri", "url", "name", "total_count", "columns"]
    }}
  },
  "required": ["summary", "count", "total", "offset", "results"]
}`)
