//go:build e2e

package binary

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// killableStdio starts the binary as Claude Desktop does (MCP on its
// stdin and stdout) with env added, and returns the initialised client
// and the process, for a SIGKILL.
func killableStdio(t *testing.T, env []string, args ...string) (*client.Client, *exec.Cmd, *lockedWriter) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedWriter{w: &strings.Builder{}}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	c := client.NewClient(transport.NewIO(stdout, stdin, nil))
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "stdio-links-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize over stdio: %v", err)
	}
	return c, cmd, logs
}

// TestStdioLinksOutliveTheProcess: a link given by a stdio instance (as in
// one Claude session) still answers, with the same rows, from the next
// instance after the first was killed with SIGKILL: stdio's default store
// is a SQLite file in the user's cache directory, not the process's memory.
func TestStdioLinksOutliveTheProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	cache := t.TempDir()
	addr := freeAddr(t)
	env := []string{"XDG_CACHE_HOME=" + cache, "DATASF_STORE=", "DATASF_EXPIRATION="}
	args := []string{"--offline", "--rest-addr", addr, "--log-level", "info"}

	c, first, logs := killableStdio(t, env, args...)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sc, err := callToolSC(ctx, c, "query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT applicant, status WHERE status = 'APPROVED'"})
	if err != nil {
		t.Fatalf("query_datasf over stdio: %v\n%s", err, logs.w)
	}
	link := sc["resource"].(map[string]any)["url"].(string)
	id := resourceID(t, sc)
	want, status := pages(t, "http://"+addr, id, 50)
	if status != 200 {
		t.Fatalf("the first instance's own link: HTTP %d", status)
	}
	meta := sc["metadata"].(map[string]any)
	expires, _ := time.Parse(time.RFC3339, meta["expires_at"].(string))
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()

	if _, err := os.Stat(filepath.Join(cache, "datasf-mcp", "results.db")); err != nil {
		t.Errorf("stdio's default store is not in the user's cache directory: %v", err)
	}
	_, _, logs2 := killableStdio(t, env, args...)
	got, status := pages(t, "http://"+addr, id, 50)
	if status != 200 {
		t.Fatalf("link %s after the instance that gave it was killed and another started: HTTP %d\n%s", link, status, logs2.w)
	}
	sameRows(t, "the link's rows from the next instance", got, want)
	if life := time.Until(expires); life < 12*time.Hour {
		t.Errorf("a stdio link lives %s unread; want about a day (stdio's default expiration)", life.Round(time.Minute))
	}
	t.Logf("stdio link %s: %d rows from the next instance after SIGKILL of the first; expires %s unread", link, len(got), expires.Format(time.RFC3339))
}
