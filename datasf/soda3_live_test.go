package datasf_test

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// livePortal starts a fake portal with a dataset of n rows whose columns
// have display names unlike their field names, whose SODA3 answers as the
// live one does: display-name keys, a field missing from the rows, pages
// of at most 5,000 rows (a larger page is answered HTTP 200 with a message
// object).
func livePortal(t *testing.T, n int) *socratatest.Server {
	t.Helper()
	srv := socratatest.NewServer(t)
	schema := socratatest.Schema{ID: "post-0002", Name: "Parking meters", Columns: []socrata.Column{
		{Name: "POST_ID", FieldName: "post_id", DataType: "text"},
		{Name: "Street Name", FieldName: "street_name", DataType: "text"},
		{Name: "CAP_COLOR", FieldName: "cap_color", DataType: "text"},
	}}
	streets := []string{"MARKET ST", "MISSION ST", "VALENCIA ST"}
	if err := srv.AddGenerated(t.Context(), schema, n, func(i int) map[string]any {
		return map[string]any{"post_id": strings.Repeat("0", 3) + string(rune('A'+i%26)) + "-" + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26)),
			"street_name": streets[i%len(streets)], "cap_color": []string{"Grey", "Red"}[i%2]}
	}); err != nil {
		t.Fatal(err)
	}
	if err := srv.SetSODA3Live(socratatest.SODA3Live{DisplayNameKeys: []string{"post-0002"},
		Missing: map[string][]string{"post-0002": {"cap_color"}}}); err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestQuerySODA3Live runs query_datasf with an app token (SODA3) and
// without (SODA 2.1) through MCP sessions against a portal whose SODA3
// keys rows by display names, leaves a field out, and refuses pages over
// 5,000 rows with a 200 message object: with the token, the sample is
// keyed by field names, the missing field is null, and the whole 12,000-row
// export is SODA 2.1's but for that field.
func TestQuerySODA3Live(t *testing.T) {
	t.Parallel()
	portal := livePortal(t, 12_000)
	v3 := soda3Env(t, portal, "tok-live")
	v2 := soda3Env(t, portal, "")
	const q = "SELECT post_id, street_name, cap_color ORDER BY post_id"
	a3, _ := soda3Query(t, v3, "post-0002", q)
	a2, _ := soda3Query(t, v2, "post-0002", q)
	if a3.Metadata.TotalCount != 12_000 || a2.Metadata.TotalCount != 12_000 {
		t.Errorf("total_count: SODA3 %d, SODA 2.1 %d; want 12000", a3.Metadata.TotalCount, a2.Metadata.TotalCount)
	}
	if len(a3.Results) == 0 || len(a3.Results) != len(a2.Results) {
		t.Fatalf("samples: %d rows via SODA3, %d via SODA 2.1; want the same, above 0", len(a3.Results), len(a2.Results))
	}
	for i, r := range a3.Results {
		if r["post_id"] != a2.Results[i]["post_id"] || r["street_name"] != a2.Results[i]["street_name"] {
			t.Errorf("sample row %d via SODA3 = %v; want post_id and street_name of %v", i, r, a2.Results[i])
		}
		if v, ok := r["cap_color"]; ok && v != nil {
			t.Errorf("sample row %d via SODA3 has cap_color %v; the portal left it out, so want null", i, v)
		}
		if _, ok := r["POST_ID"]; ok {
			t.Errorf("sample row %d via SODA3 is keyed by display names: %v", i, r)
		}
	}
	e3 := getText(t, a3.Resource.URL+"/export?format=csv")
	e2 := getText(t, a2.Resource.URL+"/export?format=csv")
	l3, l2 := strings.Split(strings.TrimSpace(e3), "\n"), strings.Split(strings.TrimSpace(e2), "\n")
	if len(l3) != 12_001 || len(l2) != 12_001 {
		t.Fatalf("CSV exports: %d lines via SODA3, %d via SODA 2.1; want 12001 each", len(l3), len(l2))
	}
	if l3[0] != l2[0] {
		t.Errorf("CSV header via SODA3 %q; want SODA 2.1's %q", l3[0], l2[0])
	}
	for i := 1; i < len(l3); i++ {
		// SODA 2.1's line with cap_color (the last field) left empty.
		want := l2[i][:strings.LastIndexByte(l2[i], ',')+1]
		if l3[i] != want {
			t.Fatalf("CSV line %d via SODA3 %q; want %q", i, l3[i], want)
		}
	}
}

// TestQuerySODA2Gone calls query_datasf without an app token on a portal
// whose SODA 2.1 answers that it is gone: an isError result that says an
// app token is needed and where to get one, in Socrata's words too. With a
// token the same call answers (SODA3).
func TestQuerySODA2Gone(t *testing.T) {
	t.Parallel()
	portal := livePortal(t, 50)
	if err := portal.SetSODA2Gone(true); err != nil {
		t.Fatal(err)
	}
	env := soda3Env(t, portal, "")
	args := map[string]any{"dataset_id": "post-0002", "soql": "SELECT post_id"}
	res, err := env.Call(t.Context(), "query_datasf", args)
	if err != nil {
		t.Fatal(err)
	}
	e := errorOf(t, "query_datasf", args, res)
	for _, part := range []string{"app token", "SOCRATA_APP_TOKEN", socrata.AppTokenURL(portal.Domain()), "HTTP 410", "deprecated"} {
		if !strings.Contains(e.Error, part) {
			t.Errorf("error %q does not say %q", e.Error, part)
		}
	}
	if tc, ok := mcp.AsTextContent(res.Content[0]); !ok || !strings.Contains(tc.Text, `"code":"`+datasf.CodeAppTokenRequired+`"`) {
		t.Errorf("error result %v; want the code %s", res.Content[0], datasf.CodeAppTokenRequired)
	}
	a, _ := soda3Query(t, soda3Env(t, portal, "tok"), "post-0002", "SELECT post_id ORDER BY post_id")
	if a.Metadata.TotalCount != 50 {
		t.Errorf("with a token: total_count %d; want 50", a.Metadata.TotalCount)
	}
}
