package datasf_test

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/internal/mcphttp"
)

// servedMCP serves the product with Serve (its real listener, timeouts and
// all) and returns the URL of /mcp.
func servedMCP(t *testing.T, cfg datasf.Config) string {
	t.Helper()
	cfg.StreamableHTTP = true
	env := datasftest.New(t, datasftest.Options{Config: cfg})
	return env.RESTURL() + "/mcp"
}

func initializeBody(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, id)
}

// TestSessionsApart: a batch of initialize requests starts no session (the
// transport forbids initialize in a batch), a client past its bound of
// sessions is refused rather than ending anyone's, and another client (token)
// keeps its session and can still start one. The failure this guards against: two batches of 5,000
// initialize ended every other session.
func TestSessionsApart(t *testing.T) {
	t.Parallel()
	url := servedMCP(t, datasf.Config{RESTTokens: []string{"token-a-0123456789", "token-b-0123456789"},
		MaxSessions: 20, MaxSessionsPerClient: 3})
	a := map[string]string{"Authorization": "Bearer token-a-0123456789"}
	b := map[string]string{"Authorization": "Bearer token-b-0123456789"}
	init := rawPost(t, url, a, initializeBody(1))
	if init.status != http.StatusOK || init.session == "" {
		t.Fatalf("token A initialize = %d %s", init.status, init.short())
	}
	aSession := map[string]string{"Authorization": a["Authorization"], "Mcp-Session-Id": init.session, "MCP-Protocol-Version": "2025-03-26"}

	var batch []string
	for i := range 50 {
		batch = append(batch, initializeBody(i))
	}
	if r := rawPost(t, url, b, "["+strings.Join(batch, ",")+"]"); r.status != http.StatusBadRequest || r.session != "" || !strings.Contains(r.body, "-32600") {
		t.Errorf("a batch of 50 initialize = %d, session %q, %s; want 400 -32600 and no session", r.status, r.session, r.short())
	}
	var refused rpc
	for i := range 30 {
		refused = rawPost(t, url, b, initializeBody(i))
		if refused.status != http.StatusOK {
			break
		}
	}
	if refused.status != http.StatusTooManyRequests || !strings.Contains(refused.body, "too_many_sessions") {
		t.Errorf("token B's 4th initialize with a bound of 3 = %d %s; want 429 too_many_sessions", refused.status, refused.short())
	}
	if r := rawPost(t, url, aSession, toolsList); r.status != http.StatusOK || !strings.Contains(r.body, "query_datasf") {
		t.Errorf("token A's session after token B's burst: tools/list = %d %s; want 200", r.status, r.short())
	}
	if r := rawPost(t, url, a, initializeBody(2)); r.status != http.StatusOK || r.session == "" {
		t.Errorf("token A's second initialize after token B's burst = %d %s; want 200 and a session", r.status, r.short())
	}
}

// TestEventStreamsNeedSessions: GET /mcp opens no stream, and starts no
// session, without a live session id, and the streams a client holds open
// are bounded. The failure this guards against: 500 session-less GET /mcp streams were all held.
func TestEventStreamsNeedSessions(t *testing.T) {
	t.Parallel()
	url := servedMCP(t, datasf.Config{MaxEventStreamsPerClient: 2})
	get := func(session string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if resp := get(""); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("GET /mcp without a session = %d (session %q); want 400 and none", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
	}
	if resp := get("mcp-session-" + strings.Repeat("cd", 16)); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /mcp with a never-issued session = %d; want 404", resp.StatusCode)
	}
	sid := initialize(t, url, "2025-03-26")
	for i := range 2 {
		if resp := get(sid); resp.StatusCode != http.StatusOK {
			t.Fatalf("event stream %d of 2 = %d; want 200", i+1, resp.StatusCode)
		}
	}
	if resp := get(sid); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a 3rd event stream with a bound of 2 = %d; want 429", resp.StatusCode)
	}
}

