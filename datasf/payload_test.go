package datasf_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/localportal/sampledata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// modelViews are the sizes of what a model is shown of a tool result, as
// JSON: its content (text and resource_link; a host that shows text) and
// its structured content (a host that passes structuredContent only).
func modelViews(t *testing.T, res *mcp.CallToolResult) (content, structured int) {
	t.Helper()
	c, err := json.Marshal(res.Content)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return len(c), len(sc)
}

// volatile are the parts of an answer that differ on every run.
var volatile = regexp.MustCompile(`[0-9a-f]{32}|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z|127\.0\.0\.1:\d+`)

// Small answers cost what they carry. The lean budget: a 10-row
// two-column answer is at most 1,000 bytes in the larger host view (the
// content a text host shows, or the structured content; the query is said
// once, as portal_url's $query). A SELECT * on the 22-column incidents (15
// sample rows asked) keeps within dualresp's byte budget of 5,500, which
// counts both views together: it has fewer sample rows than asked, and
// says so. The shapes are pinned by golden files
// (testdata/payload/*.golden.json; -update rewrites them).
func TestSmallAnswerPayload(t *testing.T) {
	t.Parallel()
	fake := socratatest.NewServer(t)
	d := sampledata.Datasets(sampledata.Options{Scale: 1e-9})[0]
	schema := socratatest.Schema{ID: "inci-dent", Name: d.Name, Description: d.Description, Category: d.Category, UpdatedAt: d.UpdatedAt, Columns: d.Columns}
	if err := fake.AddGenerated(t.Context(), schema, 2000, d.Row); err != nil {
		t.Fatal(err)
	}
	env := datasftest.New(t, datasftest.Options{PortalURL: fake.URL()})
	tests := []struct {
		name, soql string
		maxView    int // the larger of the two views
		maxBoth    int // both views together
	}{
		{"group_by_10x2", "SELECT police_district, count(*) AS n GROUP BY police_district ORDER BY n DESC LIMIT 10", 1000, 1800},
		{"select_star_15", "SELECT *", dualresp.DefaultByteBudget, dualresp.DefaultByteBudget},
	}
	for _, tt := range tests {
		req := mcp.CallToolRequest{}
		req.Params.Name = "query_datasf"
		req.Params.Arguments = map[string]any{"dataset_id": "inci-dent", "soql": tt.soql}
		res, err := env.MCP.CallTool(t.Context(), req)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tt.name, err, res)
		}
		content, structured := modelViews(t, res)
		t.Logf("%s: content %d bytes, structured content %d bytes, together %d (bounds: larger view %d, together %d)",
			tt.name, content, structured, content+structured, tt.maxView, tt.maxBoth)
		if os.Getenv("DUMP_PAYLOAD") != "" {
			c, _ := json.Marshal(res.Content)
			sc, _ := json.Marshal(res.StructuredContent)
			t.Logf("%s\n%s", c, sc)
		}
		if v := max(content, structured); v > tt.maxView {
			t.Errorf("%s: the larger host view is %d bytes; want at most %d", tt.name, v, tt.maxView)
		}
		if content+structured > tt.maxBoth {
			t.Errorf("%s: content and structured content are %d bytes together; want at most %d", tt.name, content+structured, tt.maxBoth)
		}
		b, err := json.MarshalIndent(map[string]any{"content": res.Content, "structuredContent": res.StructuredContent}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got := volatile.ReplaceAll(b, []byte("…"))
		path := filepath.Join("testdata", "payload", tt.name+".golden.json")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./datasf -run TestSmallAnswerPayload -update writes it)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s payload differs from %s (-want +got):\n%s", tt.name, path, diff)
		}
	}
}
