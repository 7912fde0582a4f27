package socrata

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Requests to the portal ask for gzip, and a gzip answer reads as the
// rows it holds: the portal's JSON is several times smaller on the wire.
func TestQueryAsksForGzip(t *testing.T) {
	t.Parallel()
	var asked string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.Header.Get("Accept-Encoding")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-SODA2-Fields", `["n"]`)
		w.Header().Set("X-SODA2-Types", `["number"]`)
		if !strings.Contains(asked, "gzip") {
			_, _ = io.WriteString(w, `[{"n":"1"},{"n":"2"}]`)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = io.WriteString(zw, `[{"n":"1"},{"n":"2"}]`)
		_ = zw.Close()
	})
	c, _, _ := newTestClient(t, h, Options{})
	s, err := c.QueryStream(t.Context(), "abcd-1234", "SELECT n")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var rows []string
	for {
		raw, err := s.NextRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("NextRaw: %v", err)
		}
		rows = append(rows, string(raw))
	}
	if !strings.Contains(asked, "gzip") {
		t.Errorf("Accept-Encoding %q; want gzip", asked)
	}
	if strings.Join(rows, ",") != `{"n":"1"},{"n":"2"}` {
		t.Errorf("rows %q; want the two rows of the gzip answer", rows)
	}
}
