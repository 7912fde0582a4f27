package main

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo"
)

// callSquares calls the tool through an in-process mcp-go client, the
// results' REST API served on loopback.
func callSquares(t *testing.T, n any) *mcp.CallToolResult {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	results, err := newResults("http://" + ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = results.Close() })
	ts.Config.Handler = results.Handler()
	ts.Start()
	t.Cleanup(ts.Close)

	c, err := client.NewInProcessClient(newMCPServer(results))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "squares"
	req.Params.Arguments = map[string]any{"n": n}
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatalf("CallTool = %v", err)
	}
	return res
}

// The tool's answer is a dual response: 5 sample rows, the exact total,
// and every row behind its link.
func TestSquares(t *testing.T) {
	t.Parallel()
	res := callSquares(t, 1234)
	if res.IsError {
		t.Fatalf("CallTool = %+v; want a result", res)
	}
	p := mcpgo.Parse(nil, res)
	if p == nil || p.TotalCount != 1234 || len(p.Sample) != 5 || !p.Truncated {
		t.Fatalf("Parse = %+v; want 5 sample rows of 1234", p)
	}
	rows, err := p.FetchAll(t.Context(), dualresp.FetchAllOptions{})
	if err != nil || len(rows) != 1234 {
		t.Fatalf("FetchAll = %d rows, %v; want 1234", len(rows), err)
	}
	var last struct{ I, Square int64 }
	if err := json.Unmarshal(rows[1233], &last); err != nil || last.I != 1233 || last.Square != 1233*1233 {
		t.Errorf("last row = %s (%v); want i 1233, square %d", rows[1233], err, 1233*1233)
	}
}

// Too many rows is an error result naming the bound.
func TestSquaresBound(t *testing.T) {
	t.Parallel()
	res := callSquares(t, maxRows+1)
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := mcp.AsTextContent(res.Content[0]); ok {
			text = tc.Text
		}
	}
	if !res.IsError || !strings.Contains(text, "1000000") {
		t.Errorf("squares(n=%d) = IsError %v, %q; want an error naming the bound %d", maxRows+1, res.IsError, text, maxRows)
	}
}
