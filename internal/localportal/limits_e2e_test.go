//go:build e2e

package localportal

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// TestValueBounds: a value, a row and a LIKE a query makes are bounded,
// with an error naming the bound; values at the bound are made.
func TestValueBounds(t *testing.T) {
	t.Parallel()
	p := functionsDataset(t)
	a300 := strings.Repeat("a", 300)
	for _, tc := range []struct {
		soql string
		want string // in the error; "" for rows
		len  int    // of x, when want is ""
	}{
		{soql: "SELECT right_pad('7', 1048576, 'x') AS x LIMIT 1", len: 1 << 20},
		{soql: "SELECT left_pad('7', 4, 'ab') AS x LIMIT 1", len: 5}, // whole copies: abab7
		{soql: "SELECT right_pad('7', 1048577, 'x') AS x LIMIT 1", want: "right_pad to 1048577 characters would make a value longer than the limit of 1048576 bytes"},
		{soql: "SELECT left_pad(t, 400000000, 'x') AS x LIMIT 1", want: "left_pad to 400000000 characters would make a value longer than the limit of 1048576 bytes"},
		{soql: "SELECT left_pad(t, 1e300, 'x') AS x LIMIT 1", want: "limit of 1048576 bytes"},
		{soql: "SELECT left_pad(t, 800000, 'xé') AS x LIMIT 1", want: "limit of 1048576 bytes"}, // 399,996 copies of 3 bytes
		{soql: "SELECT replace(replace(replace('aaaaaaaa','a','" + a300 + "'),'a','" + a300 + "'),'a','" + a300 + "') AS x LIMIT 3",
			want: "a value would be longer than the limit of 1048576 bytes"},
		{soql: "SELECT right_pad(t, 1000000, 'x') AS a, right_pad(t, 1000000, 'x') AS b, right_pad(t, 1000000, 'x') AS c, " +
			"right_pad(t, 1000000, 'x') AS d, right_pad(t, 1000000, 'x') AS e LIMIT 1",
			want: "a row of the result is longer than the limit of 4194304 bytes"},
		// A pattern of the query is SQLite's GLOB's, any other localportal_like's.
		{soql: "SELECT count(*) AS x WHERE right_pad(t, 1000000, 'a') LIKE '%" + strings.Repeat("a", 300) + "b'",
			want: "a LIKE pattern is longer than the limit of 256 characters"},
		{soql: "SELECT count(*) AS x WHERE right_pad(t, 1000000, 'a') LIKE '%' || right_pad('', 100, 'a') || 'b'",
			want: "LIKE of a 102-character pattern on a 1000000-character value takes too long"},
	} {
		r := get(t, p, "/resource/func-0001.json", url.Values{"$query": {tc.soql}})
		if tc.want == "" {
			if r.status != http.StatusOK {
				t.Errorf("%.80s: status %d: %.300s; want rows", tc.soql, r.status, r.body)
				continue
			}
			rows := decodeRows(t, r.body)
			if got, _ := rows[0]["x"].(string); len(got) != tc.len {
				t.Errorf("%.80s: x has %d bytes; want %d", tc.soql, len(got), tc.len)
			}
			continue
		}
		if r.status != http.StatusBadRequest || !bytes.Contains(r.body, []byte(tc.want)) {
			t.Errorf("%.80s: status %d: %.400s; want 400 with %q", tc.soql, r.status, r.body, tc.want)
		}
	}
}

// TestPageBound: an answer's rows stop at maxPageBytes, the body cut short
// (no closing bracket) so that no client takes it for the whole result.
func TestPageBound(t *testing.T) {
	t.Parallel()
	p := newPortal(t)
	schema := Schema{ID: "page-0001", Name: "Pages", Columns: []socrata.Column{{FieldName: "t", DataType: "text"}}}
	if err := p.AddGenerated(t.Context(), schema, 100, func(int) map[string]any { return map[string]any{"t": "a"} }); err != nil {
		t.Fatal(err)
	}
	r := get(t, p, "/resource/page-0001.json", url.Values{"$query": {"SELECT right_pad(t, 1000000, 'x') AS x LIMIT 100"}})
	if r.status != http.StatusOK || bytes.HasSuffix(bytes.TrimSpace(r.body), []byte("]")) || len(r.body) > maxPageBytes {
		t.Errorf("100 rows of 1,000,000 bytes: status %d, %d bytes, ends %q; want 200 cut short within %d bytes", r.status, len(r.body), r.body[max(0, len(r.body)-20):], maxPageBytes)
	}
}

// functionsDataset is the small dataset the function tests query.
func functionsDataset(t *testing.T) *Emulator {
	t.Helper()
	p := newPortal(t)
	schema := Schema{ID: "func-0001", Name: "Functions", Columns: []socrata.Column{
		{FieldName: "t", DataType: "text"}, {FieldName: "n", DataType: "number"}, {FieldName: "m", DataType: "number"},
		{FieldName: "d", DataType: "calendar_date"}, {FieldName: "f", DataType: "date"}, {FieldName: "b", DataType: "checkbox"},
		{FieldName: "p", DataType: "point"}, {FieldName: "l", DataType: "location"}, {FieldName: "u", DataType: "url"},
		{FieldName: "g", DataType: "multipolygon"}}}
	rows := []map[string]any{
		{"t": "Café Noir", "n": 2.5, "m": 10, "d": "2024-03-15T13:45:30", "f": "2024-03-15T20:45:30Z", "b": true,
			"p": "POINT (-122.41 37.78)", "l": "1 MARKET ST\nSAN FRANCISCO, CA 94105\n(37.78, -122.41)",
			"u": "Home (https://a.example/x)",
			"g": map[string]any{"type": "MultiPolygon", "coordinates": []any{[]any{[]any{[]any{0, 0}, []any{1, 0}, []any{1, 1}, []any{0, 0}}}}}},
		{"t": "café noir", "n": -1, "m": 20, "d": "2023-12-31T23:59:59", "b": false, "p": "(37.70, -122.50)", "l": "(37.70, -122.50)"},
		{"t": "BAR", "n": 4, "m": 30, "d": "2024-01-01T00:00:00", "p": "POINT (-122.40 37.79)"},
		{"m": 40},
	}
	if err := p.AddGenerated(t.Context(), schema, len(rows), func(i int) map[string]any { return rows[i] }); err != nil {
		t.Fatal(err)
	}
	return p
}
