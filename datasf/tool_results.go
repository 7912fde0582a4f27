package datasf

import ()

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
		description: ""},
	{name: "offset", kind: "integer", min: 0, max: MaxResultsPerOwner, def: 0,
		description: "The next_offset of the previous answer."},
	formatArg,
}

func listResultsTool(s *toolServer) tool {
	return newTool(toolDef{
		name:        "list_results",
		title:       "List stored results",
		description: "This session's stored results, newest first: dataset, query, rows, link. Reuse one instead of re-running a query.",
		args:        listResultsArgs,
		output:      listResultsOutputSchema,
	}, s.listResults)
}

var listResultsOutputSchema = outputSchema([]string{"summary", "count", "total", "offset", "results"},
	field{"summary", "string"}, field{"count", "integer"}, field{"total", "integer"}, field{"offset", "integer"}, field{"results", "array"})
