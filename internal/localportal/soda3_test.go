package localportal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// soda3Portal returns a started portal with one generated dataset of n
// rows: n, kind (alpha/beta/gamma), inserted out of n order.
func soda3Portal(t *testing.T, n int) *Emulator {
	t.Helper()
	p := newPortal(t)
	schema := Schema{ID: "sod3-0001", Name: "Generated", Columns: []socrata.Column{
		{FieldName: "n", DataType: "number"},
		{FieldName: "kind", DataType: "text"},
	}}
	kinds := []string{"alpha", "beta", "gamma"}
	if err := p.AddGenerated(t.Context(), schema, n, func(i int) map[string]any {
		return map[string]any{"n": (i * 37) % n, "kind": kinds[i%3]}
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

// post sends a SODA3 request; token "" sends none.
func post(t *testing.T, p *Emulator, path, token, body string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, p.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-App-Token", token)
	}
	resp, err := p.Client().Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func soda3JSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSODA3Refusals checks the answers to requests the SODA3 query API
// refuses: no token, wrong method, bodies it cannot use, unknown datasets.
func TestSODA3Refusals(t *testing.T) {
	t.Parallel()
	p := soda3Portal(t, 10)
	const path = "/api/v3/views/sod3-0001/query.json"
	tests := []struct {
		name       string
		method     string
		path       string
		token      string
		body       string
		wantStatus int
		wantCode   string // "code" or "errorCode" of the envelope
		wantMsg    string // a part of "message"
	}{
		{"no token", http.MethodPost, path, "", `{"query":"SELECT *"}`, 403, "authentication_required", "must be authenticated or have an application token"},
		{"GET", http.MethodGet, path, "tok", "", 405, "", "Method not allowed"},
		{"not JSON", http.MethodPost, path, "tok", `SELECT *`, 400, "invalid_request", "must be a JSON object"},
		{"JSON array", http.MethodPost, path, "tok", `["SELECT *"]`, 400, "invalid_request", "must be a JSON object"},
		{"no query", http.MethodPost, path, "tok", `{"page":{"pageNumber":1,"pageSize":10}}`, 400, "invalid_request", `no "query"`},
		{"blank query", http.MethodPost, path, "tok", `{"query":"  "}`, 400, "invalid_request", `no "query"`},
		{"query not a string", http.MethodPost, path, "tok", `{"query":5}`, 400, "invalid_request", "wrong type"},
		{"unknown option", http.MethodPost, path, "tok", `{"query":"SELECT *","$limit":5,"rows":1}`, 400, "invalid_request", "Unrecognized arguments [$limit, rows]"},
		{"page number 0", http.MethodPost, path, "tok", `{"query":"SELECT *","page":{"pageNumber":0,"pageSize":10}}`, 400, "invalid_request", `"pageNumber" (from 1)`},
		{"page without size", http.MethodPost, path, "tok", `{"query":"SELECT *","page":{"pageNumber":1}}`, 400, "invalid_request", `"pageSize"`},
		{"body too large", http.MethodPost, path, "tok", `{"query":"` + strings.Repeat("x", maxSODA3Body) + `"}`, 413, "invalid_request", "larger than"},
		{"malformed SoQL", http.MethodPost, path, "tok", `{"query":"SELECT WHERE FROM"}`, 400, "query.compiler.malformed", "Expected"},
		{"no such column", http.MethodPost, path, "tok", `{"query":"SELECT nope"}`, 400, "query.soql.no-such-column", "nope"},
		{"unknown dataset", http.MethodPost, "/api/v3/views/zzzz-zzzz/query.json", "tok", `{"query":"SELECT *"}`, 404, "not_found", "Cannot find view with id zzzz-zzzz"},
		{"not a dataset id", http.MethodPost, "/api/v3/views/x/y/query.json", "tok", `{"query":"SELECT *"}`, 404, "not_found", "No service found"},
		{"other v3 path", http.MethodPost, "/api/v3/views/sod3-0001/export.csv", "tok", `{"query":"SELECT *"}`, 404, "not_found", "No service found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var r response
			if tt.method == http.MethodGet {
				r = get(t, p, tt.path, nil)
			} else {
				r = post(t, p, tt.path, tt.token, tt.body)
			}
			if r.status != tt.wantStatus {
				t.Fatalf("status = %d; want %d (body %.300s)", r.status, tt.wantStatus, r.body)
			}
			env := decodeObject(t, r.body)
			code, _ := env["code"].(string)
			if code == "" {
				code, _ = env["errorCode"].(string)
			}
			if code != tt.wantCode {
				t.Errorf("code = %q; want %q (body %.300s)", code, tt.wantCode, r.body)
			}
			if msg, _ := env["message"].(string); !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message = %q; want it to contain %q", msg, tt.wantMsg)
			}
		})
	}
}

// TestSODA3SameAsResource checks that a query answered by SODA3 (page 1 at
// least as large as the query's LIMIT, or no page) returns the rows and
// column headers the Resource API returns for the same SoQL.
func TestSODA3SameAsResource(t *testing.T) {
	t.Parallel()
	p := soda3Portal(t, 1500)
	tests := []struct {
		name string
		soql string
		page any // nil: no page option
	}{
		{"limit and offset inside", "SELECT n, kind WHERE n > 10 ORDER BY n DESC, :id LIMIT 25 OFFSET 40", map[string]int{"pageNumber": 1, "pageSize": 25}},
		{"page larger than limit", "SELECT n ORDER BY :id LIMIT 7", map[string]int{"pageNumber": 1, "pageSize": 500}},
		{"grouped", "SELECT kind, count(*) AS c GROUP BY kind ORDER BY kind", map[string]int{"pageNumber": 1, "pageSize": 1000}},
		{"count stage", "SELECT n WHERE kind = 'beta' |> SELECT count(*)", map[string]int{"pageNumber": 1, "pageSize": 1000}},
		{"no page, default 1,000 rows", "SELECT n ORDER BY :id", nil},
		{"no page, own limit", "SELECT n ORDER BY :id LIMIT 1200", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := map[string]any{"query": tt.soql, "includeSynthetic": false}
			if tt.page != nil {
				body["page"] = tt.page
			}
			v3 := post(t, p, "/api/v3/views/sod3-0001/query.json", "tok", soda3JSON(t, body))
			if v3.status != http.StatusOK {
				t.Fatalf("SODA3 status %d: %.300s", v3.status, v3.body)
			}
			v2 := get(t, p, "/resource/sod3-0001.json", url.Values{"$query": {tt.soql}})
			if v2.status != http.StatusOK {
				t.Fatalf("SODA 2.1 status %d: %.300s", v2.status, v2.body)
			}
			rows3, rows2 := decodeRows(t, v3.body), decodeRows(t, v2.body)
			if len(rows2) == 0 {
				t.Fatal("the query returned no rows; the comparison would prove nothing")
			}
			if diff := cmp.Diff(rows2, rows3); diff != "" {
				t.Errorf("SODA3 rows differ from SODA 2.1's (-2.1 +3):\n%s", diff)
			}
			for _, h := range []string{"X-SODA2-Fields", "X-SODA2-Types"} {
				if v3.header.Get(h) != v2.header.Get(h) || v3.header.Get(h) == "" {
					t.Errorf("%s = %q; SODA 2.1 sent %q", h, v3.header.Get(h), v2.header.Get(h))
				}
			}
		})
	}
}

