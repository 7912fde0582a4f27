package datasf_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
)

// resourceBody is the JSON text of a resources/read of resource://{id}.
type resourceBody struct {
	ID         string `json:"id"`
	URL        string `json:"url"`
	TotalCount int64  `json:"total_count"`
	Query      struct {
		Text string `json:"text"`
	} `json:"query"`
	Data       []map[string]any `json:"data"`
	Returned   int              `json:"returned_count"`
	HasNext    bool             `json:"has_next"`
	NextOffset *int64           `json:"next_offset"`
	Columns    []struct {
		Name string `json:"name"`
	} `json:"columns"`
}

func (h *harness) readResource(t *testing.T, uri string) (*mcp.ReadResourceResult, error) {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	return h.mcp.ReadResource(t.Context(), req)
}

// TestReadResource reads query results as MCP resources: the metadata and
// the first page, checked against the tool result and the REST endpoint.
func TestReadResource(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	tests := []struct {
		soql      string
		wantTotal int64
		wantPage  int
	}{
		{"SELECT objectid, status", int64(len(resourceRows(t, "rqzj-sfat"))), 100},
		{"SELECT facilitytype, count(*) AS n GROUP BY facilitytype", int64(len(groupCounts(resourceRows(t, "rqzj-sfat"), "facilitytype"))), 3},
		{"SELECT objectid WHERE status = 'NONE'", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.soql, func(t *testing.T) {
			t.Parallel()
			out := h.query(t, map[string]any{"dataset_id": "rqzj-sfat", "soql": tt.soql})
			res, err := h.readResource(t, out.Resource.URI)
			if err != nil {
				t.Fatalf("resources/read %s: %v", out.Resource.URI, err)
			}
			if len(res.Contents) != 1 {
				t.Fatalf("resources/read %s: %d contents; want 1", out.Resource.URI, len(res.Contents))
			}
			tc, ok := res.Contents[0].(mcp.TextResourceContents)
			if !ok {
				t.Fatalf("resources/read %s: content is %T; want text", out.Resource.URI, res.Contents[0])
			}
			if tc.URI != out.Resource.URI || tc.MIMEType != "application/json" {
				t.Errorf("resources/read: uri %q mimeType %q; want %q application/json", tc.URI, tc.MIMEType, out.Resource.URI)
			}
			var body resourceBody
			if err := json.Unmarshal([]byte(tc.Text), &body); err != nil {
				t.Fatalf("resources/read text is not JSON: %v", err)
			}
			if body.TotalCount != out.Metadata.TotalCount || body.TotalCount != tt.wantTotal {
				t.Errorf("resource total_count %d; tool total_count %d; want %d", body.TotalCount, out.Metadata.TotalCount, tt.wantTotal)
			}
			if len(body.Data) != tt.wantPage || body.Returned != tt.wantPage {
				t.Errorf("resource first page: %d rows (returned_count %d); want %d", len(body.Data), body.Returned, tt.wantPage)
			}
			if wantNext := int64(tt.wantPage) < tt.wantTotal; body.HasNext != wantNext || (body.NextOffset != nil) != wantNext {
				t.Errorf("resource has_next %t next_offset %v; want has_next %t", body.HasNext, body.NextOffset, wantNext)
			}
			if body.URL != out.Resource.URL || body.Query.Text != out.Metadata.Query {
				t.Errorf("resource url %q query %q; tool gave %q %q", body.URL, body.Query.Text, out.Resource.URL, out.Metadata.Query)
			}
			// The first page is the REST endpoint's first page.
			if tt.wantPage > 0 {
				var p page
				getJSON(t, out.Resource.URL+"?offset=0&limit=100", &p)
				if diff := cmp.Diff(p.Data, body.Data); diff != "" {
					t.Errorf("resource first page vs REST first page (-rest +resource):\n%s", diff)
				}
			}
		})
	}
}

func TestReadResourceErrors(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	for _, uri := range []string{
		"resource://00000000000000000000000000000000",
		"resource://",
		"resource://abc/def",
		"file:///etc/passwd",
	} {
		t.Run(uri, func(t *testing.T) {
			t.Parallel()
			res, err := h.readResource(t, uri)
			if err == nil {
				t.Fatalf("resources/read %s = %+v; want an error", uri, res)
			}
			if strings.Contains(uri, "0000") && !strings.Contains(err.Error(), "not found") {
				t.Errorf("resources/read %s: error %q does not say not found", uri, err)
			}
		})
	}
}

// TestResourceTemplate checks that the resource template is listed.
func TestResourceTemplate(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	res, err := h.mcp.ListResourceTemplates(t.Context(), mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rt := range res.ResourceTemplates {
		got = append(got, rt.URITemplate.Raw())
	}
	if diff := cmp.Diff([]string{"resource://{id}"}, got); diff != "" {
		t.Errorf("resource templates (-want +got):\n%s", diff)
	}
}
