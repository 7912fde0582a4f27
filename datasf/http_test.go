package datasf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/internal/mcphttp"
)

// httpEnv serves the product's HTTPHandler (MCP at /mcp, REST at
// /resources/) on a loopback httptest server. The product is the test's
// own; the fake portal behind it is the shared harness's, read only (the
// tests check the HTTP layer, not the portal's requests).
func httpEnv(t *testing.T, cfg datasf.Config) (*datasftest.Env, *httptest.Server) {
	t.Helper()
	env := datasftest.New(t, datasftest.Options{Config: cfg, PortalURL: sharedHarness(t).fake.URL()})
	handler, shutdown := env.Service.HTTPHandler()
	ts := httptest.NewServer(handler)
	t.Cleanup(func() {
		_ = shutdown(context.Background())
		ts.Close()
	})
	return env, ts
}

// rpc is one raw JSON-RPC exchange over HTTP.
type rpc struct {
	status  int
	session string
	body    string
}

func rawPost(t *testing.T, url string, headers map[string]string, body string) rpc {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rpc{status: resp.StatusCode, session: resp.Header.Get("Mcp-Session-Id"), body: string(b)}
}

// short is the start of an answer, for failure messages.
func (r rpc) short() string {
	if len(r.body) > 300 {
		return r.body[:300] + "…"
	}
	return r.body
}

func initialize(t *testing.T, url, version string) string {
	t.Helper()
	r := rawPost(t, url, nil, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, version))
	if r.status != http.StatusOK || r.session == "" {
		t.Fatalf("initialize: %d, session %q: %s", r.status, r.session, r.short())
	}
	rawPost(t, url, map[string]string{"Mcp-Session-Id": r.session, "MCP-Protocol-Version": version}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r.session
}

