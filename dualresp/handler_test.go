package dualresp_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// rowsJSON returns genRow(from)…genRow(to-1) decoded (descending when
// from > to: genRow(from-1)… genRow(to)).
func rowsJSON(t *testing.T, from, to int64) []any {
	t.Helper()
	var out []any
	add := func(i int64) {
		var v any
		if err := json.Unmarshal(genRow(i), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if from <= to {
		for i := from; i < to; i++ {
			add(i)
		}
	} else {
		for i := from - 1; i >= to; i-- {
			add(i)
		}
	}
	if out == nil {
		out = []any{}
	}
	return out
}

func TestHandlerRoutes(t *testing.T) {
	t.Parallel()
	const total = 25
	big := `{"offset":0,"pad":"` + strings.Repeat("x", dualresp.MaxRequestBody) + `"}`
	tests := []struct {
		name        string
		method      string
		target      string // {id} is replaced by the resource id
		body        string
		expired     bool
		wantStatus  int
		want        map[string]any // keys compared in the JSON answer
		wantErr     string         // "error" code
		wantMessage string         // part of "message"
		wantHeader  map[string]string
	}{
		{name: "metadata", method: "GET", target: "/resources/{id}", wantStatus: 200,
			want: map[string]any{"status": "active", "total_count": 25.0, "access_count": 1.0, "name": "r", "pinned": false,
				"expires_at": "2025-06-01T12:30:00Z", "created_at": "2025-06-01T12:00:00Z",
				"columns": []any{map[string]any{"name": "i", "type": "number"}, map[string]any{"name": "name", "type": "text"},
					map[string]any{"name": "even", "type": "checkbox"}, map[string]any{"name": "tags", "type": "json"}},
				"query": map[string]any{"kind": "gen", "text": "all rows"}}},
		{name: "first page", method: "GET", target: "/resources/{id}?offset=0&limit=10", wantStatus: 200,
			want: map[string]any{"data": rowsJSON(t, 0, 10), "total_count": 25.0, "returned_count": 10.0, "offset": 0.0,
				"has_next": true, "next_offset": 10.0, "has_previous": false}},
		{name: "last page by skip", method: "GET", target: "/resources/{id}?skip=20&limit=10", wantStatus: 200,
			want: map[string]any{"data": rowsJSON(t, 20, 25), "returned_count": 5.0, "offset": 20.0,
				"has_next": false, "next_offset": nil, "has_previous": true}},
		{name: "offset and skip agree", method: "GET", target: "/resources/{id}?offset=3&skip=3&limit=1", wantStatus: 200,
			want: map[string]any{"data": rowsJSON(t, 3, 4)}},
		{name: "past the end", method: "GET", target: "/resources/{id}?offset=30", wantStatus: 200,
			want: map[string]any{"data": []any{}, "returned_count": 0.0, "has_next": false, "has_previous": true}},
		{name: "limit only", method: "GET", target: "/resources/{id}?limit=2", wantStatus: 200,
			want: map[string]any{"data": rowsJSON(t, 0, 2), "offset": 0.0, "next_offset": 2.0}},
		{name: "limit capped", method: "GET", target: "/resources/{id}?offset=0&limit=1000000", wantStatus: 200,
			want:       map[string]any{"data": rowsJSON(t, 0, 20), "limit": 20.0, "limit_capped": true, "requested_limit": 1000000.0, "has_next": true},
			wantHeader: map[string]string{"X-Limit-Capped": "20"}},
		{name: "negative offset", method: "GET", target: "/resources/{id}?offset=-1", wantStatus: 400, wantErr: "bad_request", wantMessage: "offset must not be negative"},
		{name: "non-numeric offset", method: "GET", target: "/resources/{id}?offset=abc", wantStatus: 400, wantErr: "bad_request", wantMessage: `offset must be a whole number, got "abc"`},
		{name: "negative skip", method: "GET", target: "/resources/{id}?skip=-4", wantStatus: 400, wantErr: "bad_request", wantMessage: "skip must not be negative"},
		{name: "offset and skip disagree", method: "GET", target: "/resources/{id}?offset=1&skip=2", wantStatus: 400, wantErr: "bad_request", wantMessage: "disagree"},
		{name: "zero limit", method: "GET", target: "/resources/{id}?limit=0", wantStatus: 400, wantErr: "bad_request", wantMessage: "limit must be at least 1"},
		{name: "non-numeric limit", method: "GET", target: "/resources/{id}?limit=1e3", wantStatus: 400, wantErr: "bad_request", wantMessage: "limit must be a whole number"},
		{name: "repeated limit", method: "GET", target: "/resources/{id}?limit=1&limit=2", wantStatus: 400, wantErr: "bad_request", wantMessage: "limit must be given once"},
		{name: "post page", method: "POST", target: "/resources/{id}", body: `{"offset":5,"limit":3}`, wantStatus: 200,
			want: map[string]any{"data": rowsJSON(t, 5, 8), "offset": 5.0, "next_offset": 8.0, "has_previous": true}},
		{name: "post empty body", method: "POST", target: "/resources/{id}", wantStatus: 200,
			want: map[string]any{"data": rowsJSON(t, 0, 20), "limit": 20.0, "has_next": true}},
		{name: "post sort object", method: "POST", target: "/resources/{id}", body: `{"offset":0,"limit":3,"sort":{"field":"i","order":"desc"}}`, wantStatus: 200,
			want: map[string]any{"data": rowsJSON(t, 25, 22)}},
		{name: "post sort list", method: "POST", target: "/resources/{id}", body: `{"offset":2,"limit":2,"sort":[{"field":"i","order":"DESC"}]}`, wantStatus: 200,
			want: map[string]any{"data": rowsJSON(t, 23, 21)}},
		{name: "post sort default order", method: "POST", target: "/resources/{id}", body: `{"limit":2,"sort":{"field":"i"}}`, wantStatus: 200,
			want: map[string]any{"data": rowsJSON(t, 0, 2)}},
		{name: "unknown sort field", method: "POST", target: "/resources/{id}", body: `{"sort":{"field":"nope"}}`, wantStatus: 400, wantErr: "bad_request", wantMessage: `unknown sort field "nope"`},
		{name: "injection as sort field", method: "POST", target: "/resources/{id}", body: `{"sort":{"field":"i; DROP TABLE x"}}`, wantStatus: 400, wantErr: "bad_request", wantMessage: "unknown sort field"},
		{name: "bad sort order", method: "POST", target: "/resources/{id}", body: `{"sort":{"field":"i","order":"up"}}`, wantStatus: 400, wantErr: "bad_request", wantMessage: `must be "asc" or "desc"`},
		{name: "unknown sort key", method: "POST", target: "/resources/{id}", body: `{"sort":{"field":"i","dir":"asc"}}`, wantStatus: 400, wantErr: "bad_request", wantMessage: "dir"},
		{name: "sort field twice", method: "POST", target: "/resources/{id}", body: `{"sort":[{"field":"i"},{"field":"i"}]}`, wantStatus: 400, wantErr: "bad_request", wantMessage: "given twice"},
		{name: "unknown body field", method: "POST", target: "/resources/{id}", body: `{"ofset":1}`, wantStatus: 400, wantErr: "bad_request", wantMessage: `"ofset"`},
		{name: "negative post offset", method: "POST", target: "/resources/{id}", body: `{"offset":-2}`, wantStatus: 400, wantErr: "bad_request", wantMessage: "offset must not be negative"},
		{name: "string post offset", method: "POST", target: "/resources/{id}", body: `{"offset":"2"}`, wantStatus: 400, wantErr: "bad_request", wantMessage: "field offset must be int64"},
		{name: "fractional post limit", method: "POST", target: "/resources/{id}", body: `{"limit":2.5}`, wantStatus: 400, wantErr: "bad_request", wantMessage: "limit"},
		{name: "two JSON values", method: "POST", target: "/resources/{id}", body: `{} {}`, wantStatus: 400, wantErr: "bad_request", wantMessage: "more than one JSON value"},
		{name: "malformed JSON", method: "POST", target: "/resources/{id}", body: `{"offset":`, wantStatus: 400, wantErr: "bad_request", wantMessage: "request body"},
		{name: "oversized body", method: "POST", target: "/resources/{id}", body: big, wantStatus: 400, wantErr: "bad_request", wantMessage: "larger than 65536 bytes"},
		{name: "pin", method: "PUT", target: "/resources/{id}", wantStatus: 200,
			want: map[string]any{"status": "pinned", "expires_at": nil, "pinned": true}},
		{name: "delete", method: "DELETE", target: "/resources/{id}", wantStatus: 204},
		{name: "export format", method: "GET", target: "/resources/{id}/export?format=xml", wantStatus: 400, wantErr: "bad_request", wantMessage: "format must be one of csv, ndjson, json"},
		{name: "unknown id", method: "GET", target: "/resources/0123456789abcdef0123456789abcdef", wantStatus: 404, wantErr: "not_found"},
		{name: "malformed id", method: "GET", target: "/resources/..%2F..%2Fetc", wantStatus: 404, wantErr: "not_found"},
		{name: "unknown id page", method: "GET", target: "/resources/0123456789abcdef0123456789abcdef?offset=0", wantStatus: 404, wantErr: "not_found"},
		{name: "unknown id pin", method: "PUT", target: "/resources/0123456789abcdef0123456789abcdef", wantStatus: 404, wantErr: "not_found"},
		{name: "unknown id delete", method: "DELETE", target: "/resources/0123456789abcdef0123456789abcdef", wantStatus: 404, wantErr: "not_found"},
		{name: "unknown id export", method: "GET", target: "/resources/0123456789abcdef0123456789abcdef/export", wantStatus: 404, wantErr: "not_found"},
		{name: "expired metadata", method: "GET", target: "/resources/{id}", expired: true, wantStatus: 404, wantErr: "expired", wantMessage: "expired"},
		{name: "expired page", method: "GET", target: "/resources/{id}?offset=0", expired: true, wantStatus: 404, wantErr: "expired"},
		{name: "expired post", method: "POST", target: "/resources/{id}", expired: true, wantStatus: 404, wantErr: "expired"},
		{name: "expired pin", method: "PUT", target: "/resources/{id}", expired: true, wantStatus: 404, wantErr: "expired"},
		{name: "expired delete", method: "DELETE", target: "/resources/{id}", expired: true, wantStatus: 404, wantErr: "expired"},
		{name: "expired export", method: "GET", target: "/resources/{id}/export?format=csv", expired: true, wantStatus: 404, wantErr: "expired"},
		{name: "method not allowed", method: "PATCH", target: "/resources/{id}", wantStatus: 405, wantErr: "method_not_allowed",
			wantHeader: map[string]string{"Allow": "GET, HEAD, POST, PUT, DELETE"}},
		{name: "export method not allowed", method: "POST", target: "/resources/{id}/export", wantStatus: 405, wantErr: "method_not_allowed"},
		{name: "no id", method: "GET", target: "/resources/", wantStatus: 404, wantErr: "not_found"},
		{name: "unknown route", method: "GET", target: "/resources/{id}/other", wantStatus: 404, wantErr: "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, clock := newServer(t, &genExecutor{Total: total}, dualresp.Options{MaxPageSize: 20, DefaultExpiration: 30 * time.Minute})
			resp := create(t, srv, dualresp.Spec{Name: "r"})
			if tt.expired {
				clock.Advance(time.Hour)
			}
			target := strings.ReplaceAll(tt.target, "{id}", resp.ID())
			req := httptest.NewRequest(tt.method, target, strings.NewReader(tt.body))
			w := httptest.NewRecorder()
			srv.Handler().ServeHTTP(w, req)
			if w.Code != tt.wantStatus {
				t.Fatalf("%s %s = %d %s; want %d", tt.method, tt.target, w.Code, w.Body, tt.wantStatus)
			}
			for k, v := range tt.wantHeader {
				if got := w.Header().Get(k); got != v {
					t.Errorf("header %s = %q; want %q", k, got, v)
				}
			}
			if tt.wantStatus == 204 {
				if w.Body.Len() != 0 {
					t.Errorf("204 answer has a body: %s", w.Body)
				}
				return
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q; want application/json", ct)
			}
			var got map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatalf("answer is not a JSON object: %v\n%s", err, w.Body)
			}
			if tt.wantErr != "" {
				if got["error"] != tt.wantErr {
					t.Errorf("error = %v; want %q", got["error"], tt.wantErr)
				}
				msg, _ := got["message"].(string)
				if msg == "" || !strings.Contains(msg, tt.wantMessage) {
					t.Errorf("message = %q; want it to contain %q", msg, tt.wantMessage)
				}
			}
			sub := map[string]any{}
			for k := range tt.want {
				sub[k] = got[k]
			}
			if diff := cmp.Diff(tt.want, sub, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("answer mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHandlerDeleteThenGone(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{Total: 3}, dualresp.Options{})
	resp := create(t, srv, dualresp.Spec{})
	h := srv.Handler()
	do := func(method string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, "/resources/"+resp.ID(), nil))
		return w
	}
	if w := do("DELETE"); w.Code != 204 {
		t.Fatalf("DELETE = %d; want 204", w.Code)
	}
	if w := do("GET"); w.Code != 404 || !strings.Contains(w.Body.String(), `"not_found"`) {
		t.Errorf("GET after DELETE = %d %s; want 404 not_found", w.Code, w.Body)
	}
}

func TestHandlerAccessExtendsExpiry(t *testing.T) {
	t.Parallel()
	srv, clock := newServer(t, &genExecutor{Total: 3}, dualresp.Options{DefaultExpiration: 10 * time.Minute})
	resp := create(t, srv, dualresp.Spec{})
	h := srv.Handler()
	for i := range 3 {
		clock.Advance(8 * time.Minute) // each access comes before the expiry it renewed
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/resources/"+resp.ID()+"?limit=1", nil))
		if w.Code != 200 {
			t.Fatalf("access %d at +%dm = %d; want 200", i+1, 8*(i+1), w.Code)
		}
	}
	rec, err := srv.Resource(t.Context(), resp.ID())
	if err != nil {
		t.Fatal(err)
	}
	if rec.AccessCount != 3 || !rec.ExpiresAt.Equal(clock.Now().Add(10*time.Minute)) {
		t.Errorf("after 3 accesses: AccessCount %d, ExpiresAt %v; want 3, %v", rec.AccessCount, rec.ExpiresAt, clock.Now().Add(10*time.Minute))
	}
}

func TestHandlerQueryFailure(t *testing.T) {
	t.Parallel()
	exec := &genExecutor{Total: 3}
	srv, _ := newServer(t, exec, dualresp.Options{})
	resp := create(t, srv, dualresp.Spec{})
	exec.PageErr = errBoom // set after creation: only pages fail
	for _, target := range []string{"/resources/" + resp.ID() + "?offset=0", "/resources/" + resp.ID() + "/export?format=ndjson"} {
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, httptest.NewRequest("GET", target, nil))
		if w.Code != http.StatusBadGateway || !strings.Contains(w.Body.String(), `"query_failed"`) {
			t.Errorf("GET %s with a failing executor = %d %s; want 502 query_failed", target, w.Code, w.Body)
		}
	}
}

var errBoom = &boomError{}

type boomError struct{}

func (*boomError) Error() string { return "boom" }

func TestExportFormats(t *testing.T) {
	t.Parallel()
	exec := &genExecutor{Total: 2500} // more than one export page
	srv, _ := newServer(t, exec, dualresp.Options{})
	resp := create(t, srv, dualresp.Spec{})
	get := func(format string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/resources/"+resp.ID()+"/export"+format, nil))
		if w.Code != 200 {
			t.Fatalf("export %s = %d %s", format, w.Code, w.Body)
		}
		return w
	}

	w := get("?format=ndjson")
	if ct := w.Header().Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("ndjson Content-Type = %q", ct)
	}
	lines := strings.Split(strings.TrimSuffix(w.Body.String(), "\n"), "\n")
	if len(lines) != 2500 {
		t.Fatalf("ndjson lines = %d; want 2500", len(lines))
	}
	for i, line := range lines {
		if line != string(genRow(int64(i))) {
			t.Fatalf("ndjson line %d = %s; want %s", i, line, genRow(int64(i)))
		}
	}

	w = get("?format=json")
	var arr []json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &arr); err != nil || len(arr) != 2500 {
		t.Fatalf("json export: %d rows, %v; want 2500", len(arr), err)
	}
	if !bytes.Equal(arr[2499], genRow(2499)) {
		t.Errorf("json export last row = %s", arr[2499])
	}

	for _, format := range []string{"?format=csv", ""} {
		w = get(format)
		if ct := w.Header().Get("Content-Type"); ct != "text/csv; charset=utf-8" {
			t.Errorf("csv Content-Type = %q", ct)
		}
		if cd := w.Header().Get("Content-Disposition"); cd != `attachment; filename="`+resp.ID()+`.csv"` {
			t.Errorf("Content-Disposition = %q", cd)
		}
		recs, err := csv.NewReader(w.Body).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2501 {
			t.Fatalf("csv records = %d; want header + 2500", len(recs))
		}
		want := [][]string{{"i", "name", "even", "tags"}, {"0", "row-0", "true", `["a",0]`}, {"2499", "row-2499", "false", `["a",0]`}}
		got := [][]string{recs[0], recs[1], recs[2500]}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("csv mismatch (-want +got):\n%s", diff)
		}
	}

	empty := create(t, srv, dualresp.Spec{Query: dualresp.Query{Kind: "gen", Params: map[string]string{"total": "0"}}})
	for format, want := range map[string]string{"csv": "i,name,even,tags\n", "ndjson": "", "json": "[]\n"} {
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/resources/"+empty.ID()+"/export?format="+format, nil))
		if w.Code != 200 || w.Body.String() != want {
			t.Errorf("export of an empty result as %s = %d %q; want 200 %q", format, w.Code, w.Body, want)
		}
	}
}

func TestCSVCells(t *testing.T) {
	t.Parallel()
	exec := &rowsExecutor{rows: []json.RawMessage{
		json.RawMessage(`{"a":"x,\"y\"\nz","b":null,"c":1.50,"d":{"k": [1, 2]},"e":true}`),
		json.RawMessage(`{"a":"ünï"}`),
	}}
	srv, _ := newServer(t, exec, dualresp.Options{})
	resp := create(t, srv, dualresp.Spec{Columns: []dualresp.Column{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}, {Name: "e"}}})
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/resources/"+resp.ID()+"/export?format=csv", nil))
	recs, err := csv.NewReader(w.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"a", "b", "c", "d", "e"}, {"x,\"y\"\nz", "", "1.50", `{"k":[1,2]}`, "true"}, {"ünï", "", "", "", ""}}
	if diff := cmp.Diff(want, recs); diff != "" {
		t.Errorf("csv cells mismatch (-want +got):\n%s", diff)
	}
}
