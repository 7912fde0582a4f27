package dualresp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

func TestBearerAuthBindsResourcesToTheirOwner(t *testing.T) {
	t.Parallel()
	const tokA, tokB = "token-of-alice-123", "token-of-bob-456"
	srv, _, ts := startServer(t, &genExecutor{Total: 50}, dualresp.Options{
		Authenticate: dualresp.BearerTokens(tokA, tokB),
	}, nil)
	ctx := dualresp.WithOwner(t.Context(), dualresp.TokenOwner(tokA))
	resp, err := srv.CreateResponse(ctx, dualresp.Spec{Query: dualresp.Query{Kind: "gen"}, Columns: genColumns})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Record().Owner; got != dualresp.TokenOwner(tokA) || strings.Contains(got, tokA) {
		t.Fatalf("record owner = %q; want the hashed identity of A (never the token)", got)
	}
	tests := []struct {
		name, method, auth, path string
		want                     int
	}{
		{"owner reads metadata", "GET", "Bearer " + tokA, "", http.StatusOK},
		{"owner reads a page", "GET", "Bearer " + tokA, "?offset=0&limit=10", http.StatusOK},
		{"owner exports", "GET", "Bearer " + tokA, "/export?format=ndjson", http.StatusOK},
		{"other caller gets 404", "GET", "Bearer " + tokB, "", http.StatusNotFound},
		{"other caller cannot page", "GET", "Bearer " + tokB, "?offset=0&limit=10", http.StatusNotFound},
		{"other caller cannot export", "GET", "Bearer " + tokB, "/export?format=csv", http.StatusNotFound},
		{"other caller cannot pin", "PUT", "Bearer " + tokB, "", http.StatusNotFound},
		{"other caller cannot delete", "DELETE", "Bearer " + tokB, "", http.StatusNotFound},
		{"no token", "GET", "", "", http.StatusUnauthorized},
		{"wrong token", "GET", "Bearer nope", "", http.StatusUnauthorized},
		{"wrong scheme", "GET", "Basic " + tokA, "", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		req, _ := http.NewRequestWithContext(t.Context(), tt.method, ts.URL+"/resources/"+resp.ID()+tt.path, nil)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.want {
			t.Errorf("%s: %s %s = %d; want %d", tt.name, tt.method, tt.path, res.StatusCode, tt.want)
		}
	}
	// Nothing the other caller did changed the record.
	rec, err := srv.Resource(t.Context(), resp.ID())
	if err != nil || rec.Pinned {
		t.Errorf("after B's attempts: record %+v, err %v; want it unpinned and present", rec, err)
	}
}

func TestCORSIsOffByDefaultAndFollowsTheAllowList(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		origins []string
		origin  string
		allowed bool
	}{
		{"default off", nil, "https://app.example", false},
		{"listed origin", []string{"https://app.example"}, "https://app.example", true},
		{"unlisted origin", []string{"https://app.example"}, "https://evil.example", false},
	} {
		srv, _, ts := startServer(t, &genExecutor{Total: 5}, dualresp.Options{CORSOrigins: tt.origins}, nil)
		resp := create(t, srv, dualresp.Spec{})
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodOptions, ts.URL+"/resources/"+resp.ID(), nil)
		req.Header.Set("Origin", tt.origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		got := res.Header.Get("Access-Control-Allow-Origin")
		if (got == tt.origin) != tt.allowed {
			t.Errorf("%s: preflight from %s: Access-Control-Allow-Origin %q; allowed = %v", tt.name, tt.origin, got, tt.allowed)
		}
		if tt.allowed && res.StatusCode != http.StatusNoContent {
			t.Errorf("%s: preflight status %d; want 204", tt.name, res.StatusCode)
		}
	}
}
