package datasf_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
)

// maxToolListTokens is what tools/list may cost every conversation, in
// Claude tokens (@anthropic-ai/tokenizer, pinned in interop/package-lock.json).
const maxToolListTokens = 1600

// claudeTokens counts text's tokens with the pinned tokenizer (Node). The
// test is skipped without it, and fails in CI, which installs it.
func claudeTokens(t *testing.T, text []byte) int {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "interop", "count_tokens.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("..", "interop", "node_modules", "@anthropic-ai", "tokenizer"))
	}
	if err != nil {
		msg := fmt.Sprintf("skipping: node (Debian package nodejs) and the pinned tokenizer (make test runs npm ci in interop/) are needed: %v", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.CommandContext(t.Context(), node, script)
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v", script, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("node %s printed %q", script, out)
	}
	return n
}

// The tool list a host sends the model with every conversation stays
// within maxToolListTokens, as a client that is not an MCP Apps host
// receives it (app-only tools hidden).
func TestToolListTokens(t *testing.T) {
	t.Parallel()
	env := datasftest.New(t, datasftest.Options{PortalURL: sharedHarness(t).fake.URL()}) // the tool list needs no portal of its own
	res, err := env.MCP.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	n := claudeTokens(t, b)
	t.Logf("tools/list: %d tools, %d bytes, %d tokens (goal <= %d)", len(res.Tools), len(b), n, maxToolListTokens)
	for _, tl := range res.Tools {
		tb, _ := json.Marshal(tl)
		t.Logf("  %-16s %5d bytes", tl.Name, len(tb))
		if os.Getenv("DUMP_TOOLS") != "" {
			t.Logf("%s", tb)
		}
	}
	if n > maxToolListTokens {
		t.Errorf("tools/list costs %d tokens; want at most %d", n, maxToolListTokens)
	}
}
