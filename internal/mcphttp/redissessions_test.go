package mcphttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/redis/go-redis/v9"

	"github.com/datasf-mcp/datasf-mcp/dualresp/redisstore/redistest"
)

// replica starts one replica's /mcp over the given Redis (nil: the
// memory table) and returns its base URL and shutdown.
func replica(t *testing.T, rdb redis.UniversalClient, opts Options) (string, func(context.Context) error) {
	t.Helper()
	mcpServer := server.NewMCPServer("test", "1.0", server.WithToolCapabilities(false))
	mcpServer.AddTool(mcp.NewTool("ping"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("pong"), nil
	})
	opts.Redis = rdb
	h, shutdown := New(opts).Handler(mcpServer, http.NotFoundHandler())
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL, shutdown
}

// post sends one JSON-RPC message of protocol version 2025-06-18 to base's
// /mcp and returns the status, the session id header and the body.
func post(t *testing.T, base, method, session, body string) (status int, sid, text string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, "2025-06-18")
	if session != "" {
		req.Header.Set(server.HeaderKeySessionID, session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get(server.HeaderKeySessionID), string(b)
}

const (
	initializeMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	callMsg       = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping","arguments":{}}}`
)

func initialize(t *testing.T, base string) string {
	t.Helper()
	status, sid, body := post(t, base, http.MethodPost, "", initializeMsg)
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize on %s: %d, session %q: %s", base, status, sid, body)
	}
	return sid
}

// TestRedisSessionsAcrossReplicas: with a shared Redis, a session started
// on one replica is accepted by the others; the per-client bound counts
// the client's sessions on every replica; DELETE on one replica ends the
// session on all; a replica's shutdown (mcp-go's sweep of its own state)
// ends no session the others serve.
func TestRedisSessionsAcrossReplicas(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	newRDB := func() redis.UniversalClient {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { rdb.Close() })
		return rdb
	}
	opts := Options{MaxSessionsPerClient: 3}
	a, shutdownA := replica(t, newRDB(), opts)
	b, _ := replica(t, newRDB(), opts)
	c, _ := replica(t, newRDB(), opts)

	sid := initialize(t, a)
	for _, base := range []string{b, c, a} {
		if status, _, body := post(t, base, http.MethodPost, sid, callMsg); status != http.StatusOK || !strings.Contains(body, "pong") {
			t.Fatalf("tools/call on another replica with the session of the first: %d %s; want 200 pong", status, body)
		}
	}

	// The client (one address) has 1 session; 2 more fit, on any replica.
	initialize(t, b)
	initialize(t, c)
	if status, _, body := post(t, a, http.MethodPost, "", initializeMsg); status != http.StatusTooManyRequests {
		t.Errorf("a 4th initialize of one client over a bound of 3, its sessions spread over 3 replicas: %d %s; want 429", status, body)
	}

	// A replica's shutdown ends its own state, not the shared session.
	if err := shutdownA(t.Context()); err != nil {
		t.Fatal(err)
	}
	if status, _, body := post(t, b, http.MethodPost, sid, callMsg); status != http.StatusOK {
		t.Errorf("tools/call after the replica that started the session shut down: %d %s; want 200", status, body)
	}

	// DELETE on one replica ends the session on every one.
	if status, _, body := post(t, c, http.MethodDelete, sid, ""); status != http.StatusOK {
		t.Fatalf("DELETE /mcp: %d %s", status, body)
	}
	if status, _, _ := post(t, b, http.MethodPost, sid, callMsg); status != http.StatusNotFound {
		t.Errorf("tools/call on another replica after DELETE: %d; want 404", status)
	}
	// Its end made room for a new session of the client.
	initialize(t, b)
}

// TestRedisSessionsIdle: a session unused for the idle timeout ends on
// every replica (its Redis key expires), and no longer counts against its
// client's bound.
func TestRedisSessionsIdle(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	a, _ := replica(t, rdb, Options{SessionIdleTimeout: 150 * time.Millisecond, MaxSessionsPerClient: 1})
	sid := initialize(t, a)
	if status, _, _ := post(t, a, http.MethodPost, "", initializeMsg); status != http.StatusTooManyRequests {
		t.Fatalf("a 2nd initialize of one client over a bound of 1 = %d; want 429", status)
	}
	// Redis's clock ends the session; ask until the client may start
	// another (asking with the session would renew it). Bounded.
	admitted := false
	for range 100 {
		if status, _, _ := post(t, a, http.MethodPost, "", initializeMsg); status == http.StatusOK {
			admitted = true
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !admitted {
		t.Fatal("a client whose one session is idle far past its 150ms timeout still may not start another")
	}
	if status, _, _ := post(t, a, http.MethodPost, sid, callMsg); status != http.StatusNotFound {
		t.Errorf("tools/call with a session idle past its timeout = %d; want 404", status)
	}
}
