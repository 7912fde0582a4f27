package datasf

import (
	"unicode/utf8"

	"github.com/datasf-mcp/datasf-mcp/analyze"
)

// analyze_results' limits: its input schema and its validation use them.
const (
	// MaxAnalyzeSQL is the most characters of sql: package analyze takes at
	// most analyze.MaxSQLBytes bytes, and a character is up to 4 bytes.
	MaxAnalyzeSQL = analyze.MaxSQLBytes / utf8.UTFMax
	// MaxAnalyzeResults is the most stored results one call may name.
	MaxAnalyzeResults = analyze.MaxTables
)

// AnalyzeInput is analyze_results' arguments.
type AnalyzeInput struct {
	SQL     string            `json:"sql"`
	Results map[string]string `json:"results"`
	Format  string            `json:"format,omitempty"`
}

// Validate checks the arguments as analyze_results does (not the SQL, which
// package analyze checks); the error is a *validate.Error naming each
// failing argument.
func (in *AnalyzeInput) Validate() error { return analyzeArgs.validate(in) }

var analyzeArgs = args{
	{name: "sql", kind: "string", required: true, min: 1, max: MaxAnalyzeSQL, rules: "notblank",
		description: `e.g. "SELECT a.x, count(*) FROM a JOIN b ON b.k = a.k GROUP BY 1".`},
	{name: "results", kind: "object", required: true, min: 1, max: MaxAnalyzeResults,
		description: "Table name -> result id, resource:// URI or URL. Each loads whole (up to 100,000 rows)."},
	formatArg,
}

func analyzeTool(s *toolServer) tool {
	return newTool(toolDef{
		name:        "analyze_results",
		title:       "SQL over stored results",
		description: "One read-only SQLite SELECT over stored results, each loaded as a table: joins and calculations across datasets that SoQL cannot do. At most 1,000 rows returned; aggregate in SQL.",
		args:        analyzeArgs,
		output:      analyzeOutputSchema,
	}, s.analyzeResults)
}

var analyzeOutputSchema = outputSchema([]string{"summary", "columns", "rows", "row_count", "truncated", "tables"},
	field{"summary", "string"}, field{"columns", "array"}, field{"rows", "array"}, field{"row_count", "integer"},
	field{"truncated", "boolean"}, field{"tables", "array"})
