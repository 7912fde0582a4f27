package dualresp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// TestPageAnswerIsThePageType ties the REST handler's page writer (which
// splices rows in without re-encoding them) to the exported Page type: the
// answer decodes into a Page with no unknown field, and encoding that Page
// gives the answer back byte for byte.
func TestPageAnswerIsThePageType(t *testing.T) {
	t.Parallel()
	srv, _, _ := startServer(t, &genExecutor{Total: 30}, dualresp.Options{MaxPageSize: 20}, nil)
	resp := create(t, srv, dualresp.Spec{})
	for _, query := range []string{
		"?offset=0&limit=5",   // has_next
		"?offset=25&limit=10", // the end
		"?offset=3&limit=50",  // capped
		"?offset=40",          // past the end
	} {
		t.Run(query, func(t *testing.T) {
			res, err := http.Get(resp.URL() + query)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("GET %s: HTTP %d: %s", query, res.StatusCode, body)
			}
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			var p dualresp.Page
			if err := dec.Decode(&p); err != nil {
				t.Fatalf("GET %s: the answer is not a Page: %v\n%s", query, err, body)
			}
			again, err := json.Marshal(&p)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(bytes.TrimSuffix(body, []byte("\n"))), string(again); got != want {
				t.Errorf("GET %s: answer and json.Marshal(Page) differ:\nanswer: %s\nPage:   %s", query, got, want)
			}
			if int64(len(p.Data)) != p.ReturnedCount || (p.NextOffset != nil) != p.HasNext {
				t.Errorf("GET %s: inconsistent page %+v", query, p)
			}
		})
	}
}

func TestResourceID(t *testing.T) {
	t.Parallel()
	const id = "0123456789abcdef0123456789abcdef"
	tests := []struct {
		ref, want string // want "" means an error
	}{
		{id, id},
		{strings.ToUpper(id), id},
		{"  " + id + "\n", id},
		{"resource://" + id, id},
		{"resource://" + id + "/", id},
		{"resource://xyz", "xyz"},
		{"http://127.0.0.1:8765/resources/" + id, id},
		{"https://h.example/base/resources/" + id + "?offset=0&limit=10", id},
		{"http://h/resources/" + id + "/export?format=csv", id},
		{"http://h/resources/" + id + "/", id},
		{"http://other.example/results/xyz", "xyz"},
		{"rqzj-sfat", ""},
		{"", ""},
		{"resource://", ""},
		{"resource://abc/def", ""},
		{"http://h/resources/", ""},
		{"http://h/resources/../x", ""},
		{"file:///etc/passwd", ""},
		{"http://h/%zz", ""},
	}
	for _, tt := range tests {
		got, err := dualresp.ResourceID(tt.ref)
		if tt.want == "" {
			if err == nil {
				t.Errorf("ResourceID(%q) = %q; want an error", tt.ref, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ResourceID(%q) = %q, %v; want %q", tt.ref, got, err, tt.want)
		}
	}
}

// TestStructuredRoundTrip checks that caller metadata and dualresp's own
// fields share one object, and that reading it back keeps both.
func TestStructuredRoundTrip(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{Total: 5}, dualresp.Options{})
	resp := create(t, srv, dualresp.Spec{Metadata: map[string]any{"dataset_id": "abcd-1234", "total_count": "caller's"}})
	b, err := json.Marshal(resp.StructuredContent())
	if err != nil {
		t.Fatal(err)
	}
	var back dualresp.Structured
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Metadata.TotalCount != 5 || back.Metadata.Extra["dataset_id"] != "abcd-1234" || len(back.Results) != 5 {
		t.Errorf("read back: total %d, extra %v, %d results", back.Metadata.TotalCount, back.Metadata.Extra, len(back.Results))
	}
	// The columns go over the wire as their names.
	var names []dualresp.Column
	for _, c := range genColumns {
		names = append(names, dualresp.Column{Name: c.Name})
	}
	if diff := cmp.Diff(names, back.Metadata.Columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
}

func TestRowColumns(t *testing.T) {
	t.Parallel()
	rows := []json.RawMessage{
		json.RawMessage(`{"a":"x","b":1,"c":null}`),
		json.RawMessage(`[1,2]`),
		json.RawMessage(`{"c":true,"d":{"e":1},"a":"y"}`),
	}
	for _, tc := range []struct {
		max  int
		want string
	}{
		{0, "[{a text} {b number} {c } {d json}]"},
		{2, "[{a text} {b number}]"},
	} {
		var got []string
		for _, c := range dualresp.RowColumns(rows, tc.max) {
			got = append(got, "{"+c.Name+" "+c.Type+"}")
		}
		if s := "[" + strings.Join(got, " ") + "]"; s != tc.want {
			t.Errorf("RowColumns(rows, %d) = %s; want %s", tc.max, s, tc.want)
		}
	}
}
