package reliability

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// The bad-input catalogue: malformed inputs across the tools and the REST
// API. Each gets a clear error naming what was wrong; nothing panics; the
// stored state does not change.
func TestBadInputCatalogue(t *testing.T) {
	t.Parallel()
	st := newStack(t, stackOptions{maxRetries: -1, generated: 50})
	res, raw := st.call(t, "query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT n, label"})
	if res.IsError {
		t.Fatalf("canary query: %s", raw)
	}
	canaryURL := res.StructuredContent.(map[string]any)["resource"].(map[string]any)["url"].(string)
	canaryID := canaryURL[strings.LastIndex(canaryURL, "/")+1:]
	expiredID := "0123456789abcdef0123456789abcdef"
	snapshot := func() (int, *dualresp.Record) {
		rec, err := st.store.Get(t.Context(), canaryID)
		if err != nil {
			t.Fatal(err)
		}
		return st.store.Len(), rec
	}
	n0, rec0 := snapshot()

	long := func(n int) string { return strings.Repeat("a", n) }
	tools := []struct {
		tool string
		args any
		want string // the error must mention this
	}{
		{"search_datasf", map[string]any{}, "query"},
		{"search_datasf", map[string]any{"query": ""}, "query"},
		{"search_datasf", map[string]any{"query": "   "}, "query"},
		{"search_datasf", map[string]any{"query": long(501)}, "query"},
		{"search_datasf", map[string]any{"query": "ok", "limit": 0.5}, "limit"},
		{"search_datasf", map[string]any{"query": "ok", "limit": 21}, "limit"},
		{"search_datasf", map[string]any{"query": "ok", "limit": -1}, "limit"},
		{"search_datasf", map[string]any{"query": "ok", "limit": 1e12}, "limit"},
		{"search_datasf", map[string]any{"query": "ok", "limit": "5"}, "limit"},
		{"search_datasf", map[string]any{"query": 42}, "query"},
		{"search_datasf", map[string]any{"query": []any{"a"}}, "query"},
		{"search_datasf", map[string]any{"query": "ok", "extra": true}, "extra"},
		{"search_datasf", map[string]any{"query": "bell\x07"}, "control"},
		{"search_datasf", map[string]any{"query": "ok\x00"}, "control"},
		{"search_datasf", map[string]any{"query": "ok", "format": "xml"}, "format"},
		{"list_datasf", map[string]any{"limit": 101}, "limit"},
		{"list_datasf", map[string]any{"limit": -5}, "limit"},
		{"list_datasf", map[string]any{"category": long(201)}, "category"},
		{"list_datasf", map[string]any{"category": 7}, "category"},
		{"list_datasf", map[string]any{"categories": "x"}, "categories"},
		{"get_schema", map[string]any{}, "dataset_id"},
		{"get_schema", map[string]any{"dataset_id": ""}, "dataset_id"},
		{"get_schema", map[string]any{"dataset_id": "ABCD_1234"}, "dataset_id"}, // upper case alone is read as the id
		{"get_schema", map[string]any{"dataset_id": "abcd1234"}, "dataset_id"},
		{"get_schema", map[string]any{"dataset_id": "abc-12345"}, "dataset_id"},
		{"get_schema", map[string]any{"dataset_id": "abcd-1234-x"}, "dataset_id"},
		{"get_schema", map[string]any{"dataset_id": "abcd-123é"}, "dataset_id"},
		{"get_schema", map[string]any{"dataset_id": "../../etc"}, "dataset_id"},
		{"get_schema", map[string]any{"dataset_id": 1234}, "dataset_id"},
		{"get_schema", map[string]any{"dataset_id": "zzzz-9999"}, "zzzz-9999"},
		{"query_datasf", map[string]any{"dataset_id": st.gen}, "soql"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": ""}, "soql"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": long(4001)}, "soql"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT n\x01"}, "control"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT \xff\xfe"}, "soql"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT WHERE FROM"}, "column 14"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT n WHERE label = 'unterminated"}, "soql"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT n LIMIT -5"}, "soql"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "DROP TABLE x"}, "soql"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT n; DELETE"}, "soql"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT zzzzzzzz", "auto_correct": false}, "zzzzzzzz"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT n", "sample_size": 0.5}, "sample_size"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT n", "sample_size": 101}, "sample_size"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT n", "sample_size": -1}, "sample_size"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT n", "auto_correct": "yes"}, "auto_correct"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT n", "limit": 5}, "limit"},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": 5}, "soql"},
		{"query_datasf", map[string]any{"dataset_id": "nope", "soql": "SELECT n"}, "dataset_id"},
	}
	for _, tt := range tools {
		res, raw := st.call(t, tt.tool, tt.args)
		if !res.IsError {
			t.Errorf("%s(%.80v) succeeded; want an error naming %q", tt.tool, tt.args, tt.want)
			continue
		}
		e := errorOf(t, res)
		if !strings.Contains(strings.ToLower(e.Error), strings.ToLower(tt.want)) {
			t.Errorf("%s(%.80v): error %q does not name %q", tt.tool, tt.args, e.Error, tt.want)
		}
		_ = raw
	}

	rest := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/resources/" + canaryID + "?offset=-1", "", 400, "offset"},
		{"GET", "/resources/" + canaryID + "?offset=abc", "", 400, "offset"},
		{"GET", "/resources/" + canaryID + "?skip=1e3", "", 400, "skip"},
		{"GET", "/resources/" + canaryID + "?limit=-10", "", 400, "limit"},
		{"GET", "/resources/" + canaryID + "?limit=0", "", 400, "limit"},
		{"GET", "/resources/" + canaryID + "?limit=99999999999999999999", "", 400, "limit"},
		{"GET", "/resources/" + canaryID + "?offset=1&offset=2", "", 400, "offset"},
		{"POST", "/resources/" + canaryID, `{"offset":-1}`, 400, "offset"},
		{"POST", "/resources/" + canaryID, `{"offset":"10"}`, 400, "offset"},
		{"POST", "/resources/" + canaryID, `{"limit":true}`, 400, "limit"},
		{"POST", "/resources/" + canaryID, `{"sort":{"field":"n; DROP TABLE x","order":"asc"}}`, 400, "sort"},
		{"POST", "/resources/" + canaryID, `{"sort":{"field":"n) OR (1=1","order":"asc"}}`, 400, "sort"},
		{"POST", "/resources/" + canaryID, `{"sort":{"field":"n","order":"sideways"}}`, 400, "order"},
		{"POST", "/resources/" + canaryID, `{"sort":{"field":":id"}}`, 400, "sort"},
		{"POST", "/resources/" + canaryID, `{"unknown":1}`, 400, "unknown"},
		{"POST", "/resources/" + canaryID, `{"offset":0`, 400, "json"},
		{"POST", "/resources/" + canaryID, `[]`, 400, ""},
		{"POST", "/resources/" + canaryID, `{"offset":0}{"offset":1}`, 400, ""},
		{"POST", "/resources/" + canaryID, `{"sort":"` + long(70_000) + `"}`, 400, ""},
		{"GET", "/resources/" + canaryID + "/export?format=xml", "", 400, "format"},
		{"GET", "/resources/" + canaryID + "/export?format=csv&sort=x", "", 400, "sort"},
		{"GET", "/resources/ffffffffffffffffffffffffffffffff", "", 404, "not_found"},
		{"GET", "/resources/" + expiredID, "", 404, "not_found"},
		{"GET", "/resources/not-a-valid-id", "", 404, "not_found"},
		{"GET", "/resources/%00", "", 404, ""},
		{"GET", "/resources/" + strings.ToUpper(canaryID), "", 404, "not_found"},
		{"PATCH", "/resources/" + canaryID, "{}", 405, "not allowed"},
		{"DELETE", "/resources/ffffffffffffffffffffffffffffffff", "", 404, "not_found"},
		{"PUT", "/resources/ffffffffffffffffffffffffffffffff", "", 404, "not_found"},
	}
	for _, tt := range rest {
		req, err := http.NewRequestWithContext(t.Context(), tt.method, st.restURL+tt.path, bytes.NewReader([]byte(tt.body)))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s %.90s %.60s = %d %s; want %d", tt.method, tt.path, tt.body, resp.StatusCode, b, tt.status)
			continue
		}
		if !strings.Contains(strings.ToLower(string(b)), strings.ToLower(tt.want)) {
			t.Errorf("%s %.90s %.60s: answer %s does not name %q", tt.method, tt.path, tt.body, b, tt.want)
		}
	}

	// Resource URIs that are not ours.
	for _, uri := range []string{"resource://", "resource://../x", "http://example.com/x", "resource://" + expiredID, "resource://" + canaryID + "/x"} {
		if _, err := st.readResource(t, uri); err == nil {
			t.Errorf("resources/read %q succeeded; want an error", uri)
		}
	}

	n1, rec1 := snapshot()
	if n1 != n0 {
		t.Errorf("stored results %d -> %d; bad input must not create or remove any", n0, n1)
	}
	if diff := cmp.Diff(rec0, rec1, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("the canary result changed under bad input (-before +after):\n%s", diff)
	}
	t.Logf("bad-input catalogue: %d tool inputs, %d REST requests, 5 resource URIs: all rejected with an error naming the problem; stored state unchanged",
		len(tools), len(rest))
}