const toolsList = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`

// TestSessionLifetime: a session works from initialize until DELETE; ids
// that were never issued are refused.
func TestSessionLifetime(t *testing.T) {
	t.Parallel()
	_, ts := httpEnv(t, datasf.Config{})
	url := ts.URL + "/mcp"
	const version = "2025-06-18"
	sid := initialize(t, url, version)
	h := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": version}
	if r := rawPost(t, url, h, toolsList); r.status != http.StatusOK || !strings.Contains(r.body, "query_datasf") {
		t.Fatalf("tools/list in a live session = %d %s; want 200 with the tools", r.status, r.short())
	}

	never := "mcp-session-" + strings.Repeat("ab", 16)
	if r := rawPost(t, url, map[string]string{"Mcp-Session-Id": never, "MCP-Protocol-Version": version}, toolsList); r.status != http.StatusNotFound {
		t.Errorf("tools/list with the never-issued session id %s = %d %s; want 404", never, r.status, r.short())
	}
	uuidLike := "mcp-session-0b6b6f2e-5d1e-4f3e-9c59-6f1f3f1e2a10"
	if r := rawPost(t, url, map[string]string{"Mcp-Session-Id": uuidLike, "MCP-Protocol-Version": version}, toolsList); r.status != http.StatusNotFound {
		t.Errorf("tools/list with the well-formed, never-issued id %s = %d; want 404", uuidLike, r.status)
	}

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", version)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE /mcp = %d; want 200", resp.StatusCode)
	}
	if r := rawPost(t, url, h, toolsList); r.status != http.StatusNotFound {
		t.Errorf("tools/list after DELETE = %d %s; want 404", r.status, r.short())
	}
}

// TestOriginChecked: browsers' requests from other sites are refused.
func TestOriginChecked(t *testing.T) {
	t.Parallel()
	_, ts := httpEnv(t, datasf.Config{CORSOrigins: []string{"https://app.example.com"}})
	url := ts.URL + "/mcp"
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", http.StatusOK},
		{"https://app.example.com", http.StatusOK},
		{ts.URL, http.StatusOK},
		{"https://evil.example.com", http.StatusForbidden},
		{"null", http.StatusForbidden},
	} {
		h := map[string]string{}
		if tc.origin != "" {
			h["Origin"] = tc.origin
		}
		if r := rawPost(t, url, h, init); r.status != tc.want {
			t.Errorf("initialize with Origin %q = %d %s; want %d", tc.origin, r.status, r.short(), tc.want)
		}
	}
}

// TestHostChecked: on a loopback address, a foreign Host (DNS rebinding) is
// refused by the REST API as by /mcp.
func TestHostChecked(t *testing.T) {
	t.Parallel()
	_, ts := httpEnv(t, datasf.Config{})
	for _, path := range []string{"/resources/0123456789abcdef0123456789abcdef", "/mcp", "/healthz", "/"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+path, nil)
		req.Host = "evil.example.com"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// A balancer's health check names no host of ours: /healthz, which
		// says only "ok", answers any Host.
		want := http.StatusForbidden
		if path == "/healthz" {
			want = http.StatusOK
		}
		if resp.StatusCode != want {
			t.Errorf("GET %s with Host evil.example.com = %d; want %d", path, resp.StatusCode, want)
		}
	}

	// Behind a proxy on this machine that keeps the Host header, the
	// PublicURL's host reaches /mcp as it reaches the REST API.
	_, proxied := httpEnv(t, datasf.Config{PublicURL: "https://mcp.example.com"})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	for _, path := range []string{"/mcp", "/healthz"} {
		method, body := http.MethodGet, ""
		if path == "/mcp" {
			method, body = http.MethodPost, init
		}
		req, _ := http.NewRequestWithContext(t.Context(), method, proxied.URL+path, strings.NewReader(body))
		req.Host = "mcp.example.com"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s with Host mcp.example.com (the PublicURL's) = %d; want 200", method, path, resp.StatusCode)
		}
	}
}

// TestMCPBodyBounded: an oversized POST /mcp is answered 413 without being
// read whole.
func TestMCPBodyBounded(t *testing.T) {
	t.Parallel()
	_, ts := httpEnv(t, datasf.Config{})
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", mcphttp.MaxMCPRequestBody) + `"}}`
	if r := rawPost(t, ts.URL+"/mcp", nil, big); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST /mcp of %d bytes = %d; want 413", len(big), r.status)
	}
	// Chunked, without a Content-Length.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL+"/mcp", io.MultiReader(strings.NewReader(big)))
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked POST /mcp of %d bytes = %d; want 413", len(big), resp.StatusCode)
	}
}

// TestBatches: a JSON-RPC batch is answered in a 2025-03-26 session, and
// refused as an invalid request (not a parse error) in a later version.
func TestBatches(t *testing.T) {
	t.Parallel()
	_, ts := httpEnv(t, datasf.Config{})
	url := ts.URL + "/mcp"
	batch := `[{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{}},{"jsonrpc":"2.0","id":11,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}]`

	old := initialize(t, url, "2025-03-26")
	for _, h := range []map[string]string{
		{"Mcp-Session-Id": old},
		{"Mcp-Session-Id": old, "MCP-Protocol-Version": "2025-03-26"},
	} {
		r := rawPost(t, url, h, batch)
		var answers []struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if r.status != http.StatusOK {
			t.Fatalf("batch in a 2025-03-26 session (headers %v) = %d %s; want 200", h, r.status, r.short())
		}
		if err := json.Unmarshal([]byte(r.body), &answers); err != nil {
			t.Fatalf("batch answer %s: %v", r.body, err)
		}
		if len(answers) != 2 || answers[0].ID != 10 || answers[1].ID != 11 || answers[0].Error != nil || !bytes.Contains(answers[0].Result, []byte("query_datasf")) {
			t.Errorf("batch answer = %s; want the answers to ids 10 (tools) and 11 (ping)", r.short())
		}
	}

	newer := initialize(t, url, "2025-06-18")
	r := rawPost(t, url, map[string]string{"Mcp-Session-Id": newer, "MCP-Protocol-Version": "2025-06-18"}, batch)
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(r.body), &e)
	if r.status != http.StatusBadRequest || e.Error.Code != -32600 || !strings.Contains(e.Error.Message, "2025-06-18") {
		t.Errorf("batch in a 2025-06-18 session = %d %s; want 400 with error -32600 naming the version", r.status, r.short())
	}
}

