package dualresp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/google/go-cmp/cmp"
)

func jsonValue(t interface{ Fatalf(string, ...any) }, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("json.Unmarshal: %v", err)
	}
	return out
}

func TestStructuredContentShape(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{Total: 847}, dualresp.Options{BaseURL: "http://127.0.0.1:8765"})
	resp := create(t, srv, dualresp.Spec{
		Name:       "Generated rows",
		SampleSize: 2,
		Query:      dualresp.Query{Kind: "gen", Text: "SELECT * ORDER BY :id"},
		Columns:    []dualresp.Column{{Name: "i", Type: "number"}, {Name: "name"}},
		Metadata: map[string]any{
			"dataset_id":   "rqzj-sfat",
			"corrections":  []map[string]any{{"original": "nmae", "corrected": "name", "wasChanged": true}},
			"total_count":  -1, // dualresp's own keys win
			"caller_extra": 1,
		},
	})
	id := resp.ID()
	url := "http://127.0.0.1:8765/resources/" + id
	want := fmt.Sprintf(`{
	  "summary": "847 rows match. 2 sample rows follow. Download: %[1]s/export?format=csv (or format=ndjson, json, parquet).",
	  "results": [
	    {"i": 0, "name": "row-0", "even": true, "tags": ["a", 0]},
	    {"i": 1, "name": "row-1", "even": false, "tags": ["a", 1]}
	  ],
	  "resource": {"uri": "resource://%[2]s", "url": "%[1]s"},
	  "metadata": {
	    "dataset_id": "rqzj-sfat",
	    "query": "SELECT * ORDER BY :id",
	    "corrections": [{"original": "nmae", "corrected": "name", "wasChanged": true}],
	    "caller_extra": 1,
	    "total_count": 847, "sample_count": 2, "truncated": true,
	    "columns": ["i", "name"],
	    "expires_at": "2025-06-01T12:15:00Z"
	  }
	}`, url, id)
	var wantV any
	if err := json.Unmarshal([]byte(want), &wantV); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantV, jsonValue(t, resp.StructuredContent())); diff != "" {
		t.Errorf("StructuredContent() mismatch (-want +got):\n%s", diff)
	}

	wantText := "847 rows match. 2 sample rows follow. Download: " + url + "/export?format=csv (or format=ndjson, json, parquet).\n\n" +
		"| i | name |\n|-|-|\n| 0 | row-0 |\n| 1 | row-1 |"
	if got := resp.Text(); got != wantText {
		t.Errorf("Text() = %q; want %q", got, wantText)
	}
	link := resp.Link()
	if link.URI != "resource://"+id || link.URL != url || link.Name != "Generated rows" || link.MIMEType != "application/json" || link.Description != "The complete result, 847 rows" || link.Size != nil {
		t.Errorf("Link() = %+v", link)
	}

	// The structured content reads back as the same value.
	b, err := json.Marshal(resp.StructuredContent())
	if err != nil {
		t.Fatal(err)
	}
	var back dualresp.Structured
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantV, jsonValue(t, back)); diff != "" {
		t.Errorf("structured content after a round trip through Structured (-want +got):\n%s", diff)
	}
}

func TestSummaries(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{}, dualresp.Options{})
	tests := []struct {
		total, sample string
		want          string
	}{
		// A whole answer's one line has no link; a partial one's does.
		{"0", "15", "No rows match. There is no sample."},
		{"1", "15", "1 row matches. It is below."},
		{"3", "15", "3 rows match. All are below."},
		{"40", "1", "40 rows match. 1 sample row follows. Download: "},
	}
	for _, tt := range tests {
		var size int
		fmt.Sscan(tt.sample, &size)
		resp := create(t, srv, dualresp.Spec{SampleSize: size, Query: dualresp.Query{Kind: "gen", Params: map[string]string{"total": tt.total}}})
		want := tt.want
		if strings.HasSuffix(want, ": ") {
			want += resp.URL() + "/export?format=csv (or format=ndjson, json, parquet)."
		}
		if got := resp.Summary(); got != want {
			t.Errorf("Summary() for %s rows = %q; want %q", tt.total, got, want)
		}
		if tr := resp.StructuredContent().Metadata.Truncated; tr != (tt.total == "40") {
			t.Errorf("truncated for %s rows = %v", tt.total, tr)
		}
	}
}

