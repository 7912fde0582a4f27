package schemacache

import (
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// TestInFrontOfClient: with a real socrata.Client over HTTP, a repeated
// Schema within the TTL sends no second request.
func TestInFrontOfClient(t *testing.T) {
	t.Parallel()
	view, err := os.ReadFile(fixtures.Path(t, "datasets", "yitu-d5am__film-locations__2015-08.view.json"))
	if err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/api/views/yitu-d5am.json", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Write(view)
	})
	mux.HandleFunc("/resource/yitu-d5am.json", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Write([]byte(`[{"count":"1241"}]`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	client := socrata.NewClient(socrata.Options{BaseURL: srv.URL, DiscoveryURL: srv.URL, HTTPClient: srv.Client()})
	c := New(client, Options{})

	s1, cached, err := c.Schema(t.Context(), "yitu-d5am")
	if err != nil || cached {
		t.Fatalf("first Schema: cached %v, %v", cached, err)
	}
	first := requests.Load()
	s2, cached, err := c.Schema(t.Context(), "yitu-d5am")
	if err != nil || !cached {
		t.Fatalf("second Schema: cached %v, %v", cached, err)
	}
	if got := requests.Load(); got != first || first != 2 {
		t.Errorf("requests = %d after the first call and %d after the second; want 2 and 2", first, got)
	}
	if s1.RowCount != 1241 || s2.RowCount != 1241 || len(s2.Columns) != 11 {
		t.Errorf("schema = %d rows, %d columns; want 1241 rows, 11 columns", s2.RowCount, len(s2.Columns))
	}
	t.Logf("repeat Schema within TTL: %d HTTP requests for the first call, %d for the second", first, requests.Load()-first)
}
