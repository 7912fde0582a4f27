//go:build e2e

package binary

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/datasf"
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
	// The link's base: the address and the link's key (/k/KEY), which the
	// next instance checks with the same secret.
	base, ok := strings.CutSuffix(link, "/resources/"+id)
	if !ok || !strings.HasPrefix(base, "http://"+addr+"/k/") {
		t.Fatalf("link %s is not http://%s/k/KEY/resources/%s", link, addr, id)
	}
	want, status := pages(t, base, id, 50)
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
	got, status := pages(t, base, id, 50)
	if status != 200 {
		t.Fatalf("link %s after the instance that gave it was killed and another started: HTTP %d\n%s", link, status, logs2.w)
	}
	sameRows(t, "the link's rows from the next instance", got, want)
	if life := time.Until(expires); life < 12*time.Hour {
		t.Errorf("a stdio link lives %s unread; want about a day (stdio's default expiration)", life.Round(time.Minute))
	}
	t.Logf("stdio link %s: %d rows from the next instance after SIGKILL of the first; expires %s unread", link, len(got), expires.Format(time.RFC3339))
}

// TestStdioRESTServesOnlyItsLinks: a stdio instance's REST API serves a
// result at the link it handed out (the link's key is a MAC of the id
// under the secret in the user's 0700 cache directory) and to a request
// carrying that secret; a process that knows the id but neither, or shows
// a wrong key, gets the same 404 as for an id that does not exist, and
// cannot delete the result. The failure this guards against (issue 55):
// the REST listener of a stdio instance served any result to any local
// process that knew (or had received, squatting the port) its id.
func TestStdioRESTServesOnlyItsLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	cache := t.TempDir()
	addr := freeAddr(t)
	env := []string{"XDG_CACHE_HOME=" + cache, "DATASF_STORE=", "DATASF_EXPIRATION="}
	c, _, logs := killableStdio(t, env, "--offline", "--rest-addr", addr)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	sc, err := callToolSC(ctx, c, "query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT applicant, status LIMIT 20"})
	if err != nil {
		t.Fatalf("query_datasf over stdio: %v\n%s", err, logs.w)
	}
	link := sc["resource"].(map[string]any)["url"].(string)
	id := resourceID(t, sc)
	secret, err := os.ReadFile(filepath.Join(cache, "datasf-mcp", "store.secret"))
	if err != nil {
		t.Fatal(err)
	}
	get := func(method, url, secret string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if secret != "" {
			req.Header.Set(datasf.StoreSecretHeader, secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(body)
	}
	plain := "http://" + addr + "/resources/" + id
	unknownStatus, unknown := get(http.MethodGet, "http://"+addr+"/resources/"+strings.Repeat("0", 32), "")
	if unknownStatus != http.StatusNotFound {
		t.Fatalf("GET an unknown id: HTTP %d %s; want 404", unknownStatus, unknown)
	}
	wrongKey := "http://" + addr + "/k/" + strings.Repeat("ab", 8) + "/resources/" + id
	for _, tc := range []struct{ method, url, secret string }{
		{http.MethodGet, plain, ""},
		{http.MethodGet, plain + "?offset=0&limit=5", ""},
		{http.MethodGet, plain + "/export?format=ndjson", ""},
		{http.MethodGet, plain + "/view", ""},
		{http.MethodGet, plain, "another-secret-0123456789abcdef0123456789"},
		{http.MethodGet, wrongKey, ""},
		{http.MethodGet, wrongKey + "/export?format=csv", ""},
		{http.MethodDelete, plain, ""},
		{http.MethodDelete, wrongKey, ""},
	} {
		status, body := get(tc.method, tc.url, tc.secret)
		if status != http.StatusNotFound || body != unknown {
			t.Errorf("%s %s without the key or the secret: HTTP %d %q; want 404 %q (as an unknown id)", tc.method, tc.url, status, body, unknown)
		}
	}
	key := strings.TrimSpace(string(secret))
	for _, tc := range []struct {
		url, secret string
		lines       int // of the body: a JSON document is one
	}{
		{link, "", 1},
		{link + "?offset=0&limit=5", "", 1},
		{link + "/export?format=ndjson", "", 20},
		{plain + "?offset=0&limit=5", key, 1},
		{plain + "/export?format=csv", key, 21},
	} {
		status, body := get(http.MethodGet, tc.url, tc.secret)
		if lines := strings.Count(strings.TrimSpace(body), "\n") + 1; status != http.StatusOK || lines != tc.lines || !strings.Contains(body, "status") {
			t.Errorf("GET %s (secret %v): HTTP %d, %d lines %.300s; want 200 and %d lines of the result", tc.url, tc.secret != "", status, lines, body, tc.lines)
		}
	}
	t.Logf("link %s served; %s without key or secret: 404 %s", link, plain, strings.TrimSpace(unknown))
}
