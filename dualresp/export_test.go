package dualresp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// Rows pass through an export as the Executor gave them, except that an
// NDJSON export puts a row written over several lines on one; a row that is
// not a JSON object fails the export before anything is sent.
func TestExportRowShapes(t *testing.T) {
	t.Parallel()
	export := func(rows []string, format string) (int, string) {
		raw := make([]json.RawMessage, len(rows))
		for i, r := range rows {
			raw[i] = json.RawMessage(r)
		}
		srv, _ := newServer(t, &rowsExecutor{raw}, dualresp.Options{})
		resp := create(t, srv, dualresp.Spec{})
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/resources/"+resp.ID()+"/export?format="+format, nil))
		return w.Code, w.Body.String()
	}
	pretty := "{\n  \"i\" : 1,\n  \"name\" : \"a\\nb c\"\n}"
	if code, body := export([]string{`{"i":0}`, pretty}, "ndjson"); code != 200 || body != "{\"i\":0}\n{\"i\":1,\"name\":\"a\\nb c\"}\n" {
		t.Errorf("ndjson export of a multi-line row: %d %q", code, body)
	}
	if code, body := export([]string{`{"i":0}`, pretty}, "json"); code != 200 || body != "[\n{\"i\":0},\n"+pretty+"\n]\n" {
		t.Errorf("json export of a multi-line row: %d %q", code, body)
	}
	for _, bad := range []string{`[1,2]`, `"text"`, ``, `{"i":1`} {
		code, body := export([]string{bad}, "ndjson")
		if code != http.StatusBadGateway || !strings.Contains(body, "not a JSON object") {
			t.Errorf("ndjson export of row %q: %d %s; want 502 naming the row as not a JSON object", bad, code, body)
		}
	}
	if code, body := export([]string{"{\"i\":\n tru e}"}, "ndjson"); code != http.StatusBadGateway || !strings.Contains(body, "not valid JSON") {
		t.Errorf("ndjson export of a broken multi-line row: %d %s; want 502 not valid JSON", code, body)
	}
}
