package datasf

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/analyze"
	"github.com/datasf-mcp/datasf-mcp/internal/hints"
	"github.com/datasf-mcp/datasf-mcp/internal/portal"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
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
	SQL     string            `json:"sql" validate:"required,notblank,min=1,max=25000" jsonschema:"e.g. \"SELECT a.x, count(*) FROM a JOIN b ON b.k = a.k GROUP BY 1\"."`
	Results map[string]string `json:"results" validate:"required,min=1,max=16" jsonschema:"Table name -> result id, resource:// URI or URL. Each loads whole (up to 100,000 rows)."`
	Format  string            `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

func (in AnalyzeInput) format() string { return in.Format }

func analyzeTool(s *toolServer) tool {
	return newTool[AnalyzeInput](toolDef{
		name:        "analyze_results",
		title:       "SQL over stored results",
		description: "One read-only SQLite SELECT over stored results, each loaded as a table: joins and calculations across datasets that SoQL cannot do. At most 1,000 rows returned; aggregate in SQL.",
	}, s.analyzeResults)
}

type analyzeOutput struct {
	Summary   string           `json:"summary"`
	Columns   []string         `json:"columns"`
	Rows      []map[string]any `json:"rows"`
	RowCount  int              `json:"row_count"`
	Truncated bool             `json:"truncated"`
	Tables    []analyzeTable   `json:"tables"`
}

// analyzeTable is a loaded table, with the portal of its result when that
// is not the configured one.
type analyzeTable struct {
	analyze.TableInfo
	Domain string `json:"domain,omitempty"`
}

func (s *toolServer) analyzeResults(ctx context.Context, req mcp.CallToolRequest, in AnalyzeInput) (analyzeOutput, error) {
	progress := progressSender(ctx, req)
	res, err := s.analyzer.Run(ctx, analyze.Request{SQL: in.SQL, Results: in.Results, Owner: analysisOwner(ctx)}, progress)
	if err != nil {
		s.log.InfoContext(ctx, "analyze_results failed", "err", err, "sql", clipText(in.SQL, maxLoggedQuery))
		return analyzeOutput{}, analyzeError(err)
	}
	out := analyzeOutput{Columns: res.Columns, Rows: res.Rows, RowCount: res.RowCount, Truncated: res.Truncated, Tables: make([]analyzeTable, len(res.Tables))}
	for i, t := range res.Tables {
		out.Tables[i].TableInfo = t
		if rec, err := s.results.Resource(ctx, t.ResourceID); err == nil && rec.Query.Kind == portal.QueryKind {
			out.Tables[i].Domain = rec.Query.Params["domain"]
		}
	}
	if out.Rows == nil {
		out.Rows = []map[string]any{}
	}
	if out.Columns == nil {
		out.Columns = []string{}
	}
	out.Summary = nouns(int64(out.RowCount), "row", "") + "."
	if out.RowCount == 0 {
		out.Summary = emptyAnalysis(res.Tables)
	}
	if out.Truncated {
		cut := res.Cut
		if cut == "" {
			cut = "the answer is bounded"
		}
		out.Summary = fmt.Sprintf("The first %s (more were cut: %s; aggregate, select fewer or shorter columns, or add LIMIT).", nouns(int64(out.RowCount), "row", ""), cut)
	}
	return out, nil
}

// markdown is the summary and a table of the first 50 rows.
func (out analyzeOutput) markdown() string {
	var table strings.Builder
	table.WriteString(out.Summary + "\n\n")
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
	return table.String()
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

// analysisOwner is whom an analysis counts against for the bound on
// analyses at once per caller: the bearer token's owner, else the identity
// of the owner results are stored under (see recordOwner): the remote
// address, whatever client keys or sessions it uses.
func analysisOwner(ctx context.Context) string {
	if owner, ok := dualresp.OwnerFrom(ctx); ok {
		return "owner:" + owner
	}
	return dualresp.OwnerIdentity(recordOwner(ctx))
}

// analyzeError explains a failed analysis to the model.
func analyzeError(err error) *toolError {
	var re *analyze.ResourceError
	var se *analyze.SQLError
	switch {
	case errors.As(err, &re) && errors.Is(err, dualresp.ErrExpired):
		return &toolError{Reason: fmt.Sprintf("result %q (table %s) has expired;", re.Ref, re.Table), Next: "run its query again with query_datasf", Type: errNotFound, Code: "result_expired"}
	case errors.As(err, &re) && errors.Is(err, dualresp.ErrNotFound):
		return &toolError{Reason: fmt.Sprintf("no stored result %q (table %s);", re.Ref, re.Table), Next: "list_results shows this session's results", Type: errNotFound, Code: "result_not_found"}
	case errors.As(err, &re) && errors.Is(err, analyze.ErrInvalid):
		return &toolError{Reason: fmt.Sprintf("table %s names %q, which is no stored result: results takes a result id (32 hex digits), its resource:// URI or its URL, as query_datasf returns them;", re.Table, re.Ref),
			Next: "list_results shows this session's results", Type: errValidation, Code: "result_ref_invalid",
			Details: map[string]any{"table": re.Table, "result": re.Ref}}
	case errors.Is(err, analyze.ErrNotReadOnly):
		return &toolError{Reason: err.Error() + ". Only one SELECT (or WITH … SELECT) statement is allowed.", Type: errValidation, Code: "sql_not_read_only"}
	case errors.Is(err, analyze.ErrInvalid):
		return &toolError{Reason: err.Error(), Type: errValidation, Code: "invalid_argument"}
	case errors.Is(err, analyze.ErrTooLarge):
		return &toolError{Reason: err.Error() + ".", Next: "Narrow the query_datasf query (WHERE, GROUP BY) first.", Type: errValidation, Code: "result_too_large"}
	case errors.Is(err, analyze.ErrBusy):
		return &toolError{Reason: strings.TrimPrefix(err.Error(), "analyze: ") + ".", Type: errRateLimit, Code: "analysis_busy"}
	case errors.Is(err, analyze.ErrTempTooLarge):
		return &toolError{Reason: strings.TrimPrefix(err.Error(), "analyze: SQL error: analyze: ") + ".", Type: errValidation, Code: "sql_too_costly"}
	case errors.Is(err, analyze.ErrTimeout):
		return &toolError{Reason: err.Error() + ".", Next: "Simplify the SQL (fewer joins, add conditions).", Type: errTimeout, Code: "sql_timeout"}
	case errors.As(err, &se):
		return &toolError{Reason: "SQL error: " + se.Reason() + ".", Next: "Fix the SQL (SQLite dialect) and try again.", Type: errValidation, Code: "sql_error"}
	case errors.As(err, &re):
		return &toolError{Reason: err.Error(), Type: errAPI, Code: "result_load_failed"}
	}
	return &toolError{Reason: "the analysis failed: " + err.Error(), Type: errAPI}
}

// emptyAnalysis is the summary of an analysis without rows: the tables'
// sizes, so that an empty table (a stored result of no rows) is seen as
// the reason, or else the SQL's conditions.
func emptyAnalysis(tables []analyze.TableInfo) string {
	var sizes, empty []string
	for _, t := range tables {
		sizes = append(sizes, t.Name+" has "+hints.RowCount(t.Rows))
		if t.Rows == 0 {
			empty = append(empty, t.Name)
		}
	}
	switch {
	case len(tables) == 0:
		return "No rows."
	case len(empty) == len(tables) && len(empty) == 1:
		return fmt.Sprintf("No rows: table %s is empty (its stored result has no rows).", empty[0])
	case len(empty) == 1:
		return fmt.Sprintf("No rows: table %s is empty (its stored result has no rows); %s.", empty[0], strings.Join(sizes, ", "))
	case len(empty) > 1:
		return fmt.Sprintf("No rows: tables %s are empty (their stored results have no rows); %s.", strings.Join(empty, ", "), strings.Join(sizes, ", "))
	}
	return fmt.Sprintf("No rows: %s, and the SQL selects none of them (check its WHERE, JOIN and HAVING).", strings.Join(sizes, ", "))
}
