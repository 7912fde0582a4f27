package datasf

import ()

// SchemaInput is get_schema's arguments.
type SchemaInput struct {
	DatasetID string `json:"dataset_id"`
	Domain    string `json:"domain,omitempty"`
	Format    string `json:"format,omitempty"`
}

// Validate checks the arguments as get_schema does; the error is a
// *validate.Error naming each failing argument.
func (in *SchemaInput) Validate() error { return schemaArgs.validate(in) }

// datasetIDText describes a dataset_id argument.
const datasetIDText = `4x4 id (e.g. "wg3w-h783") or URL.`

// datasetIDArg is a dataset's 4x4 id, in any case, or the dataset's URL
// (normalized to the bare id; see datasetid.go).
func datasetIDArg(description string) arg {
	return arg{name: "dataset_id", kind: "string", required: true, rules: "fourbyfour", description: description}
}

var schemaArgs = args{
	datasetIDArg(datasetIDText),
	domainArg(""),
	formatArg,
}

// domainArg is the portal a tool reads ("" for the configured one). Its
// length is not in the schema, to keep tools/list short: portals.go checks
// it (socrata.CheckDomain, MaxSearchDomains).
func domainArg(description string) arg {
	return arg{name: "domain", kind: "string", rules: "cleantext", description: description}
}

func schemaTool(s *toolServer) tool {
	return newTool(toolDef{
		name:        "get_schema",
		title:       "Dataset schema",
		description: "A dataset's columns (fieldName to use in SoQL, type) and exact row count. Call it before query_datasf.",
		openWorld:   true,
		args:        schemaArgs,
		output:      schemaOutputSchema,
	}, s.schema)
}

var schemaOutputSchema = outputSchema([]string{"summary", "dataset_id", "name", "columns", "row_count", "cached"},
	field{"summary", "string"}, field{"dataset_id", "string"}, field{"name", "string"}, field{"row_count", "integer"}, field{"cached", "boolean"}, field{"columns", "array"})
