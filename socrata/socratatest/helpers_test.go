package socratatest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// serve answers a GET of path with srv's handler, the one Start serves:
// the fault controls and the request log apply.
func serve(t *testing.T, srv *Server, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil))
	return rec
}
