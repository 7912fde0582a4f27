package dualresp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// TestExpiredNamesTheQuery: an expired result's link answers 404 "expired"
// with the query to run again, and with Options.KeepExpired it still does
// after a Cleanup, until KeepExpired has passed ("not_found" then).
func TestExpiredNamesTheQuery(t *testing.T) {
	t.Parallel()
	srv, clock, ts := startServer(t, &genExecutor{Total: 5}, dualresp.Options{KeepExpired: 24 * time.Hour}, nil)
	resp := create(t, srv, dualresp.Spec{Query: dualresp.Query{Kind: "gen", Text: "SELECT everything", Params: map[string]string{"dataset_id": "abcd-1234"}}})
	get := func() (int, map[string]string) {
		t.Helper()
		r, err := http.Get(ts.URL + "/resources/" + resp.ID())
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		var body map[string]string
		_ = json.Unmarshal(b, &body)
		return r.StatusCode, body
	}
	clock.Advance(16 * time.Minute)
	if _, err := srv.Cleanup(t.Context()); err != nil {
		t.Fatal(err)
	}
	status, body := get()
	if status != http.StatusNotFound || body["error"] != "expired" ||
		!strings.Contains(body["message"], "dataset_id=abcd-1234") || !strings.Contains(body["message"], "SELECT everything") {
		t.Errorf("GET an expired result after Cleanup = %d %v; want 404 expired naming the query (dataset_id=abcd-1234: SELECT everything)", status, body)
	}
	clock.Advance(25 * time.Hour)
	if _, err := srv.Cleanup(t.Context()); err != nil {
		t.Fatal(err)
	}
	if status, body := get(); status != http.StatusNotFound || body["error"] != "not_found" {
		t.Errorf("GET an expired result past KeepExpired = %d %v; want 404 not_found", status, body)
	}
}