func TestPinnedStructuredContentHasNullExpiry(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{Total: 1}, dualresp.Options{})
	resp := create(t, srv, dualresp.Spec{Expiration: -1})
	meta := jsonValue(t, resp.StructuredContent()).(map[string]any)["metadata"].(map[string]any)
	if v, ok := meta["expires_at"]; !ok || v != nil {
		t.Errorf("metadata.expires_at = %v (present %v); want null", v, ok)
	}
}

func TestByteBudgetKeepsSmallSamplesWhole(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{Total: 1000}, dualresp.Options{})
	resp := create(t, srv, dualresp.Spec{})
	meta := resp.StructuredContent().Metadata
	if meta.SampleCount != 15 || meta.SampleReduced || meta.ValuesTruncated {
		t.Errorf("small rows: sample_count %v, sample_reduced %v, values_truncated %v; want 15, false, false",
			meta.SampleCount, meta.SampleReduced, meta.ValuesTruncated)
	}
}

func TestByteBudgetCutsLongValuesBeforeDroppingRows(t *testing.T) {
	t.Parallel()
	var rows []json.RawMessage
	for i := range 15 {
		rows = append(rows, json.RawMessage(fmt.Sprintf(`{"i":%d,"text":%q}`, i, strings.Repeat("word ", 2000))))
	}
	srv, _ := newServer(t, &rowsExecutor{rows: rows}, dualresp.Options{})
	resp := create(t, srv, dualresp.Spec{Columns: []dualresp.Column{{Name: "i"}, {Name: "text"}}})
	sc := resp.StructuredContent()
	meta := sc.Metadata
	b, _ := json.Marshal(sc)
	t.Logf("15 rows of 10,000-character text: %d bytes, sample_count %v", len(b), meta.SampleCount)
	if !meta.ValuesTruncated {
		t.Errorf("values_truncated = %v; want true", meta.ValuesTruncated)
	}
	if n := meta.SampleCount; n < 5 {
		t.Errorf("sample_count = %d; want at least 5 (values cut before rows dropped)", n)
	}
	if !strings.Contains(sc.Summary, "Long values are cut") {
		t.Errorf("summary %q does not say values were cut", sc.Summary)
	}
}

// A whole answer may use the larger WholeByteBudget: ten wide rows that
// are the whole result are all given, while the same ten rows as a sample
// of eleven are cut down to the ByteBudget.
func TestWholeAnswerBudget(t *testing.T) {
	t.Parallel()
	var rows []json.RawMessage
	for i := range 11 {
		rows = append(rows, json.RawMessage(fmt.Sprintf(`{"i":%d,"text":%q}`, i, strings.Repeat("x", 800))))
	}
	for _, tt := range []struct {
		name      string
		rows      []json.RawMessage
		wantWhole bool
	}{
		{"whole", rows[:10], true},
		{"sample of a larger result", rows, false},
	} {
		srv, _ := newServer(t, &rowsExecutor{rows: tt.rows}, dualresp.Options{})
		resp := create(t, srv, dualresp.Spec{SampleSize: 10, Columns: []dualresp.Column{{Name: "i"}, {Name: "text"}}})
		got := resp.StructuredContent().Metadata.SampleCount
		n := resp.ModelBytes()
		t.Logf("%s: %d rows given, %d bytes", tt.name, got, n)
		switch {
		case tt.wantWhole && (got != 10 || n <= dualresp.DefaultByteBudget || n > dualresp.DefaultWholeByteBudget):
			t.Errorf("%s: %d rows in %d bytes; want all 10, over the ByteBudget %d and within the WholeByteBudget %d", tt.name, got, n, dualresp.DefaultByteBudget, dualresp.DefaultWholeByteBudget)
		case !tt.wantWhole && (got >= 10 || n > dualresp.DefaultByteBudget):
			t.Errorf("%s: %d rows in %d bytes; want fewer than 10 within the ByteBudget %d", tt.name, got, n, dualresp.DefaultByteBudget)
		}
	}
}
