package datasf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// resourcePageSize is the number of rows a resources/read returns: the
// first page. The full result is at the resource's url.
const resourcePageSize = 100

// resourceBody is the JSON text of a resources/read of resource://{id}.
type resourceBody struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	URL         string            `json:"url"`
	Status      string            `json:"status"`
	TotalCount  int64             `json:"total_count"`
	Columns     []dualresp.Column `json:"columns"`
	Query       string            `json:"query"`
	Metadata    map[string]any    `json:"metadata,omitempty"`
	CreatedAt   time.Time         `json:"created_at"`
	ExpiresAt   *time.Time        `json:"expires_at"`
	Data        []json.RawMessage `json:"data"`
	Offset      int64             `json:"offset"`
	Returned    int               `json:"returned_count"`
	HasNext     bool              `json:"has_next"`
	NextOffset  *int64            `json:"next_offset"`
	AccessCount int64             `json:"access_count"`
}

// readResource serves resources/read of resource://{id}: the result's
// metadata and its first page of rows.
func (s *Server) readResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, "resource://")
	if !ok || id == "" || strings.ContainsAny(id, "/?#") {
		return nil, fmt.Errorf("%q is not a result URI; expected resource://ID as returned by query_datasf", uri)
	}
	rec, err := s.results.Access(ctx, id)
	switch {
	case errors.Is(err, dualresp.ErrNotFound):
		return nil, fmt.Errorf("result %s was not found; run query_datasf again to get a new one", id)
	case errors.Is(err, dualresp.ErrExpired):
		return nil, fmt.Errorf("result %s has expired; run query_datasf again to get a new one", id)
	case err != nil:
		return nil, err
	}
	rows, err := s.exec.Page(ctx, rec.Query, dualresp.PageRequest{Offset: 0, Limit: resourcePageSize})
	if err != nil {
		return nil, fmt.Errorf("reading the first page of result %s: %w", id, err)
	}
	body := resourceBody{
		ID: rec.ID, Name: rec.Name, URL: s.results.URL(rec.ID), Status: "active", TotalCount: rec.TotalCount,
		Columns: rec.Columns, Query: rec.Query.Text, Metadata: rec.Metadata, CreatedAt: rec.CreatedAt,
		Data: rows, Returned: len(rows), HasNext: int64(len(rows)) < rec.TotalCount, AccessCount: rec.AccessCount,
	}
	if body.Data == nil {
		body.Data = []json.RawMessage{}
	}
	if rec.Pinned {
		body.Status = "pinned"
	} else {
		exp := rec.ExpiresAt
		body.ExpiresAt = &exp
	}
	if body.HasNext {
		next := int64(len(rows))
		body.NextOffset = &next
	}
	text, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(text)}}, nil
}
