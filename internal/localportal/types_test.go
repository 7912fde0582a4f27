package localportal

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// The portal refuses what Socrata's analyzer refuses for types, with its
// code, instead of answering another question: an unquoted date is
// arithmetic (2023 - 01 - 01 = 2021) compared with a timestamp.
func TestTypeRefusals(t *testing.T) {
	t.Parallel()
	p := newPortal(t)
	schema := Schema{ID: "type-0001", Name: "Types", Columns: []socrata.Column{
		{FieldName: "d", DataType: "calendar_date"}, {FieldName: "n", DataType: "number"}, {FieldName: "s", DataType: "text"}}}
	if err := p.AddGenerated(t.Context(), schema, 10, func(i int) map[string]any {
		return map[string]any{"d": "2023-01-0" + string(rune('1'+i%9)) + "T00:00:00", "n": i, "s": "x"}
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		soql   string
		status int
	}{
		{"SELECT count(*) AS c WHERE d > 2023-01-01", http.StatusBadRequest},
		{"SELECT count(*) AS c WHERE s = 3", http.StatusBadRequest},
		{"SELECT n + s AS x", http.StatusBadRequest},
		{"SELECT date_trunc_ym(n) AS m", http.StatusBadRequest},
		{"SELECT count(*) AS c WHERE d > '2023-01-01'", http.StatusOK},
		{"SELECT count(*) AS c WHERE n = '3'", http.StatusOK},
	}
	for _, tt := range tests {
		r := get(t, p, "/resource/type-0001.json", url.Values{"$query": {tt.soql}})
		if r.status != tt.status {
			t.Errorf("%q: status %d; want %d (%s)", tt.soql, r.status, tt.status, r.body)
			continue
		}
		if tt.status == http.StatusBadRequest {
			if body := decodeObject(t, r.body); body["errorCode"] != "query.soql.type-mismatch" {
				t.Errorf("%q: %v; want query.soql.type-mismatch", tt.soql, body)
			}
		}
	}
}
