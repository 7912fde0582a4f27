//go:build e2e

package binary

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The offline portal's own loopback listener answers only the process that
// started it: not a caller without the server's bearer token (it
// once answered any Host and no token, in token mode too), whatever its Host
// header; the server itself still reads the portal through it.
func TestOfflinePortalListenerClosedToOthers(t *testing.T) {
	t.Parallel()
	inst := startInstanceEnv(t, []string{"DATASF_REST_TOKEN=secret-token-0123456789"}, "--log-level", "info")
	// The portal is ready, and says where, before the server is healthy.
	// The line may still be on its way through the stderr pipe (the
	// catalog's line comes before it): it is looked for until it is there,
	// for at most 10 s.
	lw := inst.cmd.Stderr.(*lockedWriter)
	ready := regexp.MustCompile(`offline portal ready" url=(http://127\.0\.0\.1:\d+)`)
	portal := ""
	for deadline := time.Now().Add(10 * time.Second); portal == "" && time.Now().Before(deadline); {
		lw.mu.Lock()
		logged := inst.stderr.String()
		lw.mu.Unlock()
		if m := ready.FindStringSubmatch(logged); m != nil {
			portal = m[1]
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if portal == "" {
		t.Fatalf("no offline portal URL in the log:\n%s", inst.stderr)
	}
	for _, tc := range []struct{ host, path string }{
		{"", "/resource/wg3w-h783.json?$limit=1"},
		{"data.sfgov.org", "/resource/wg3w-h783.json?$limit=1"},
		{"evil.example", "/api/views/wg3w-h783.json"},
		{"localhost", "/api/catalog/v1?q=police"},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, portal+tc.path, nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		req.Header.Set("Authorization", "Bearer secret-token-0123456789")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || strings.Contains(string(body), "incident") {
			t.Errorf("GET %s (Host %q) on the offline portal's listener = %d %.200s; want 403 and no data", tc.path, tc.host, resp.StatusCode, body)
		}
	}
	// The server still answers through it.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, inst.base+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer secret-token-0123456789")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"query_datasf","arguments":{"dataset_id":"wg3w-h783","soql":"SELECT count(*) AS n"}}}`
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, inst.base+"/mcp", strings.NewReader(call))
	for k, v := range map[string]string{"Authorization": "Bearer secret-token-0123456789", "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"} {
		req.Header.Set(k, v)
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"isError":true`) || !strings.Contains(string(body), "total_count") {
		t.Errorf("query_datasf through the server = %d %.300s; want a result read from the offline portal", resp.StatusCode, body)
	}
}
