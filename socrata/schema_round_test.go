package socrata_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Schema asks for the Views document and the row count at once, in one
// round trip: this portal answers neither until both have arrived, so a
// client that asks one after the other gets a refusal instead.
func TestSchemaIsOneRound(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		arrived int
		both    = make(chan struct{})
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if arrived++; arrived == 2 {
			close(both)
		}
		mu.Unlock()
		select {
		case <-both:
		case <-time.After(5 * time.Second): // bounded: a sequential client fails
			http.Error(w, `{"message":"the other request never came"}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(r.URL.Path, "/api/views/") {
			_, _ = w.Write([]byte(`{"name":"Both","columns":[{"name":"A","fieldName":"a","dataTypeName":"text","position":1}]}`))
			return
		}
		w.Header().Set("X-SODA2-Fields", `["count"]`)
		w.Header().Set("X-SODA2-Types", `["number"]`)
		_, _ = w.Write([]byte(`[{"count":"42"}]`))
	}))
	t.Cleanup(srv.Close)
	c := socrata.NewClient(socrata.Options{BaseURL: srv.URL, MaxRetries: -1})
	s, err := c.Schema(t.Context(), "abcd-1234")
	if err != nil {
		t.Fatalf("Schema = %v; want the schema from one round of two requests", err)
	}
	if s.RowCount != 42 || len(s.Columns) != 1 || s.Name != "Both" {
		t.Errorf("Schema = %+v; want Both, 1 column, 42 rows", s)
	}
}