// TestSlowConnectionsCut: a body sent a byte at a time is cut off once the
// body read timeout passes, and an idle keep-alive connection is closed.
// The failure this guards against: neither was closed after 30 s.
func TestSlowConnectionsCut(t *testing.T) {
	t.Parallel()
	url := servedMCP(t, datasf.Config{BodyReadTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond})
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")

	t.Run("slow body", func(t *testing.T) {
		t.Parallel()
		conn := dialRaw(t, addr)
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", addr)
		// The client sends nothing more: the server must give up on the
		// body and close the connection (the read ends with EOF).
		if err := readUntilClosed(conn, conn); err != nil {
			t.Errorf("a body stalled after 1 of 1000 bytes: %v; want the connection closed", err)
		}
	})
	t.Run("idle keep-alive", func(t *testing.T) {
		t.Parallel()
		conn := dialRaw(t, addr)
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err := readUntilClosed(br, conn); err != nil {
			t.Errorf("an idle keep-alive connection: %v; want it closed", err)
		}
	})
}

func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := (&net.Dialer{}).DialContext(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// readUntilClosed reads what the server sends until it closes the
// connection; an error if it is still open after 20 s (a bound, far above
// the timeouts under test, so the test cannot hang).
func readUntilClosed(r io.Reader, conn net.Conn) error {
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := io.Copy(io.Discard, r)
	if err == nil || isReset(err) {
		return nil // EOF or reset: closed
	}
	return err
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "reset by peer")
}

// mcpCaller is an MCP client over Streamable HTTP (the go-sdk's, on the
// stateless protocol), with a bearer token, or without one and with a
// client key (the command line's way to say who it is).
func mcpCaller(t *testing.T, url, token string) *sdk.ClientSession {
	t.Helper()
	return mcpCallerFrom(t, url, token, "127.0.0.1")
}

// mcpCallerFrom is mcpCaller connecting from the loopback address ip (such
// as 127.0.0.2): another address is another identity when there are no
// tokens.
func mcpCallerFrom(t *testing.T, url, token, ip string) *sdk.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: clientKey{key: rand.Text(), next: transportFrom(ip)}}
	if token != "" {
		hc.Transport = bearer{token: token}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "tenant", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type clientKey struct {
	key  string
	next http.RoundTripper
}

func (c clientKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(mcphttp.ClientKeyHeader, c.key)
	return c.next.RoundTrip(r)
}

// transportFrom returns a transport whose connections come from the
// loopback address ip.
func transportFrom(ip string) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext
	return tr
}

