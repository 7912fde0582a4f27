package datasf

import "github.com/datasf-mcp/datasf-mcp/dualresp"

// query_datasf's limits: its input schema and its validation use them.
const (
	MaxSoQL       = 16000 // characters of soql: a long IN list fits; SODA3 takes it in a body, SODA 2.1 in a URL
	MaxSampleSize = 100   // sample rows per answer
	// DefaultSampleSize is the sample size when neither the call nor
	// toolServerOptions.DefaultSampleSize gives one.
	DefaultSampleSize = 15
)

// QueryInput is query_datasf's arguments. A nil AutoCorrect means true; a
// nil SampleSize means the server's default.
type QueryInput struct {
	DatasetID   string `json:"dataset_id"`
	SoQL        string `json:"soql"`
	AutoCorrect *bool  `json:"auto_correct,omitempty"`
	SampleSize  *int   `json:"sample_size,omitempty"`
	Domain      string `json:"domain,omitempty"`
	Format      string `json:"format,omitempty"`
}

// Validate checks the arguments as query_datasf does (not the SoQL syntax,
// which package soql checks); the error is a *validate.Error naming each
// failing argument.
func (in *QueryInput) Validate() error { return queryArgs.validate(in) }

var queryArgs = args{
	datasetIDArg(datasetIDText),
	{name: "soql", kind: "string", required: true, min: 1, max: MaxSoQL, rules: "cleansoql,notblank",
		description: `e.g. "SELECT incident_category, count(*) AS n GROUP BY incident_category ORDER BY n DESC", with fieldNames from get_schema.`},
	{name: "auto_correct", kind: "boolean", def: true,
		description: "Correct misspelt column names."},
	{name: "sample_size", kind: "integer", min: 1, max: MaxSampleSize,
		description: ""},
	domainArg(""),
	formatArg,
}

func queryTool(s *toolServer) tool {
	return newTool(toolDef{
		name:        "query_datasf",
		title:       "Query a dataset",
		description: "Run SoQL on a dataset. Returns a SAMPLE of the rows, the exact total (metadata.total_count) and resource.url, the complete result for the user. Answer with aggregates (GROUP BY, count(*), sum); never page through results yourself. SoQL has no FROM; text comparison is case-sensitive; quote dates ('2024-01-01').",
		openWorld:   true,
		args:        queryArgs,
		output:      queryOutputSchema,
	}, s.query)
}

// queryOutputSchema is dualresp's: a dual response, which may also carry
// "hints" (hints.go).
var queryOutputSchema = dualresp.OutputSchema
