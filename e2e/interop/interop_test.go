//go:build e2e

// Package interop checks datasf-mcp against an independent MCP client: the
// official TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// interop/package-lock.json), and its viewer in headless Chromium. The
// tests run in interop/ (its Node scripts and node_modules); make test
// installs the packages with `npm ci`.
package interop

import (
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
	cmd.Env = append(os.Environ(), "DATASF_LOG_LEVEL=warn", "DATASF_CACHE_DIR="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node client.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr)
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
