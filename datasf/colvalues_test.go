package datasf_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
)

type schemaValuesOut struct {
	Columns []struct {
		FieldName string   `json:"fieldName"`
		NullShare *float64 `json:"null_share"`
		Values    []string `json:"values"`
	} `json:"columns"`
}

// get_schema gives every column's null share and the values of text
// columns with few distinct values, from the Views API's cachedContents
// (the fake portal fills them as the real one does); a column of many
// distinct values (film titles) shows none. The answer stays within its
// token budget.
func TestSchemaColumnValues(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	tests := []struct {
		id        string
		column    string
		want      string // a value it must show; "" for none shown
		wantNulls float64
	}{
		{"wg3w-h783", "incident_category", "Larceny Theft", 0},
		{"yitu-d5am", "title", "", 0},
		{"yitu-d5am", "locations", "", -1},
	}
	for _, tt := range tests {
		args := map[string]any{"dataset_id": tt.id}
		res := h.call(t, "get_schema", args)
		var out schemaValuesOut
		structured(t, "get_schema", args, res, &out)
		for _, c := range out.Columns {
			if c.NullShare == nil {
				t.Errorf("get_schema(%s): column %s has no null_share", tt.id, c.FieldName)
			}
			if c.FieldName != tt.column {
				continue
			}
			switch {
			case tt.want == "" && c.Values != nil:
				t.Errorf("get_schema(%s).%s values = %q; want none (many distinct values)", tt.id, c.FieldName, c.Values)
			case tt.want != "" && !slices.Contains(c.Values, tt.want):
				t.Errorf("get_schema(%s).%s values = %q; want %q among them", tt.id, c.FieldName, c.Values, tt.want)
			}
			if tt.wantNulls >= 0 && c.NullShare != nil && *c.NullShare != tt.wantNulls {
				t.Errorf("get_schema(%s).%s null_share = %v; want %v", tt.id, c.FieldName, *c.NullShare, tt.wantNulls)
			}
		}
		// The same answer without values and null shares: what they add
		// is what their budget bounds.
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var bare map[string]any
		if err := json.Unmarshal(b, &bare); err != nil {
			t.Fatal(err)
		}
		for _, c := range bare["columns"].([]any) {
			delete(c.(map[string]any), "values")
			delete(c.(map[string]any), "null_share")
		}
		bb, _ := json.Marshal(bare)
		n, nb := claudeTokens(t, b), claudeTokens(t, bb)
		t.Logf("get_schema(%s): %d columns, structuredContent %d bytes, %d tokens; without values and null shares %d bytes, %d tokens; they add %d (budget 900)",
			tt.id, len(out.Columns), len(b), n, len(bb), nb, n-nb)
		if n-nb > 900 {
			t.Errorf("get_schema(%s): values and null shares add %d tokens; want at most 900", tt.id, n-nb)
		}
	}
}

// The offline incidents (generated, made on first use): get_schema shows
// incident_category's values as the data writes them, and values and null
// shares stay within their budget.
func TestOfflineSchemaValuesTokens(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the offline incidents dataset")
	}
	t.Parallel()
	p, err := localportal.StartOffline(t.Context(), localportal.OfflineOptions{SampleScale: 0.004, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	env := datasftest.New(t, datasftest.Options{PortalURL: p.URL()})
	// Make the dataset first (with the Resource API, not through the
	// server, whose schema cache would then hold a schema read before the
	// dataset was made), so that the test does not depend on how fast the
	// machine builds it: its Views document then has cachedContents.
	// (Before it is made, get_schema's bounded queries give the values:
	// TestQueryStats.)
	if _, err := env.Service.SocrataClient().Query(t.Context(), "wg3w-h783", "SELECT count(*) AS n"); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"dataset_id": "wg3w-h783"}
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "get_schema", args
	res, err := env.MCP.CallTool(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out schemaValuesOut
	structured(t, "get_schema", args, res, &out)
	var category []string
	for _, c := range out.Columns {
		if c.FieldName == "incident_category" {
			category = c.Values
		}
	}
	if !slices.Contains(category, "Larceny Theft") {
		t.Errorf("get_schema(wg3w-h783).incident_category values = %q; want 'Larceny Theft' among them", category)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var bare map[string]any
	_ = json.Unmarshal(b, &bare)
	for _, c := range bare["columns"].([]any) {
		delete(c.(map[string]any), "values")
		delete(c.(map[string]any), "null_share")
	}
	bb, _ := json.Marshal(bare)
	n, nb := claudeTokens(t, b), claudeTokens(t, bb)
	t.Logf("offline get_schema(wg3w-h783): %d columns, %d tokens; without values and null shares %d; they add %d (budget 900)", len(out.Columns), n, nb, n-nb)
	if n-nb > 900 {
		t.Errorf("values and null shares add %d tokens; want at most 900", n-nb)
	}
}
