package dualresp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// TestCSVExportNeutralisesFormulas: a format=csv export prefixes text
// cells (and column names) that a spreadsheet would run as a formula with
// "'", never numbers, nor text that only looks like a number; formulas=keep
// exports them byte for byte; the other formats are untouched. The failure this guards against:
// cells starting with =, +, -, @ went out as they were.
func TestCSVExportNeutralisesFormulas(t *testing.T) {
	t.Parallel()
	rows := []json.RawMessage{
		json.RawMessage(`{"=cmd":"=HYPERLINK(\"http://x\")","b":"+1 555 0100","c":"-122.41","d":-5,"e":"@SUM(A1)","f":"\tx","g":"plain","h":"-"}`),
	}
	srv, _ := newServer(t, &rowsExecutor{rows}, dualresp.Options{})
	var cols []dualresp.Column
	for _, c := range []string{"=cmd", "b", "c", "d", "e", "f", "g", "h"} {
		cols = append(cols, dualresp.Column{Name: c})
	}
	resp := create(t, srv, dualresp.Spec{Columns: cols})
	export := func(query string) (int, string) {
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/resources/"+resp.ID()+"/export?"+query, nil))
		return w.Code, w.Body.String()
	}
	want := "'=cmd,b,c,d,e,f,g,h\n\"'=HYPERLINK(\"\"http://x\"\")\",'+1 555 0100,-122.41,-5,'@SUM(A1),'\tx,plain,'-\n"
	if code, body := export("format=csv"); code != http.StatusOK || body != want {
		t.Errorf("format=csv: %d\n%q\nwant\n%q", code, body, want)
	}
	raw := "=cmd,b,c,d,e,f,g,h\n\"=HYPERLINK(\"\"http://x\"\")\",+1 555 0100,-122.41,-5,@SUM(A1),\"\tx\",plain,-\n"
	if code, body := export("format=csv&formulas=keep"); code != http.StatusOK || body != raw {
		t.Errorf("format=csv&formulas=keep: %d\n%q\nwant\n%q", code, body, raw)
	}
	if code, body := export("format=ndjson"); code != http.StatusOK || !strings.Contains(body, `"=HYPERLINK`) || strings.Contains(body, `'=`) {
		t.Errorf("format=ndjson: %d %s; want the row as it is", code, body)
	}
	if code, body := export("format=csv&formulas=no"); code != http.StatusBadRequest || !strings.Contains(body, "keep") {
		t.Errorf("formulas=no: %d %s; want 400 naming keep", code, body)
	}
}