// TestSODA3Pages pages through a result with the page option and checks
// that the pages, in order, are the whole result once.
func TestSODA3Pages(t *testing.T) {
	t.Parallel()
	const total = 1000
	p := soda3Portal(t, total)
	const order = "SELECT n, kind ORDER BY kind, n DESC, :id"
	whole := query(t, p, "sod3-0001", order+" LIMIT 5000")
	if len(whole) != total {
		t.Fatalf("the whole result has %d rows; want %d", len(whole), total)
	}
	// Pages of every size over the whole result, and pages of one row over
	// a query whose LIMIT ends the result before the dataset does (1,000
	// pages of one row would cost minutes under the race detector and check
	// nothing more).
	for _, tt := range []struct{ limit, size int }{{30, 1}, {5000, 7}, {5000, 100}, {5000, 999}, {5000, 1000}, {5000, 4000}} {
		t.Run(fmt.Sprintf("limit %d size %d", tt.limit, tt.size), func(t *testing.T) {
			t.Parallel()
			soqlText := fmt.Sprintf("%s LIMIT %d", order, tt.limit)
			want := whole[:min(tt.limit, total)]
			var got []map[string]any
			for number := 1; number <= total+1; number++ {
				body := soda3JSON(t, map[string]any{"query": soqlText, "page": map[string]int{"pageNumber": number, "pageSize": tt.size}})
				r := post(t, p, "/api/v3/views/sod3-0001/query.json", "tok", body)
				if r.status != http.StatusOK {
					t.Fatalf("page %d: status %d: %.300s", number, r.status, r.body)
				}
				rows := decodeRows(t, r.body)
				if len(rows) > tt.size {
					t.Fatalf("page %d has %d rows; want at most %d", number, len(rows), tt.size)
				}
				got = append(got, rows...)
				if len(rows) < tt.size {
					break
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("pages of %d differ from the result (-whole +pages):\n%s", tt.size, diff)
			}
		})
	}
}

// TestSODA3Off checks that a portal with SODA3 turned off answers it as a
// portal without it, and still serves SODA 2.1.
func TestSODA3Off(t *testing.T) {
	t.Parallel()
	p := soda3Portal(t, 10)
	body := `{"query":"SELECT n ORDER BY :id","page":{"pageNumber":1,"pageSize":10}}`
	steps := []struct {
		on         bool
		wantStatus int
	}{{true, 200}, {false, 404}, {true, 200}}
	for i, st := range steps {
		p.SetSODA3(st.on)
		r := post(t, p, "/api/v3/views/sod3-0001/query.json", "tok", body)
		if r.status != st.wantStatus {
			t.Fatalf("step %d (SODA3 on %v): status %d; want %d: %s", i, st.on, r.status, st.wantStatus, r.body)
		}
		if !st.on && !bytes.Contains(r.body, []byte("No service found for this URL.")) {
			t.Errorf("SODA3 off: body %s; want the answer of a portal without it", r.body)
		}
		if rows := query(t, p, "sod3-0001", "SELECT n"); len(rows) != 10 {
			t.Errorf("step %d: SODA 2.1 returned %d rows; want 10", i, len(rows))
		}
	}
}

func TestEndpointSODA3(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"/api/v3/views/abcd-1234/query.json": EndpointQuery,
		"/api/views/abcd-1234.json":          EndpointViews,
		"/resource/abcd-1234.json":           EndpointResource,
	} {
		if got := Endpoint(path); got != want {
			t.Errorf("Endpoint(%q) = %q; want %q", path, got, want)
		}
	}
}
