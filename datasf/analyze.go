package datasf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/datasf-mcp/datasf-mcp/analyze"
	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

var analyzeInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "sql": {"type": "string", "minLength": 1, "maxLength": 100000,
      "description": "One read-only SQLite SELECT (or WITH … SELECT) over the tables named in results, e.g. \"SELECT i.police_district, count(*) AS n FROM incidents i JOIN districts d ON d.name = i.police_district GROUP BY 1\". Joins across datasets are what this is for."},
    "results": {"type": "object", "minProperties": 1, "maxProperties": 16,
      "additionalProperties": {"type": "string"},
      "description": "Table name -> stored result: its id, resource:// URI or URL (from query_datasf or list_results). Each result is loaded whole (up to 100,000 rows) into a table with the result's columns."},
    "format": {"type": "string", "enum": ["auto", "json", "markdown"], "default": "auto",
      "description": "How to render the text content: markdown for people, json for code. structuredContent is always present."}
  },
  "required": ["sql", "results"],
  "additionalProperties": false
}`)

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

type analyzeOutput struct {
	Summary   string              `json:"summary"`
	Columns   []string            `json:"columns"`
	Rows      []map[string]any    `json:"rows"`
	RowCount  int                 `json:"row_count"`
	Truncated bool                `json:"truncated"`
	Tables    []analyze.TableInfo `json:"tables"`
}

func (s *Server) analyzeTool() server.ServerTool {
	return server.ServerTool{
		Tool: newTool("analyze_results",
			"Run read-only SQL (SQLite dialect, SELECT only) over one or more stored query results, loaded into an embedded database: joins and calculations across datasets that SoQL cannot do. Results come from query_datasf or list_results. At most 1,000 result rows are returned; aggregate in SQL.",
			analyzeInputSchema,
			mcp.WithRawOutputSchema(analyzeOutputSchema),
			readOnlyLocal("Analyze stored results with SQL"),
		),
		Handler: s.analyzeResults,
	}
}

func (s *Server) analyzeResults(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		SQL     string            `json:"sql"`
		Results map[string]string `json:"results"`
		Format  string            `json:"format,omitempty"`
	}
	if res := decodeArgs(req, &in); res != nil {
		return res, nil
	}
	switch {
	case strings.TrimSpace(in.SQL) == "":
		return validationError("sql must not be empty", map[string]any{"field": "sql"}), nil
	case len(in.Results) == 0:
		return validationError(`results must name at least one stored result, e.g. {"incidents": "resource://ID"}`, map[string]any{"field": "results"}), nil
	}
	switch in.Format {
	case "", FormatAuto, FormatJSON, FormatMarkdown:
	default:
		return validationError(fmt.Sprintf("format must be one of auto, json, markdown; got %q", in.Format), map[string]any{"field": "format"}), nil
	}

	progress := progressSender(ctx, req)
	res, err := s.analyzer.Run(ctx, analyze.Request{SQL: in.SQL, Results: in.Results}, progress)
	if err != nil {
		return analyzeError(err), nil
	}
	out := analyzeOutput{Columns: res.Columns, Rows: res.Rows, RowCount: res.RowCount, Truncated: res.Truncated, Tables: res.Tables}
	if out.Rows == nil {
		out.Rows = []map[string]any{}
	}
	if out.Columns == nil {
		out.Columns = []string{}
	}
	out.Summary = fmt.Sprintf("%d rows.", out.RowCount)
	if out.Truncated {
		out.Summary = fmt.Sprintf("The first %d rows (more were cut: aggregate or add LIMIT).", out.RowCount)
	}
	var table strings.Builder
	table.WriteString("| " + strings.Join(out.Columns, " | ") + " |\n|" + strings.Repeat("---|", len(out.Columns)) + "\n")
	for i, row := range out.Rows {
		if i == 50 {
			table.WriteString("| … |\n")
			break
		}
		cells := make([]string, len(out.Columns))
		for j, c := range out.Columns {
			cells[j] = cell(fmt.Sprint(row[c]))
		}
		table.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return render(responseFormat(ctx, in.Format), out, out.Summary, table.String()), nil
}

// progressSender returns a progress callback that sends MCP progress
// notifications when the caller asked for them (a progressToken), or nil.
func progressSender(ctx context.Context, req mcp.CallToolRequest) analyze.Progress {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil
	}
	token := req.Params.Meta.ProgressToken
	return func(done, total int64, msg string) {
		_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
			"progressToken": token, "progress": done, "total": total, "message": msg,
		})
	}
}

// analyzeError explains a failed analysis to the model.
func analyzeError(err error) *mcp.CallToolResult {
	var re *analyze.ResourceError
	var se *analyze.SQLError
	switch {
	case errors.As(err, &re) && errors.Is(err, dualresp.ErrExpired):
		return toolError{Error: fmt.Sprintf("result %q (table %s) has expired; run its query again with query_datasf", re.Ref, re.Table), ErrorType: errNotFound, Code: "result_expired"}.result()
	case errors.As(err, &re) && errors.Is(err, dualresp.ErrNotFound):
		return toolError{Error: fmt.Sprintf("no stored result %q (table %s); list_results shows this session's results", re.Ref, re.Table), ErrorType: errNotFound, Code: "result_not_found"}.result()
	case errors.Is(err, analyze.ErrNotReadOnly):
		return toolError{Error: err.Error() + ". Only one SELECT (or WITH … SELECT) statement is allowed.", ErrorType: errValidation, Code: "sql_not_read_only"}.result()
	case errors.Is(err, analyze.ErrInvalid):
		return toolError{Error: err.Error(), ErrorType: errValidation, Code: "invalid_argument"}.result()
	case errors.Is(err, analyze.ErrTooLarge):
		return toolError{Error: err.Error() + ". Narrow the query_datasf query (WHERE, GROUP BY) first.", ErrorType: errValidation, Code: "result_too_large"}.result()
	case errors.Is(err, analyze.ErrTimeout):
		return toolError{Error: err.Error() + ". Simplify the SQL (fewer joins, add conditions).", ErrorType: errTimeout, Code: "sql_timeout"}.result()
	case errors.As(err, &se):
		return toolError{Error: err.Error() + ". Fix the SQL (SQLite dialect) and try again.", ErrorType: errValidation, Code: "sql_error"}.result()
	case errors.As(err, &re):
		return toolError{Error: err.Error(), ErrorType: errAPI, Code: "result_load_failed"}.result()
	}
	return toolError{Error: "the analysis failed: " + err.Error(), ErrorType: errAPI}.result()
}
