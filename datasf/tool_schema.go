package datasf

import (
	"encoding/json"

	"github.com/datasf-mcp/datasf-mcp/validate"
)

// SchemaInput is get_schema's arguments.
type SchemaInput struct {
	DatasetID string `json:"dataset_id"`
	Format    string `json:"format,omitempty"`
}

// Validate checks the arguments as get_schema does; the error is a
// *validate.Error naming each failing argument.
func (in *SchemaInput) Validate() error { return schemaArgs.validate(in) }

// datasetIDArg is a dataset's 4x4 id, in any case, or the dataset's URL
// (normalized to the bare id; see datasetid.go).
func datasetIDArg(description string) arg {
	return arg{name: "dataset_id", kind: "string", required: true, pattern: validate.DatasetIDPattern, rules: "fourbyfour",
		description: description + " The dataset's URL on the portal works too."}
}

var schemaArgs = args{
	datasetIDArg(`The dataset's 4x4 id, e.g. "wg3w-h783", as returned by search_datasf or list_datasf.`),
	formatArg,
}

func schemaTool(s *toolServer) tool {
	return newTool(toolDef{
		name:        "get_schema",
		title:       "Dataset schema",
		description: "Get a dataset's columns (display name, fieldName to use in SoQL, data type, description) and its exact row count. Call it before query_datasf.",
		openWorld:   true,
		args:        schemaArgs,
		output:      schemaOutputSchema,
	}, s.schema)
}

var schemaOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "summary": {"type": "string"},
    "dataset_id": {"type": "string"},
    "name": {"type": "string"},
    "description": {"type": "string"},
    "category": {"type": "string"},
    "row_count": {"type": "integer"},
    "cached": {"type": "boolean"},
    "columns": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "name": {"type": "string"},
        "fieldName": {"type": "string"},
        "dataType": {"type": "string"},
        "description": {"type": "string"}
      },
      "required": ["name", "fieldName", "dataType"]
    }}
  },
  "required": ["summary", "dataset_id", "name", "columns", "row_count", "cached"]
}`)
