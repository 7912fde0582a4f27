package datasf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/mark3labs/mcp-go/mcp"
)

// result_page's limits: its input schema and its validation use them.
const (
	// MaxResultRef is the most characters of result (an id, resource://
	// URI or REST URL).
	MaxResultRef = 1000
	// MaxResultPageLimit is the most rows of one page: the REST API's
	// default page size (dualresp.DefaultPageLimit).
	MaxResultPageLimit     = dualresp.DefaultPageLimit
	DefaultResultPageLimit = 100
	// MaxResultPageOffset bounds offset (the REST API has no bound; the
	// schema of an integer argument states one).
	MaxResultPageOffset = 1_000_000_000
	// MaxSortField is the most characters of sort_by.
	MaxSortField = 200
)

// ResultPageInput is result_page's arguments. A nil Limit means
// DefaultResultPageLimit, a nil Offset 0; an empty Order means ascending.
type ResultPageInput struct {
	Result string `json:"result" validate:"required,notblank,min=1,max=1000" jsonschema:"The stored result: its id, resource:// URI or URL (resource.uri or resource.url of query_datasf)."`
	Offset *int   `json:"offset,omitempty" validate:"omitnil,min=0,max=1000000000" default:"0" jsonschema:"The first row to return, counting from 0."`
	Limit  *int   `json:"limit,omitempty" validate:"omitnil,min=1,max=1000" default:"100" jsonschema:"How many rows to return (1-1000, default 100)."`
	SortBy string `json:"sort_by,omitempty" validate:"omitempty,max=200" jsonschema:"Sort by this column of the result (one of its columns; anything else is refused). Without it, the result's own stable order."`
	Order  string `json:"order,omitempty" validate:"omitempty,oneof=asc desc" jsonschema:"The sort order of sort_by: asc (the default) or desc."`
	Format string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

func (in ResultPageInput) format() string { return in.Format }

// resultPageTool pages through a stored result for the result viewer (the
// MCP App): visible to the app only, hidden from the model (see app.go).
func resultPageTool(s *toolServer) tool {
	t := newTool[ResultPageInput](toolDef{
		name:        "result_page",
		title:       "Read a page of a stored result",
		description: "For the result viewer app: one page of a stored query result (the complete result, not the sample), optionally sorted by one of its columns. Checked like the REST API's page requests, and visible only to the caller that created the result.",
	}, s.resultPage)
	t.def.Meta = &mcp.Meta{AdditionalFields: map[string]any{
		"ui": appToolMeta{ResourceURI: AppURI, Visibility: []string{"app"}},
	}}
	return t
}

// resultInfo describes the stored result a page belongs to.
type resultInfo struct {
	ID         string            `json:"id"`
	URI        string            `json:"uri"`
	URL        string            `json:"url"`
	Name       string            `json:"name"`
	Query      string            `json:"query"`
	TotalCount int64             `json:"total_count"`
	Columns    []dualresp.Column `json:"columns"`
	ExpiresAt  string            `json:"expires_at,omitempty"`
	Pinned     bool              `json:"pinned"`
}

type pageSort struct {
	Field string `json:"field"`
	Order string `json:"order"`
}

// resultPageOutput is a REST page (dualresp.Page) with a summary, the
// result it belongs to and the order it was read in.
type resultPageOutput struct {
	Summary  string     `json:"summary"`
	Resource resultInfo `json:"resource"`
	Sort     *pageSort  `json:"sort,omitempty"`
	*dualresp.Page
}

// markdown is the summary alone: the rows are for the app, in the
// structured content.
func (out resultPageOutput) markdown() string { return out.Summary + "\n\n" }

func (resultPageOutput) outputSchema() json.RawMessage { return resultPageOutputSchema }

func (s *toolServer) resultPage(ctx context.Context, _ mcp.CallToolRequest, in ResultPageInput) (resultPageOutput, error) {
	id, err := dualresp.ResourceID(in.Result)
	if err != nil {
		return resultPageOutput{}, validationError(fmt.Sprintf("result %q is not a stored result's id, resource:// URI or URL", in.Result),
			map[string]any{"field": "result"})
	}
	if in.Order != "" && in.SortBy == "" {
		return resultPageOutput{}, validationError("order needs sort_by: name the column to sort by", map[string]any{"field": "order"})
	}
	// Checked, counted and read as the REST API's page requests are.
	pq := dualresp.PageQuery{Offset: int64(or(in.Offset, 0)), Limit: int64(or(in.Limit, DefaultResultPageLimit))}
	if in.SortBy != "" {
		pq.Sort = []dualresp.SortParam{{Field: in.SortBy, Order: in.Order}}
	}
	rec, page, err := s.results.ReadPage(ctx, id, pq)
	var bad *dualresp.RequestError
	var store *dualresp.StorageError
	switch {
	case errors.As(err, &bad):
		arg := resultPageParam[bad.Param]
		return resultPageOutput{}, validationError(arg+": "+bad.Message, map[string]any{"field": arg})
	case errors.Is(err, dualresp.ErrNotFound), errors.Is(err, dualresp.ErrExpired), errors.As(err, &store):
		return resultPageOutput{}, resultReadError(err, in.Result)
	case err != nil:
		return resultPageOutput{}, &opError{what: "the page of result " + id, hint: "Run the query again with query_datasf.", err: err}
	}
	out := resultPageOutput{Page: page, Resource: resultInfo{
		ID: rec.ID, URI: s.results.URI(rec.ID), URL: s.results.URL(rec.ID), Name: rec.Name, Query: rec.Query.Text,
		TotalCount: rec.TotalCount, Columns: rec.Columns, Pinned: rec.Pinned,
	}}
	if out.Resource.Columns == nil {
		out.Resource.Columns = []dualresp.Column{}
	}
	if !rec.Pinned && !rec.ExpiresAt.IsZero() {
		out.Resource.ExpiresAt = rec.ExpiresAt.UTC().Format(time.RFC3339)
	}
	order := ""
	if in.SortBy != "" {
		out.Sort = &pageSort{Field: in.SortBy, Order: "asc"}
		if in.Order == "desc" {
			out.Sort.Order = "desc"
		}
		order = fmt.Sprintf(", sorted by %s %s", out.Sort.Field, out.Sort.Order)
	}
	if page.ReturnedCount == 0 {
		out.Summary = fmt.Sprintf("No rows from offset %d of %d in %q%s.", page.Offset, page.TotalCount, rec.Name, order)
	} else {
		out.Summary = fmt.Sprintf("Rows %d-%d of %d of %q%s.", page.Offset+1, page.Offset+page.ReturnedCount, page.TotalCount, rec.Name, order)
	}
	return out, nil
}

// resultPageParam names result_page's argument for a parameter of a
// dualresp.RequestError.
var resultPageParam = map[string]string{"offset": "offset", "limit": "limit", "sort": "sort_by"}

// resultReadError explains why a stored result cannot be read.
func resultReadError(err error, ref string) *toolError {
	switch {
	case errors.Is(err, dualresp.ErrExpired):
		return &toolError{Reason: fmt.Sprintf("result %q has expired;", ref), Next: "run its query again with query_datasf", Type: errNotFound, Code: "result_expired"}
	case errors.Is(err, dualresp.ErrNotFound):
		return &toolError{Reason: fmt.Sprintf("no stored result %q (it may have expired, or belong to another caller)", ref), Type: errNotFound, Code: "result_not_found"}
	}
	return &toolError{Reason: "reading result " + ref + " failed: " + err.Error(), Type: errAPI, Code: "storage_error"}
}

var resultPageOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "summary": {"type": "string"},
    "resource": {
      "type": "object",
      "properties": {
        "id": {"type": "string"},
        "uri": {"type": "string"},
        "url": {"type": "string"},
        "name": {"type": "string"},
        "query": {"type": "string"},
        "total_count": {"type": "integer"},
        "columns": {"type": "array", "items": {
          "type": "object",
          "properties": {"name": {"type": "string"}, "type": {"type": "string"}},
          "required": ["name"]
        }},
        "expires_at": {"type": "string"},
        "pinned": {"type": "boolean"}
      },
      "required": ["id", "uri", "url", "name", "query", "total_count", "columns", "pinned"]
    },
    "sort": {
      "type": "object",
      "properties": {"field": {"type": "string"}, "order": {"type": "string", "enum": ["asc", "desc"]}},
      "required": ["field", "order"]
    },
    "data": {"type": "array", "items": {"type": "object"}},
    "total_count": {"type": "integer"},
    "returned_count": {"type": "integer"},
    "offset": {"type": "integer"},
    "limit": {"type": "integer"},
    "has_next": {"type": "boolean"},
    "next_offset": {"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "The offset of the next page; null on the last page."},
    "has_previous": {"type": "boolean"},
    "limit_capped": {"type": "boolean"},
    "requested_limit": {"type": "integer"}
  },
  "required": ["summary", "resource", "data", "total_count", "returned_count", "offset", "limit", "has_next", "has_previous"]
}`)