// TestListResultsPerCaller: clients of the official Go SDK (the stateless
// 2026-07-28 protocol by default) and of sessions see only their own
// results in list_results; with bearer tokens, each token its own.
func TestListResultsPerCaller(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		tokens []string
	}{
		{"no tokens", nil},
		{"tokens", []string{"token-a", "token-b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ts := httpEnv(t, datasf.Config{RESTTokens: tc.tokens})
			var listed [2][]string
			var created [2]string
			for i := range 2 {
				hc := &http.Client{}
				if tc.tokens != nil {
					hc.Transport = bearer{token: tc.tokens[i]}
				}
				c := sdk.NewClient(&sdk.Implementation{Name: fmt.Sprintf("gosdk-%d", i), Version: "1"}, nil)
				cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
				if err != nil {
					t.Fatalf("go-sdk client %d: connect: %v", i, err)
				}
				defer cs.Close()
				res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "query_datasf", Arguments: map[string]any{
					"dataset_id": "rqzj-sfat", "soql": fmt.Sprintf("SELECT applicant LIMIT %d", 3+i)}})
				if err != nil || res.IsError {
					t.Fatalf("client %d: query_datasf: %v %+v", i, err, res)
				}
				var q struct {
					Resource struct {
						URL string `json:"url"`
					} `json:"resource"`
				}
				b, _ := json.Marshal(res.StructuredContent)
				_ = json.Unmarshal(b, &q)
				created[i] = q.Resource.URL
				res, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "list_results", Arguments: map[string]any{}})
				if err != nil || res.IsError {
					t.Fatalf("client %d: list_results: %v %+v", i, err, res)
				}
				var l struct {
					Results []struct {
						URL string `json:"url"`
					} `json:"results"`
				}
				b, _ = json.Marshal(res.StructuredContent)
				_ = json.Unmarshal(b, &l)
				for _, r := range l.Results {
					listed[i] = append(listed[i], r.URL)
				}
			}
			for i := range 2 {
				other := created[1-i]
				for _, u := range listed[i] {
					if u == other {
						t.Errorf("client %d's list_results shows client %d's result %s", i, 1-i, u)
					}
				}
				if tc.tokens != nil && (len(listed[i]) != 1 || listed[i][0] != created[i]) {
					t.Errorf("client %d with a token lists %v; want its own result %s", i, listed[i], created[i])
				}
			}
		})
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestListResultsPaging: list_results returns the newest first, a page at
// a time.
func TestListResultsPaging(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	var urls []string
	for i := range 5 {
		res := h.call(t, "query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": fmt.Sprintf("SELECT applicant LIMIT %d", i+1)})
		var q struct {
			Resource struct {
				URL string `json:"url"`
			} `json:"resource"`
		}
		structured(t, "query_datasf", nil, res, &q)
		urls = append(urls, q.Resource.URL)
	}
	type page struct {
		Count      int  `json:"count"`
		Total      int  `json:"total"`
		NextOffset *int `json:"next_offset"`
		Results    []struct {
			URL string `json:"url"`
		} `json:"results"`
	}
	var got []string
	offset := 0
	for range 10 {
		var p page
		args := map[string]any{"limit": 2, "offset": offset}
		structured(t, "list_results", args, h.call(t, "list_results", args), &p)
		if p.Total != 5 {
			t.Fatalf("list_results%v total = %d; want 5", args, p.Total)
		}
		for _, r := range p.Results {
			got = append(got, r.URL)
		}
		if p.NextOffset == nil {
			break
		}
		offset = *p.NextOffset
	}
	want := []string{urls[4], urls[3], urls[2], urls[1], urls[0]}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("list_results pages = %v; want newest first %v", got, want)
	}
	res := h.call(t, "list_results", map[string]any{"limit": 0})
	errorOf(t, "list_results", nil, res)
}
