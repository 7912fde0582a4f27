package datasf

import "encoding/json"

// The tools' JSON Schemas. They are written out by hand so that what clients
// see is exactly what the handlers accept and return; testdata/*.golden.json
// pins them.

const datasetIDPattern = `^[a-z0-9]{4}-[a-z0-9]{4}$`

var searchInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 500,
      "description": "Words to look for in dataset names, descriptions and column names, e.g. \"police incidents\" or \"food trucks\"."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5,
      "description": "How many datasets to return (1-20, default 5)."},
    "format": {"type": "string", "enum": ["auto", "json", "markdown"], "default": "auto",
      "description": "How to render the text content: markdown for people, json for code. structuredContent is always present."}
  },
  "required": ["query"],
  "additionalProperties": false
}`)

var listInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "category": {"type": "string", "maxLength": 200,
      "description": "Only datasets of this category, e.g. \"Public Safety\" or \"Transportation\". Omit for all categories."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10,
      "description": "How many datasets to return, newest first (1-100, default 10)."},
    "format": {"type": "string", "enum": ["auto", "json", "markdown"], "default": "auto",
      "description": "How to render the text content: markdown for people, json for code. structuredContent is always present."}
  },
  "additionalProperties": false
}`)

var schemaInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "dataset_id": {"type": "string", "pattern": "` + datasetIDPattern + `",
      "description": "The dataset's 4x4 id, e.g. \"wg3w-h783\", as returned by search_datasf or list_datasf."},
    "format": {"type": "string", "enum": ["auto", "json", "markdown"], "default": "auto",
      "description": "How to render the text content: markdown for people, json for code. structuredContent is always present."}
  },
  "required": ["dataset_id"],
  "additionalProperties": false
}`)

var queryInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "dataset_id": {"type": "string", "pattern": "` + datasetIDPattern + `",
      "description": "The dataset's 4x4 id, e.g. \"wg3w-h783\"."},
    "soql": {"type": "string", "minLength": 1, "maxLength": 4000,
      "description": "A SoQL query without FROM, e.g. \"SELECT incident_category, count(*) AS n GROUP BY incident_category ORDER BY n DESC\". Use the fieldName values from get_schema. Text comparison is case-sensitive."},
    "auto_correct": {"type": "boolean", "default": true,
      "description": "Correct column names that are slightly wrong against the real schema (reported in metadata.corrections)."},
    "sample_size": {"type": "integer", "minimum": 1, "maximum": 100,
      "description": "How many sample rows to return to you (default 15). The full result is always available at resource.url."},
    "format": {"type": "string", "enum": ["auto", "json", "markdown"], "default": "auto",
      "description": "How to render the text content: markdown for people, json for code. structuredContent is always present."}
  },
  "required": ["dataset_id", "soql"],
  "additionalProperties": false
}`)

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
    "results": {"type": "array", "items": ` + datasetItemSchema + `}
  },
  "required": ["summary", "count", "results"]
}`)

var listOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "summary": {"type": "string"},
    "category": {"type": "string"},
    "count": {"type": "integer"},
    "results": {"type": "array", "items": ` + datasetItemSchema + `}
  },
  "required": ["summary", "count", "results"]
}`)

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
    }
  },
  "required": ["summary", "results", "resource", "metadata"]
}`)
