package datasf

import (
	"encoding/json"
	"fmt"
)

// query_datasf's limits: its input schema and its validation use them.
const (
	MaxSoQL       = 4000 // characters of soql
	MaxSampleSize = 100  // sample rows per answer
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
	Format      string `json:"format,omitempty"`
}

// Validate checks the arguments as query_datasf does (not the SoQL syntax,
// which package soql checks); the error is a *validate.Error naming each
// failing argument.
func (in *QueryInput) Validate() error { return queryArgs.validate(in) }

var queryArgs = args{
	datasetIDArg(`The dataset's 4x4 id, e.g. "wg3w-h783".`),
	{name: "soql", kind: "string", required: true, min: 1, max: MaxSoQL, rules: "cleansoql,notblank",
		description: `A SoQL query without FROM, e.g. "SELECT incident_category, count(*) AS n GROUP BY incident_category ORDER BY n DESC". Use the fieldName values from get_schema. Text comparison is case-sensitive.`},
	{name: "auto_correct", kind: "boolean", def: true,
		description: "Correct column names that are slightly wrong against the real schema (reported in metadata.corrections)."},
	{name: "sample_size", kind: "integer", min: 1, max: MaxSampleSize,
		description: fmt.Sprintf("How many sample rows to return to you (default %d). The full result is always available at resource.url.", DefaultSampleSize)},
	formatArg,
}

func queryTool(s *toolServer) tool {
	return newTool(toolDef{
		name:        "query_datasf",
		title:       "Query a dataset",
		description: "Run a SoQL query on a dataset. Returns a small SAMPLE of the rows (results), the exact total (metadata.total_count) and a link (resource.url) to the complete result for the user or application. Prefer aggregation (GROUP BY, count(*), sum) to answer questions; never page through the full result yourself. Misspelt column names are corrected; names that are not surely typos are refused with the closest columns. When nothing matches, hints show the values that match your text literals ignoring case.",
		openWorld:   true,
		args:        queryArgs,
		output:      queryOutputSchema,
	}, s.query)
}

var queryOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "summary": {"type": "string"},
    "results": {"type": "array", "items": {"type": "object"}},
    "resource": {
      "type": "object",
      "properties": {
        "uri": {"type": "string"},
        "url": {"type": "string"},
        "name": {"type": "string"},
        "mimeType": {"type": "string"}
      },
      "required": ["uri", "url", "name", "mimeType"]
    },
    "metadata": {
      "type": "object",
      "properties": {
        "dataset_id": {"type": "string"},
        "query": {"type": "string"},
        "total_count": {"type": "integer"},
        "sample_count": {"type": "integer"},
        "truncated": {"type": "boolean"},
        "columns": {"type": "array", "items": {
          "type": "object",
          "properties": {"name": {"type": "string"}, "type": {"type": "string"}},
          "required": ["name"]
        }},
        "corrections": {"type": "array", "items": {
          "type": "object",
          "properties": {
            "original": {"type": "string"},
            "corrected": {"type": "string"},
            "wasChanged": {"type": "boolean"}
          },
          "required": ["original", "corrected", "wasChanged"]
        }},
        "executed_at": {"type": "string"},
        "expires_at": {"type": ["string", "null"]}
      },
      "required": ["dataset_id", "query", "total_count", "sample_count", "truncated", "columns", "corrections"]
    },
    "hints": {
      "type": "array",
      "description": "Only when no row matches: for each text literal compared in WHERE (=, IN, LIKE, starts_with), the values that match it ignoring case, with their row counts, or else the column's closest values.",
      "items": {
        "type": "object",
        "properties": {
          "column": {"type": "string"},
          "operator": {"type": "string", "enum": ["=", "IN", "LIKE", "starts_with"]},
          "literal": {"type": "string"},
          "case_insensitive_matches": {"type": "array", "items": {
            "type": "object",
            "properties": {"value": {"type": "string"}, "count": {"type": "integer"}},
            "required": ["value", "count"]
          }},
          "closest_values": {"type": "array", "items": {
            "type": "object",
            "properties": {"value": {"type": "string"}, "count": {"type": "integer"}},
            "required": ["value", "count"]
          }},
          "message": {"type": "string"}
        },
        "required": ["column", "operator", "literal", "case_insensitive_matches", "closest_values", "message"]
      }
    }
  },
  "required": ["summary", "results", "resource", "metadata"]
}`)
