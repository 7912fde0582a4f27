package datasf_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// Socrata's rules through the tool and a fake upstream: the forms Socrata answers
// are answered (not refused locally), what it refuses is refused locally
// with its code and a fix, and every answer carries its provenance: the
// rows' last change (metadata.as_of, and "Data as of" in the text) and the
// portal URL that runs the same query (metadata.portal_url, said once: not
// in the text).
func TestRulesThroughTool(t *testing.T) {
	t.Parallel()
	fake := socratatest.NewServer(t)
	asOf := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	schema := socratatest.Schema{ID: "form-0001", Name: "Forms", UpdatedAt: asOf, Columns: []socrata.Column{
		{FieldName: "d", DataType: "calendar_date"}, {FieldName: "f", DataType: "date"}, {FieldName: "b", DataType: "checkbox"},
		{FieldName: "x", DataType: "double"}, {FieldName: "p", DataType: "point"}, {FieldName: "ph", DataType: "photo"}}}
	days := []string{"2022-12-31T23:00:00", "2023-01-01T00:00:00", "2023-01-01T10:30:00", "2023-01-15T00:00:00", "2024-02-01T00:00:00"}
	if err := fake.AddGenerated(t.Context(), schema, len(days), func(i int) map[string]any {
		return map[string]any{"d": days[i], "f": days[i] + "Z", "b": i%2 == 0, "x": float64(i) / 2, "p": "POINT (-122.4 37.7)"}
	}); err != nil {
		t.Fatal(err)
	}
	env := datasftest.New(t, datasftest.Options{PortalURL: fake.URL()})
	call := func(soql string) (*mcp.CallToolResult, map[string]any) {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name = "query_datasf"
		req.Params.Arguments = map[string]any{"dataset_id": "form-0001", "soql": soql}
		res, err := env.MCP.CallTool(t.Context(), req)
		if err != nil {
			t.Fatalf("query_datasf(%q): %v", soql, err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var sc map[string]any
		_ = json.Unmarshal(b, &sc)
		return res, sc
	}
	answered := []struct{ soql, first string }{
		{"SELECT count(*) AS c WHERE d >= '2023'", "4"},
		{"SELECT count(*) AS c WHERE d > '2023-01'", "3"},
		{"SELECT count(*) AS c WHERE d > '2023-01-01T11'", "2"},
		{"SELECT count(*) AS c WHERE d BETWEEN '2023' AND '2024'", "3"},
		{"SELECT count(*) AS c WHERE date_trunc_ym(d) = '2023-01'", "3"},
		{"SELECT count(*) AS c WHERE f >= '2023'", "4"},
		{"SELECT count(*) AS c WHERE :updated_at > '2024'", "5"},
		{"SELECT count(*) AS c WHERE b = '1'", "3"},
		{"SELECT count(*) AS c WHERE b = '0'", "2"},
		{"SELECT d + 'P1D' AS c ORDER BY :id LIMIT 1", "2023-01-01T23:00:00.000"},
		{"SELECT date_trunc_ym(d) - 'P1M' AS c ORDER BY :id LIMIT 1", "2022-11-01T00:00:00.000"},
		{"SELECT count(*) AS c WHERE x > 0.5", "3"},
		// The stable order of a grouped query leaves out a key that does
		// not sort (ORDER BY p would be refused).
		{"SELECT p, count(*) AS c GROUP BY p", "5"},
	}
	for _, tt := range answered {
		res, sc := call(tt.soql)
		if res.IsError {
			t.Errorf("query_datasf(%q) refused: %v", tt.soql, sc)
			continue
		}
		rows, _ := sc["results"].([]any)
		if len(rows) == 0 || rows[0].(map[string]any)["c"] != tt.first {
			t.Errorf("query_datasf(%q) results = %v; want c = %s first", tt.soql, rows, tt.first)
		}
		meta, _ := sc["metadata"].(map[string]any)
		if meta["as_of"] != "2025-03-04T05:06:07Z" {
			t.Errorf("query_datasf(%q) metadata.as_of = %v; want 2025-03-04T05:06:07Z", tt.soql, meta["as_of"])
		}
		pu, _ := meta["portal_url"].(string)
		u, err := url.Parse(pu)
		if err != nil || u.Scheme != "https" || u.Host != "data.sf.gov" || u.Path != "/resource/form-0001.json" || !strings.HasPrefix(u.Query().Get("$query"), tt.soql) {
			t.Errorf("query_datasf(%q) metadata.portal_url = %q; want https://data.sf.gov/resource/form-0001.json?$query=<the query run>", tt.soql, pu)
		}
		if q, ok := meta["query"]; ok {
			t.Errorf("query_datasf(%q) metadata.query = %v; want the query said once, in portal_url", tt.soql, q)
		}
		text := res.Content[0].(mcp.TextContent).Text
		if !strings.Contains(text, "Data as of 2025-03-04T05:06:07Z") || strings.Contains(text, "/resource/form-0001.json") {
			t.Errorf("query_datasf(%q) text lacks the provenance line or repeats the portal URL:\n%s", tt.soql, text)
		}
	}
	refused := []struct{ soql, code, fix string }{
		{"SELECT count(*) AS c WHERE d = '2023-01-01T00:00:00Z'", "type_mismatch", "no time zone"},
		{"SELECT count(*) AS c WHERE d > '2023-13-45'", "type_mismatch", "not a valid date"},
		{"SELECT round(x) AS c", "query.soql.no-such-function", "round(x, 0)"},
		{"SELECT count(*) AS c WHERE x = '3'", "type_mismatch", "number and double"},
		{"SELECT x::number AS c", "type_mismatch", "no cast from double"},
		{"SELECT count(*) AS c WHERE p = 'Mission'", "type_mismatch", "WKT"},
		{"SELECT max(ph) AS c", "type_mismatch", "Photo"},
		{"SELECT count(*) AS c WHERE x", "query.soql.non-boolean-where", "condition"},
		{"SELECT d ORDER BY p", "query.soql.unorderable-order-by", "does not sort"},
		{"SELECT date_extract_y(f) AS c", "type_mismatch", ""},
	}
	for _, tt := range refused {
		res, sc := call(tt.soql)
		if !res.IsError {
			t.Errorf("query_datasf(%q) answered; want refused with %s", tt.soql, tt.code)
			continue
		}
		text := res.Content[0].(mcp.TextContent).Text
		if !strings.Contains(text, tt.code) || !strings.Contains(text, tt.fix) || !strings.Contains(text, `"checked_locally":true`) {
			t.Errorf("query_datasf(%q) = %s; want code %s, fix %q, checked locally", tt.soql, text, tt.code, tt.fix)
		}
		_ = sc
	}
}
