//go:build e2e

// Package interop checks datasf-mcp against an independent MCP client: the
// official TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// interop/package-lock.json), and its viewer in headless Chromium. The
// tests run in interop/ (its Node scripts and node_modules); make test
// installs the packages with `npm ci`.
package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/e2e/harness"
)

// need fails the test when CI=true and skips it otherwise, in one line
// naming what is missing (`make test` runs `npm ci` in interop/ when npm,
// Debian package npm, is there): harness.Need.
func need(t *testing.T, what string, err error) {
	t.Helper()
	harness.Need(t, what, err)
}

func TestTypeScriptSDKClient(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the interop test in -short mode")
	}
	node := harness.Node(t, "@modelcontextprotocol/sdk")

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	bin := buildBinary(t)

	cmd := exec.CommandContext(ctx, node, "client.mjs", bin, "--offline", "--rest-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "DATASF_LOG_LEVEL=warn", "DATASF_CACHE_DIR="+harness.CacheDir(t))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.Bytes())
	}
	// The server the SDK started got the script's DATASF_* settings (the
	// SDK passes only HOME, PATH and a few others unless given env): at
	// DATASF_LOG_LEVEL=warn it logs no INFO line, among them its start.
	// Without them it built its offline cache in the user's ~/.cache.
	if bytes.Contains(stderr.Bytes(), []byte("level=INFO")) {
		t.Errorf("the server logged at INFO though DATASF_LOG_LEVEL=warn: the SDK did not pass it the environment:\n%s", stderr.Bytes())
	}
	var figures struct {
		Tools      int    `json:"tools"`
		Dataset    string `json:"dataset"`
		TotalCount int    `json:"total_count"`
		Fetched    int    `json:"fetched"`
		Sample     int    `json:"sample"`
	}
	if err := json.Unmarshal(out, &figures); err != nil {
		t.Fatalf("client output %q is not the figures line: %v", out, err)
	}
	if figures.Fetched != figures.TotalCount || figures.TotalCount == 0 {
		t.Errorf("fetched %d rows through resource.url; total_count is %d", figures.Fetched, figures.TotalCount)
	}
	t.Logf("TypeScript SDK interop: %d tools listed, dataset %s, total_count %d, fetched %d rows through resource.url, sample %d",
		figures.Tools, figures.Dataset, figures.TotalCount, figures.Fetched, figures.Sample)
}
