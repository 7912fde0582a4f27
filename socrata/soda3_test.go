package socrata

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// seen is one request a test server received.
type seen struct {
	Method, Path, RawQuery, ContentType, Token string
	Body                                       map[string]any
}

// recorder answers SODA3 and SODA 2.1 queries with fixed rows (or, for
// SODA3, v3Status) and records every request.
type recorder struct {
	v3Status int // 0: 200 with rows
	v2Status int // 0: 200 with rows
	mu       sync.Mutex
	reqs     []seen
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := seen{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
		ContentType: r.Header.Get("Content-Type"), Token: r.Header.Get("X-App-Token")}
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		if len(b) > 0 {
			if err := json.Unmarshal(b, &s.Body); err != nil {
				s.Body = map[string]any{"not json": string(b)}
			}
		}
	}
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, s)
	rc.mu.Unlock()
	status := rc.v2Status
	if strings.HasPrefix(r.URL.Path, "/api/v3/") {
		status = rc.v3Status
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if status != 0 {
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"code":"status_%d","error":true,"message":"answered %d"}`, status, status)
		return
	}
	w.Header().Set("X-SODA2-Fields", `["a"]`)
	w.Header().Set("X-SODA2-Types", `["text"]`)
	io.WriteString(w, `[{"a":"1"},{"a":"2"}]`)
}

func (rc *recorder) requests() []seen {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]seen(nil), rc.reqs...)
}

// paths returns "METHOD path" of every request.
func (rc *recorder) paths() []string {
	var out []string
	for _, s := range rc.requests() {
		out = append(out, s.Method+" "+s.Path)
	}
	return out
}

// TestSODA3Request checks what a client with an app token sends: a POST to
// /api/v3/views/{id}/query.json whose body holds the SoQL as given, page 1
// of the query's LIMIT (or SODA 2.1's default 1,000) rows, at most
// DefaultSODA3PageSize, and
// includeSynthetic false, the token in X-App-Token only.
func TestSODA3Request(t *testing.T) {
	t.Parallel()
	const tok = "tok-3f9a"
	tests := []struct {
		soql     string
		pageSize float64
	}{
		{"SELECT a ORDER BY :id LIMIT 25 OFFSET 40", 25},
		{"SELECT a ORDER BY :id OFFSET 40 LIMIT 9", 9},
		{"select a order by :id limit 50000 offset 100000", DefaultSODA3PageSize},
		{"SELECT a ORDER BY :id", 1000},
		{"SELECT a ORDER BY :id OFFSET 3", 1000},
		{"SELECT a LIMIT 0", 1},
		{"SELECT a WHERE b = 'LIMIT 5'", 1000},
		{"SELECT a WHERE b = 'x' ORDER BY `LIMIT 5`", 1000},
		{"SELECT a LIMIT 10 |> SELECT count(*)", 1000},
		{"SELECT a |> SELECT a LIMIT 3", 3},
		{"SELECT a LIMIT 99999999999999999999999", DefaultSODA3PageSize},
	}
	for _, tt := range tests {
		t.Run(tt.soql, func(t *testing.T) {
			t.Parallel()
			rc := &recorder{}
			c, _, _ := newTestClient(t, rc, Options{AppToken: tok})
			res, err := c.Query(t.Context(), "abcd-1234", tt.soql)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) != 2 || !cmp.Equal(res.Fields, []string{"a"}) || !cmp.Equal(res.Types, []string{"text"}) {
				t.Errorf("result = %+v; want the 2 rows and the headers served", res)
			}
			want := []seen{{Method: "POST", Path: "/api/v3/views/abcd-1234/query.json", ContentType: "application/json", Token: tok,
				Body: map[string]any{"query": tt.soql, "page": map[string]any{"pageNumber": 1.0, "pageSize": tt.pageSize}, "includeSynthetic": false}}}
			if diff := cmp.Diff(want, rc.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if !c.UsesSODA3() {
				t.Error("UsesSODA3() = false after a SODA3 answer; want true")
			}
		})
	}
}

// TestSODA3OnlyWithToken checks that a client without an app token queries
// SODA 2.1 with GET, as before.
func TestSODA3OnlyWithToken(t *testing.T) {
	t.Parallel()
	rc := &recorder{}
	c, _, _ := newTestClient(t, rc, Options{})
	if c.UsesSODA3() {
		t.Error("UsesSODA3() = true without a token; want false")
	}
	if _, err := c.Query(t.Context(), "abcd-1234", "SELECT a LIMIT 5"); err != nil {
		t.Fatal(err)
	}
	reqs := rc.requests()
	if len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].Path != "/resource/abcd-1234.json" ||
		!strings.Contains(reqs[0].RawQuery, "%24query=SELECT+a+LIMIT+5") || reqs[0].Token != "" {
		t.Errorf("requests = %+v; want one GET /resource/abcd-1234.json?$query=… without a token", reqs)
	}
}

// TestSODA3Fallback checks which SODA3 answers make the client use SODA 2.1,
// for that query and for later ones.
func TestSODA3Fallback(t *testing.T) {
	t.Parallel()
	const (
		v3 = "POST /api/v3/views/abcd-1234/query.json"
		v2 = "GET /resource/abcd-1234.json"
	)
	tests := []struct {
		name          string
		v3Status      int
		v2Status      int
		wantErr       string // "" for success of the first query
		wantNotFound  bool
		wantFirst     []string
		wantSecond    []string // the requests of a second query
		wantSODA3Left bool     // UsesSODA3 after both
	}{
		{"405: fall back, remember", 405, 0, "", false, []string{v3, v2}, []string{v2}, false},
		{"404 then 2.1 serves: fall back, remember", 404, 0, "", false, []string{v3, v2}, []string{v2}, false},
		{"404 on both: dataset missing, SODA3 kept", 404, 404, "HTTP 404", true, []string{v3, v2}, []string{v3, v2}, true},
		{"405 then 2.1 fails: still remembered", 405, 400, "HTTP 400", false, []string{v3, v2}, []string{v2}, false},
		{"403: no fallback", 403, 0, "query API answered HTTP 403", false, []string{v3}, []string{v3}, true},
		{"400: no fallback", 400, 0, "query API answered HTTP 400", false, []string{v3}, []string{v3}, true},
		{"500: no fallback", 500, 0, "query API answered HTTP 500", false, []string{v3}, []string{v3}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := &recorder{v3Status: tt.v3Status, v2Status: tt.v2Status}
			var logs logBuffer
			c, _, _ := newTestClient(t, rc, Options{AppToken: "tok", MaxRetries: -1,
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
			_, err := c.Query(t.Context(), "abcd-1234", "SELECT a LIMIT 2")
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("first query: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("first query: err = %v; want one containing %q", err, tt.wantErr)
			}
			if got := errors.Is(err, ErrNotFound); got != tt.wantNotFound {
				t.Errorf("errors.Is(err, ErrNotFound) = %v; want %v (err %v)", got, tt.wantNotFound, err)
			}
			if diff := cmp.Diff(tt.wantFirst, rc.paths()); diff != "" {
				t.Errorf("first query's requests (-want +got):\n%s", diff)
			}
			n := len(rc.paths())
			c.Query(t.Context(), "abcd-1234", "SELECT a LIMIT 2") //nolint:errcheck // only the requests matter
			if diff := cmp.Diff(tt.wantSecond, rc.paths()[n:]); diff != "" {
				t.Errorf("second query's requests (-want +got):\n%s", diff)
			}
			if c.UsesSODA3() != tt.wantSODA3Left {
				t.Errorf("UsesSODA3() = %v; want %v", c.UsesSODA3(), tt.wantSODA3Left)
			}
			if logged := strings.Count(logs.String(), "has no SODA3"); logged != map[bool]int{true: 0, false: 1}[tt.wantSODA3Left] {
				t.Errorf("the switch to SODA 2.1 was logged %d times; logs:\n%s", logged, logs.String())
			}
		})
	}
}

// TestSODA3FallbackConcurrent runs many first queries at once against a
// portal without SODA3: every query succeeds, each makes at most one SODA3
// attempt, and once they are done no query tries SODA3 again.
func TestSODA3FallbackConcurrent(t *testing.T) {
	t.Parallel()
	const n = 32
	rc := &recorder{v3Status: http.StatusNotFound}
	c, _, _ := newTestClient(t, rc, Options{AppToken: "tok"})
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range n {
		wg.Go(func() {
			if _, err := c.Query(t.Context(), "abcd-1234", "SELECT a LIMIT 2"); err != nil {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d of %d concurrent queries failed", failed.Load(), n)
	}
	count := func() (v3, v2 int) {
		for _, p := range rc.paths() {
			if strings.HasPrefix(p, "POST /api/v3/") {
				v3++
			} else {
				v2++
			}
		}
		return v3, v2
	}
	v3, v2 := count()
	if v3 < 1 || v3 > n || v2 != n {
		t.Errorf("%d SODA3 and %d SODA 2.1 requests for %d queries; want 1..%d and %d", v3, v2, n, n, n)
	}
	for range 5 {
		if _, err := c.Query(t.Context(), "abcd-1234", "SELECT a LIMIT 2"); err != nil {
			t.Fatal(err)
		}
	}
	if v3After, v2After := count(); v3After != v3 || v2After != v2+5 {
		t.Errorf("later queries made %d SODA3 and %d SODA 2.1 requests; want 0 and 5", v3After-v3, v2After-v2)
	}
	t.Logf("%d concurrent first queries: %d SODA3 attempts, %d SODA 2.1 requests", n, v3, v2)
}

// TestSODA3TokenNeverLeaks sends SODA3 queries to a server that echoes the
// token into every kind of answer: the token goes in X-App-Token on every
// request, never in a URL or a body the client sends, and appears in no
// error text, error data or log line.
func TestSODA3TokenNeverLeaks(t *testing.T) {
	t.Parallel()
	const tok = "tok-SODA3-SECRET-91c2e7"
	answers := map[string]struct {
		status int
		ctype  string
		body   string
	}{
		"envelope400": {400, "application/json", `{"errorCode":"query.soql.no-such-column","message":"No such column: %[1]s","data":{"column":"%[1]s","list":["%[1]s"]}}`},
		"denied403":   {403, "application/json", `{"code":"permission_denied","error":true,"message":"Invalid app_token %s"}`},
		"limited429":  {429, "application/json", `{"message":"too many requests for %s"}`},
		"plain500":    {500, "text/plain", `internal error for %s`},
		"html502":     {502, "text/html", `<html><title>Bad gateway %s</title></html>`},
		"envelope200": {200, "application/json", `{"error":true,"message":"Unrecognized arguments [%s]"}`},
		"badrow200":   {200, "application/json", `[{"a":"1"}, "%s"]`},
	}
	var requests, withToken, inURLOrBody atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("X-App-Token") == tok {
			withToken.Add(1)
		}
		if strings.Contains(r.URL.String(), tok) || strings.Contains(string(b), tok) {
			inURLOrBody.Add(1)
		}
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v3/views/"), "/query.json")
		a, ok := answers[id]
		if !ok {
			http.Error(w, "unexpected path "+r.URL.Path, http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", a.ctype)
		w.WriteHeader(a.status)
		fmt.Fprintf(w, a.body, r.Header.Get("X-App-Token"))
	})
	var logs logBuffer
	c, _, _ := newTestClient(t, h, Options{AppToken: tok, MaxRetries: 1,
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	for id := range answers {
		s, err := c.QueryStream(t.Context(), id, "SELECT a WHERE a = '"+id+"' LIMIT 5")
		if err == nil {
			for _, rerr := range s.All() {
				if rerr != nil {
					err = rerr
				}
			}
			s.Close()
		}
		if err == nil {
			t.Errorf("%s: got no error; want one", id)
			continue
		}
		for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			if strings.Contains(text, tok) {
				t.Errorf("%s: the error text holds the token: %s", id, text)
			}
		}
		var api *APIError
		if errors.As(err, &api) {
			if api.Endpoint != "query" {
				t.Errorf("%s: APIError.Endpoint = %q; want \"query\"", id, api.Endpoint)
			}
			if strings.Contains(fmt.Sprint(api.Data), tok) {
				t.Errorf("%s: APIError.Data holds the token: %v", id, api.Data)
			}
		}
	}
	if !c.UsesSODA3() {
		t.Error("the client left SODA3 although no answer was 404 or 405")
	}
	if logs.String() == "" {
		t.Fatal("no log lines; the log check would prove nothing")
	}
	if strings.Contains(logs.String(), tok) {
		t.Error("a log line holds the token")
	}
	if requests.Load() == 0 || withToken.Load() != requests.Load() || inURLOrBody.Load() != 0 {
		t.Errorf("%d requests: %d with X-App-Token, %d with the token in the URL or body; want all and none",
			requests.Load(), withToken.Load(), inURLOrBody.Load())
	}
}
