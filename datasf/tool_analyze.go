package datasf

import (
	"encoding/json"
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
		description: `One read-only SQLite SELECT (or WITH … SELECT) over the tables named in results, e.g. "SELECT i.police_district, count(*) AS n FROM incidents i JOIN districts d ON d.name = i.police_district GROUP BY 1". Joins across datasets are what this is for.`},
	{name: "results", kind: "object", required: true, min: 1, max: MaxAnalyzeResults,
		description: "Table name -> stored result: its id, resource:// URI or URL (from query_datasf or list_results). Each result is loaded whole (up to 100,000 rows) into a table with the result's columns."},
	formatArg,
}

func analyzeTool(s *toolServer) tool {
	return newTool(toolDef{
		name:        "analyze_results",
		title:       "Analyze stored results with SQL",
		description: "Run read-only SQL (SQLite dialect, SELECT only) over one or more stored query results, loaded into an embedded database: joins and calculations across datasets that SoQL cannot do. Results come from query_datasf or list_results. At most 1,000 result rows are returned; aggregate in SQL.",
		args:        analyzeArgs,
		output:      analyzeOutputSchema,
	}, s.analyzeResults)
}

var analyzeOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "summary": {"type": "string"},
    "columns": {"type": "array", "items": {"type": "string"}},
    "rows": {"type": "array", "items": {"type": "object"}},
    "row_count": {"type": "integer"},
    "truncated": {"type": "boolean"},
    "tables": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "name": {"type": "string"},
        "resource_id": {"type": "string"},
        "rows": {"type": "integer"},
        "columns": {"type": "array", "items": {"type": "string"}}
      }
    }}
  },
  "required": ["summary", "columns", "rows", "row_count", "truncated", "tables"]
}`)
