package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// offlineHTTP serves the product's HTTP handler (offline snapshot) on a
// loopback httptest server.
func offlineHTTP(t *testing.T, cfg config) *httptest.Server {
	t.Helper()
	outer := http.NewServeMux() // the product's handler is added once the URL is known
	ts := httptest.NewServer(outer)
	t.Cleanup(ts.Close)
	cfg.Offline = true
	cfg.Store, cfg.Expiration, cfg.SampleSize, cfg.Domain = "memory", 15*time.Minute, 15, "data.sf.gov"
	cfg.PublicURL = ts.URL
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, err := newService(t.Context(), cfg, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	handler, _ := svc.HTTPHandler()
	outer.Handle("/", handler)
	return ts
}

func mcpQuery(t *testing.T, url string, headers map[string]string) (*mcp.CallToolResult, error) {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url+"/mcp", transport.WithHTTPHeaders(headers))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx := t.Context()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "http-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, err
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "query_datasf"
	req.Params.Arguments = map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT applicant, status"}
	return c.CallTool(ctx, req)
}

// initializeRequest is an MCP initialize POST to base's /mcp.
func initializeRequest(t *testing.T, base string) *http.Request {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return req
}

func TestStreamableHTTPKeepsDNSRebindingProtection(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the offline snapshot")
	}
	t.Parallel()
	ts := offlineHTTP(t, config{})
	for _, tt := range []struct {
		host string
		want int
	}{
		{"evil.example", http.StatusForbidden},
		{"attacker.test:8080", http.StatusForbidden},
	} {
		req := initializeRequest(t, ts.URL)
		req.Host = tt.host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.want {
			t.Errorf("POST /mcp with Host %q = %d; want %d (DNS-rebinding protection)", tt.host, res.StatusCode, tt.want)
		}
	}
	if _, err := mcpQuery(t, ts.URL, nil); err != nil {
		t.Errorf("a loopback client with a loopback Host is refused: %v", err)
	}

	// X-Response-Format picks the text content's format; structuredContent stays.
	for _, format := range []string{"json", "markdown"} {
		res, err := mcpQuery(t, ts.URL, map[string]string{"X-Response-Format": format})
		if err != nil || res.IsError || res.StructuredContent == nil {
			t.Fatalf("query with X-Response-Format %s: %v %+v", format, err, res)
		}
		text := res.Content[0].(mcp.TextContent).Text
		var v map[string]any
		isJSON := json.Unmarshal([]byte(text), &v) == nil && v["metadata"] != nil
		if (format == "json") != isJSON {
			t.Errorf("X-Response-Format %s: text content is JSON = %v: %.120s", format, isJSON, text)
		}
		if format == "markdown" && !strings.Contains(text, "| applicant") {
			t.Errorf("X-Response-Format markdown: no table in %.200s", text)
		}
	}
}

func TestRESTTokensBindResultsToTheirCreator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the offline snapshot")
	}
	t.Parallel()
	const alice, bob = "alice-secret-token-1", "bob-secret-token-2"
	ts := offlineHTTP(t, config{RESTTokens: []string{alice, bob}})

	if _, err := mcpQuery(t, ts.URL, nil); err == nil {
		t.Fatal("MCP without a token succeeded; want 401")
	}
	res, err := mcpQuery(t, ts.URL, map[string]string{"Authorization": "Bearer " + alice})
	if err != nil || res.IsError {
		t.Fatalf("query as alice: %v %+v", err, res)
	}
	parsedURL := res.StructuredContent.(map[string]any)["resource"].(map[string]any)["url"].(string)
	get := func(token string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, parsedURL+"?offset=0&limit=5", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if bytes.Contains(b, []byte(alice)) || bytes.Contains(b, []byte(bob)) {
			t.Errorf("a REST answer contains a token: %s", b)
		}
		return r.StatusCode
	}
	if got := get(alice); got != http.StatusOK {
		t.Errorf("creator GET = %d; want 200", got)
	}
	if got := get(bob); got != http.StatusNotFound {
		t.Errorf("another token's GET = %d; want 404", got)
	}
	if got := get(""); got != http.StatusUnauthorized {
		t.Errorf("GET without a token = %d; want 401", got)
	}
}
