package datasf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// resourcePageSize is the number of rows a resources/read returns: the
// first page. The full result is at the resource's url.
const resourcePageSize = 100

// readResource serves resources/read of resource://{id}: the result's
// metadata (dualresp.ResourceInfo) and its first page (the fields of a
// dualresp.Page) in one JSON object.
func (s *toolServer) readResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	id, err := dualresp.ResourceID(uri)
	if err != nil || !strings.HasPrefix(uri, "resource://") {
		return nil, fmt.Errorf("%q is not a result URI; expected resource://ID as returned by query_datasf", uri)
	}
	rec, page, err := s.results.ReadPage(ctx, id, dualresp.PageQuery{Limit: resourcePageSize})
	switch {
	case errors.Is(err, dualresp.ErrNotFound):
		return nil, fmt.Errorf("result %s was not found; run query_datasf again to get a new one", id)
	case errors.Is(err, dualresp.ErrExpired):
		return nil, fmt.Errorf("result %s has expired; run query_datasf again to get a new one", id)
	case err != nil:
		return nil, fmt.Errorf("reading the first page of result %s: %w", id, err)
	}
	text, err := mergeObjects(s.results.Info(rec), page)
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(text)}}, nil
}

// mergeObjects encodes the JSON objects of vs as one object; a later key
// replaces an earlier one.
func mergeObjects(vs ...any) ([]byte, error) {
	all := map[string]json.RawMessage{}
	for _, v := range vs {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		maps.Copy(all, m)
	}
	return json.Marshal(all)
}
