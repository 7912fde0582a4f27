package socrata_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// soda3Fake starts a fake portal with one generated dataset of n rows.
func soda3Fake(t *testing.T, n int) *socratatest.Server {
	t.Helper()
	srv := socratatest.NewServer(t)
	schema := socratatest.Schema{ID: "sod3-0002", Name: "Generated", Columns: []socrata.Column{
		{FieldName: "n", DataType: "number"},
		{FieldName: "kind", DataType: "text"},
	}}
	kinds := []string{"alpha", "beta", "gamma", "delta"}
	if err := srv.AddGenerated(t.Context(), schema, n, func(i int) map[string]any {
		return map[string]any{"n": (i * 7919) % n, "kind": kinds[i%len(kinds)]}
	}); err != nil {
		t.Fatal(err)
	}
	return srv
}

// longSoQL returns a query of about size bytes: a WHERE n IN (…) list of
// every third number.
func longSoQL(size int) string {
	var b strings.Builder
	b.WriteString("SELECT n, kind WHERE n IN (")
	for i := 0; b.Len() < size; i += 3 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, i)
	}
	b.WriteString(") ORDER BY n DESC, :id LIMIT 5000")
	return b.String()
}

// TestSODA3Fake runs the same queries through SODA3 (a client with a token)
// and SODA 2.1 (one without) against the fake portal: identical rows and
// columns, and the request log shows which API each used.
func TestSODA3Fake(t *testing.T) {
	t.Parallel()
	srv := soda3Fake(t, 5000)
	const tok = "tok-fake-3"
	v3 := srv.SocrataClient(socrata.Options{AppToken: tok})
	v2 := srv.SocrataClient(socrata.Options{})
	long := longSoQL(10_000)
	if len(long) < 10_000 {
		t.Fatalf("the long query has %d bytes; want at least 10,000", len(long))
	}
	queries := []string{
		"SELECT n, kind ORDER BY :id LIMIT 10 OFFSET 4990",
		"SELECT kind, count(*) AS c GROUP BY kind ORDER BY kind",
		"SELECT n WHERE kind = 'beta' |> SELECT count(*)",
		"SELECT n ORDER BY n",
		long,
	}
	for _, q := range queries {
		before := map[string]int{"query": srv.RequestCount("query"), "resource": srv.RequestCount("resource")}
		got, err := v3.Query(t.Context(), "sod3-0002", q)
		if err != nil {
			t.Fatalf("SODA3 %.60q: %v", q, err)
		}
		want, err := v2.Query(t.Context(), "sod3-0002", q)
		if err != nil {
			t.Fatalf("SODA 2.1 %.60q: %v", q, err)
		}
		if len(want.Rows) == 0 {
			t.Fatalf("%.60q returned no rows; the comparison would prove nothing", q)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%.60q: SODA3 result differs from SODA 2.1's (-2.1 +3):\n%s", q, diff)
		}
		if dq, dr := srv.RequestCount("query")-before["query"], srv.RequestCount("resource")-before["resource"]; dq != 1 || dr != 1 {
			t.Errorf("%.60q: %d SODA3 and %d SODA 2.1 requests; want 1 and 1", q, dq, dr)
		}
	}
	var sawV3, sawV2 bool
	for _, r := range srv.Requests() {
		switch r.Endpoint {
		case localportal.EndpointQuery:
			sawV3 = true
			if r.Method != http.MethodPost || !r.AppTokenSent || strings.Contains(r.Path+r.Query.Encode(), tok) {
				t.Errorf("SODA3 request %s %s (token sent %v); want a POST with the token in X-App-Token only", r.Method, r.Path, r.AppTokenSent)
			}
		case localportal.EndpointResource:
			sawV2 = true
			if r.Method != http.MethodGet || r.AppTokenSent {
				t.Errorf("SODA 2.1 request %s %s (token sent %v); want a GET without a token", r.Method, r.Path, r.AppTokenSent)
			}
		}
	}
	if !sawV3 || !sawV2 {
		t.Errorf("request log: SODA3 seen %v, SODA 2.1 seen %v; want both", sawV3, sawV2)
	}
}

// TestSODA3FakeOff checks the fallback against a fake portal without SODA3:
// the first query makes one SODA3 attempt and then uses SODA 2.1, later
// ones go straight to SODA 2.1.
func TestSODA3FakeOff(t *testing.T) {
	t.Parallel()
	srv := soda3Fake(t, 100)
	if err := srv.SetSODA3(false); err != nil {
		t.Fatal(err)
	}
	c := srv.SocrataClient(socrata.Options{AppToken: "tok"})
	for i, want := range []struct{ query, resource int }{{1, 1}, {1, 2}, {1, 3}} {
		res, err := c.Query(t.Context(), "sod3-0002", "SELECT n ORDER BY :id LIMIT 50")
		if err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		if len(res.Rows) != 50 {
			t.Errorf("query %d: %d rows; want 50", i, len(res.Rows))
		}
		if q, r := srv.RequestCount("query"), srv.RequestCount("resource"); q != want.query || r != want.resource {
			t.Errorf("after query %d: %d SODA3 and %d SODA 2.1 requests; want %d and %d", i, q, r, want.query, want.resource)
		}
	}
	if c.UsesSODA3() {
		t.Error("UsesSODA3() = true after the portal showed it has no SODA3")
	}
}

// TestSODA3FakeErrors checks errors that come through SODA3 from the fake:
// a wrong token, a missing dataset, a bad column.
func TestSODA3FakeErrors(t *testing.T) {
	t.Parallel()
	srv := soda3Fake(t, 10)
	tests := []struct {
		name     string
		token    string
		require  string
		id, soql string
		check    func(err error) string // "" when err is as wanted
	}{
		{"wrong token", "wrong", "right", "sod3-0002", "SELECT n", func(err error) string {
			var api *socrata.APIError
			if !errors.As(err, &api) || api.StatusCode != http.StatusForbidden || api.Endpoint != "query" {
				return "want a 403 *APIError from the query API"
			}
			return ""
		}},
		{"missing dataset", "tok", "", "zzzz-zzzz", "SELECT n", func(err error) string {
			if !errors.Is(err, socrata.ErrNotFound) {
				return "want ErrNotFound"
			}
			return ""
		}},
		{"no such column", "tok", "", "sod3-0002", "SELECT nope", func(err error) string {
			var api *socrata.APIError
			if !errors.As(err, &api) || api.Code != "query.soql.no-such-column" || api.Endpoint != "query" {
				return "want query.soql.no-such-column from the query API"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Not parallel: RequireAppToken is server-wide.
			srv.RequireAppToken(tt.require)
			defer srv.RequireAppToken("")
			c := srv.SocrataClient(socrata.Options{AppToken: tt.token, MaxRetries: -1})
			_, err := c.Query(t.Context(), tt.id, tt.soql)
			if err == nil {
				t.Fatal("got no error")
			}
			if msg := tt.check(err); msg != "" {
				t.Errorf("err = %v; %s", err, msg)
			}
		})
	}
}
