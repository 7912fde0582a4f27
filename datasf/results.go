package datasf

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// sessionResults remembers which results each MCP session created, so
// list_results can show a session its own results. Ids are kept per session,
// bounded; the records themselves live in the result store.
type sessionResults struct {
	mu  sync.Mutex
	ids map[string][]string
}

const maxResultsPerSession = 200

func sessionID(ctx context.Context) string {
	if s := server.ClientSessionFromContext(ctx); s != nil {
		return s.SessionID()
	}
	return ""
}

func (r *sessionResults) add(ctx context.Context, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids == nil {
		r.ids = map[string][]string{}
	}
	sid := sessionID(ctx)
	ids := append(r.ids[sid], id)
	if len(ids) > maxResultsPerSession {
		ids = ids[len(ids)-maxResultsPerSession:]
	}
	r.ids[sid] = ids
}

func (r *sessionResults) list(ctx context.Context) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids[sessionID(ctx)]...)
}

var listResultsInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "format": {"type": "string", "enum": ["auto", "json", "markdown"], "default": "auto",
      "description": "How to render the text content: markdown for people, json for code. structuredContent is always present."}
  },
  "additionalProperties": false
}`)

var listResultsOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "summary": {"type": "string"},
    "count": {"type": "integer"},
    "results": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "id": {"type": "string"},
        "uri": {"type": "string"},
        "url": {"type": "string"},
        "name": {"type": "string"},
        "query": {"type": "string"},
        "total_count": {"type": "integer"},
        "columns": {"type": "array", "items": {"type": "string"}},
        "created_at": {"type": "string"},
        "expires_at": {"type": ["string", "null"]},
        "pinned": {"type": "boolean"}
      },
      "required": ["id", "uri", "url", "name", "total_count", "columns"]
    }}
  },
  "required": ["summary", "count", "results"]
}`)

type resultItem struct {
	ID         string   `json:"id"`
	URI        string   `json:"uri"`
	URL        string   `json:"url"`
	Name       string   `json:"name"`
	Query      string   `json:"query,omitempty"`
	TotalCount int64    `json:"total_count"`
	Columns    []string `json:"columns"`
	CreatedAt  string   `json:"created_at,omitempty"`
	ExpiresAt  *string  `json:"expires_at"`
	Pinned     bool     `json:"pinned"`
}

type listResultsOutput struct {
	Summary string       `json:"summary"`
	Count   int          `json:"count"`
	Results []resultItem `json:"results"`
}

func (s *Server) listResultsTool() server.ServerTool {
	return server.ServerTool{
		Tool: newTool("list_results",
			"List the query results of this session that are still available: name, query, total rows, columns, expiry and link. Use it to find a result again instead of re-running a query.",
			listResultsInputSchema,
			mcp.WithRawOutputSchema(listResultsOutputSchema),
			readOnlyLocal("List stored results"),
		),
		Handler: s.listResults,
	}
}

// readOnlyLocal annotates a read-only tool that only reads this server's own
// state (not the open world).
func readOnlyLocal(title string) mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcp.ToBoolPtr(true),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	})
}

func (s *Server) listResults(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Format string `json:"format,omitempty"`
	}
	if res := decodeArgs(req, &in); res != nil {
		return res, nil
	}
	switch in.Format {
	case "", FormatAuto, FormatJSON, FormatMarkdown:
	default:
		return validationError(fmt.Sprintf("format must be one of auto, json, markdown; got %q", in.Format), map[string]any{"field": "format"}), nil
	}
	out := listResultsOutput{Results: []resultItem{}}
	ids := s.session.list(ctx)
	for i := len(ids) - 1; i >= 0; i-- { // newest first
		rec, err := s.results.Resource(ctx, ids[i])
		if err != nil {
			continue // expired or deleted
		}
		it := resultItem{
			ID: rec.ID, URI: s.results.URI(rec.ID), URL: s.results.URL(rec.ID), Name: rec.Name, Query: rec.Query.Text,
			TotalCount: rec.TotalCount, Columns: make([]string, 0, len(rec.Columns)), CreatedAt: rec.CreatedAt.UTC().Format(time.RFC3339),
			Pinned: rec.Pinned,
		}
		for _, c := range rec.Columns {
			it.Columns = append(it.Columns, c.Name)
		}
		if !rec.Pinned && !rec.ExpiresAt.IsZero() {
			e := rec.ExpiresAt.UTC().Format(time.RFC3339)
			it.ExpiresAt = &e
		}
		out.Results = append(out.Results, it)
	}
	out.Count = len(out.Results)
	out.Summary = fmt.Sprintf("%d stored results in this session.", out.Count)
	var table strings.Builder
	table.WriteString("| name | rows | expires | url |\n|---|---|---|---|\n")
	for _, it := range out.Results {
		exp := "never"
		if it.ExpiresAt != nil {
			exp = *it.ExpiresAt
		}
		fmt.Fprintf(&table, "| %s | %d | %s | %s |\n", cell(it.Name), it.TotalCount, exp, it.URL)
	}
	return render(responseFormat(ctx, in.Format), out, out.Summary, table.String()), nil
}
