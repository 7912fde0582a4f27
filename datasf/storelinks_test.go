package datasf

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestStoreGate: a stdio instance's REST API serves a result at its keyed
// link (/k/KEY/resources/ID…, passed on without /k/KEY) or to a request
// carrying the store's secret; everything else, whatever the method, gets
// the same 404 as an id that does not exist.
func TestStoreGate(t *testing.T) {
	t.Parallel()
	const secret, id, other = "s3cret-of-the-user", "6ee3143c8b46de1d87552e27231b18b9", "0123456789abcdef0123456789abcdef"
	key := LinkKey(secret, id)
	var seen string
	gate := storeGate{secret: secret, rest: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Method + " " + r.URL.Path
		io.WriteString(w, "rows")
	})}
	rec := httptest.NewRecorder()
	notFound(rec)
	want404 := rec.Body.String()
	for _, tc := range []struct {
		name, method, path, secret string
		served                     string // what the REST API saw; "" for a 404
	}{
		{"the link", "GET", "/k/" + key + "/resources/" + id, "", "GET /resources/" + id},
		{"the link's export", "GET", "/k/" + key + "/resources/" + id + "/export", "", "GET /resources/" + id + "/export"},
		{"the link's pin", "PUT", "/k/" + key + "/resources/" + id, "", "PUT /resources/" + id},
		{"a wrong key", "GET", "/k/" + strings.Repeat("ab", 8) + "/resources/" + id, "", ""},
		{"the key in capitals", "GET", "/k/" + strings.ToUpper(key) + "/resources/" + id, "", ""},
		{"the key of another id", "GET", "/k/" + key + "/resources/" + other, "", ""},
		{"the key alone", "GET", "/k/" + key, "", ""},
		{"no id", "GET", "/k/" + key + "/resources/", "", ""},
		{"no key", "GET", "/resources/" + id, "", ""},
		{"no key, DELETE", "DELETE", "/resources/" + id, "", ""},
		{"a wrong secret", "GET", "/resources/" + id, "not-the-secret", ""},
		{"the secret", "GET", "/resources/" + id, secret, "GET /resources/" + id},
		{"the secret, DELETE", "DELETE", "/resources/" + other, secret, "DELETE /resources/" + other},
	} {
		seen = ""
		req := httptest.NewRequest(tc.method, tc.path, nil)
		if tc.secret != "" {
			req.Header.Set(StoreSecretHeader, tc.secret)
		}
		rec := httptest.NewRecorder()
		gate.ServeHTTP(rec, req)
		switch {
		case tc.served != "" && (rec.Code != http.StatusOK || seen != tc.served):
			t.Errorf("%s: %s %s = %d, the REST API saw %q; want it served as %q", tc.name, tc.method, tc.path, rec.Code, seen, tc.served)
		case tc.served == "" && (rec.Code != http.StatusNotFound || rec.Body.String() != want404 || seen != ""):
			t.Errorf("%s: %s %s = %d %q, the REST API saw %q; want the 404 of an unknown id, unseen", tc.name, tc.method, tc.path, rec.Code, rec.Body.String(), seen)
		}
	}
}
