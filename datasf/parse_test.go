package datasf

import (
	"context"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// One parse per query_datasf call: correction, the local checks, the count,
// the sample, the hints and the stored query all use the tree parsed from
// the model's text (the count and the sample receive it in a portal.Query,
// the dualresp.Plan of the call). Only a query naming a column the dataset
// lacks is read once more, by fuzzymatch.Correct.
func TestQueryParsesOnce(t *testing.T) {
	t.Parallel()
	fake := socratatest.NewServer(t)
	schema := socratatest.Schema{ID: "abcd-1234", Name: "Parse", Columns: []socratatest.Column{
		{Name: "N", FieldName: "n", DataType: "number"},
		{Name: "Label", FieldName: "label", DataType: "text"},
	}}
	if err := fake.AddGenerated(t.Context(), schema, 257, func(i int) map[string]any {
		return map[string]any{"n": i, "label": fmt.Sprintf("row %03d", i%10)}
	}); err != nil {
		t.Fatal(err)
	}
	svc, err := New(t.Context(), Config{Socrata: socrata.Options{BaseURL: fake.URL(), DiscoveryURL: fake.URL(), MaxRetries: -1}, CleanupInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	for _, soql := range []string{
		"SELECT label, count(*) AS c GROUP BY label ORDER BY c DESC",
		"SELECT lable, n WHERE n > 100",                // a corrected name
		"SELECT count(*) AS c WHERE label = 'ROW 001'", // a zero answer, with hints
		"SELECT n WHERE label = 'nothing at all'",      // no row
		"SELECT count(*) AS c WHERE n > '2024-01-01'",  // refused locally
	} {
		counter := &parseCounter{}
		ctx := context.WithValue(t.Context(), parseCounterKey{}, counter)
		req := mcp.CallToolRequest{}
		req.Params.Arguments = map[string]any{"dataset_id": "abcd-1234", "soql": soql}
		res, err := queryTool(svc.server).handler(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if n := counter.n.Load(); n != 1 {
			t.Errorf("query_datasf(%q) parsed the SoQL %d times; want 1 (result %s)", soql, n, fmt.Sprint(res.Content))
		}
	}
}