// storeResult calls query_datasf and returns the result's link.
func storeResult(t *testing.T, cs *sdk.ClientSession, limit int) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "query_datasf", Arguments: map[string]any{
		"dataset_id": "rqzj-sfat", "soql": fmt.Sprintf("SELECT applicant LIMIT %d", limit)}})
	if err != nil || res.IsError {
		t.Fatalf("query_datasf: %v %+v", err, res)
	}
	var q struct {
		Resource struct {
			URL string `json:"url"`
		} `json:"resource"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &q)
	if q.Resource.URL == "" {
		t.Fatalf("query_datasf returned no link: %s", b)
	}
	return q.Resource.URL
}

// restStatus sends method to a result's link and returns the status.
func restStatus(t *testing.T, method, url, token string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestStoredResultsApart: an owner storing more results than the store
// holds evicts its own, never another owner's, with tokens and without
// (each address is an identity then, its client keys labels inside it). The failure this guards against: token B storing 10,000
// results evicted token A's.
func TestStoredResultsApart(t *testing.T) {
	t.Parallel()
	for _, tokens := range [][]string{{"token-a-0123456789", "token-b-0123456789"}, nil} {
		t.Run(fmt.Sprintf("tokens=%d", len(tokens)), func(t *testing.T) {
			t.Parallel()
			url := servedMCP(t, datasf.Config{RESTTokens: tokens, MaxResources: 12})
			tokenA, tokenB := "", ""
			if tokens != nil {
				tokenA, tokenB = tokens[0], tokens[1]
			}
			a, b := mcpCaller(t, url, tokenA), mcpCallerFrom(t, url, tokenB, "127.0.0.2")
			kept := storeResult(t, a, 1)
			var bs []string
			for i := range 20 {
				bs = append(bs, storeResult(t, b, 2+i))
			}
			if got := restStatus(t, http.MethodGet, kept, tokenA); got != http.StatusOK {
				t.Errorf("A's result after B stored 20 into a store of 12: GET = %d; want 200", got)
			}
			if got := restStatus(t, http.MethodGet, bs[0], tokenB); got != http.StatusNotFound {
				t.Errorf("B's oldest result after B stored 20 into a store of 12: GET = %d; want 404 (evicted)", got)
			}
			if got := restStatus(t, http.MethodGet, bs[19], tokenB); got != http.StatusOK {
				t.Errorf("B's newest result: GET = %d; want 200", got)
			}
		})
	}
}

// TestPinsApart: without tokens, one client (its address) pinning up to
// the quota leaves the other clients theirs; another client key from the
// same address shares that address's quota. The failure this guards against: one anonymous client
// pinning 100 results made every other anonymous client's pin 409
// pin_quota_exceeded; and a new client key per pin must not multiply the
// quota.
func TestPinsApart(t *testing.T) {
	t.Parallel()
	url := servedMCP(t, datasf.Config{MaxPinnedPerOwner: 2})
	a, b := mcpCaller(t, url, ""), mcpCallerFrom(t, url, "", "127.0.0.2")
	if got := restStatus(t, http.MethodPut, storeResult(t, mcpCaller(t, url, ""), 5), ""); got != http.StatusOK {
		t.Fatalf("client A's first pin under another key = %d; want 200", got)
	}
	if got := restStatus(t, http.MethodPut, storeResult(t, a, 1), ""); got != http.StatusOK {
		t.Fatalf("client A's pin 2 of 2 = %d; want 200", got)
	}
	if got := restStatus(t, http.MethodPut, storeResult(t, a, 3), ""); got != http.StatusConflict {
		t.Errorf("client A's 3rd pin with a quota of 2 = %d; want 409", got)
	}
	if got := restStatus(t, http.MethodPut, storeResult(t, mcpCaller(t, url, ""), 6), ""); got != http.StatusConflict {
		t.Errorf("a 3rd pin from client A's address under a new key = %d; want 409", got)
	}
	if got := restStatus(t, http.MethodPut, storeResult(t, b, 4), ""); got != http.StatusOK {
		t.Errorf("client B's first pin after client A used its quota = %d; want 200", got)
	}
}

// analyze_results tells a model what failed in our words: not SQLite's
// internal messages ("Expression tree is too large (maximum depth 1000)")
// nor Go package paths ("analyze: SQL error: …").
func TestAnalyzeErrorsInOurWords(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	var q struct {
		Resource struct {
			URI string `json:"uri"`
		} `json:"resource"`
	}
	structured(t, "query_datasf", nil, h.call(t, "query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT applicant LIMIT 5"}), &q)
	for _, tc := range []struct{ sql, want string }{
		{"SELECT " + strings.Repeat("1+", 1500) + "1 AS n FROM t", "nested too deeply"},
		{"SELECT no_such_column FROM t", "no such column"},
	} {
		args := map[string]any{"sql": tc.sql, "results": map[string]any{"t": q.Resource.URI}}
		e := errorOf(t, "analyze_results", nil, h.call(t, "analyze_results", args))
		for _, leak := range []string{"analyze:", "Expression tree", "dualresp:"} {
			if strings.Contains(e.Error, leak) {
				t.Errorf("analyze_results(%.60s) = %q; want no %q in it", tc.sql, e.Error, leak)
			}
		}
		if !strings.Contains(e.Error, tc.want) {
			t.Errorf("analyze_results(%.60s) = %q; want it to say %q", tc.sql, e.Error, tc.want)
		}
	}
}
