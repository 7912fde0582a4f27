//go:build e2e

package binary

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp/redisstore/redistest"
	"github.com/datasf-mcp/datasf-mcp/e2e/harness"
)

// These tests run the real binary as separate processes: several instances
// sharing one Redis, and a restart after SIGKILL with the SQLite store.

func TestMain(m *testing.M) {
	// The commands run with --server keep a key in the user's cache
	// directory, and the offline portal of every test, in this process or
	// a child, builds its cache: both in a temporary directory, not the
	// real user's. The go command's build cache stays where it was (it
	// defaults to one in that directory).
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		panic(err)
	}
	os.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	cache, err := os.MkdirTemp("", "datasf-mcp-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	// DATASF_MCP_TEST_CACHE, which make test sets, is an offline cache
	// directory shared by the test processes that run the binary (this
	// package's and cmd/datasf-mcp's TestREADMECommandsRun, at once): the
	// offline portal locks a dataset's file while it builds it, so a
	// second process reuses what the first built.
	os.Setenv("DATASF_CACHE_DIR", cmp.Or(os.Getenv("DATASF_MCP_TEST_CACHE"), filepath.Join(cache, "offline")))
	// Many tests query the offline portal's wg3w-h783 (250,000 rows),
	// which it builds into that cache on first use: built once here
	// (harness.WarmIncidents), not by each test's server at the same time.
	code := harness.Main(m, "e2e/binary", harness.WarmIncidents)
	os.RemoveAll(cache)
	os.Exit(code)
}

func binary(t *testing.T) string {
	t.Helper()
	return harness.Binary(t)
}

// freeAddr returns a loopback address with a port that was free just now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// instance is one running `datasf-mcp serve --http` process.
type instance struct {
	cmd    *exec.Cmd
	base   string
	stderr *bytes.Buffer
}

func startInstance(t *testing.T, args ...string) *instance {
	t.Helper()
	return startInstanceEnv(t, nil, args...)
}

// startInstanceEnv starts `serve --http --offline` with env added to the
// environment and args after the defaults (a repeated flag's last value
// wins), and waits until it is healthy.
func startInstanceEnv(t *testing.T, env []string, args ...string) *instance {
	t.Helper()
	return startServe(t, env, append([]string{"--offline"}, args...)...)
}

// startServe starts `serve --http` with env added to the environment and
// args after the log level, and waits until it is healthy.
func startServe(t *testing.T, env []string, args ...string) *instance {
	t.Helper()
	addr := freeAddr(t)
	inst := &instance{base: "http://" + addr, stderr: &bytes.Buffer{}}
	inst.cmd = exec.Command(binary(t), append([]string{"serve", "--http", addr, "--log-level", "warn"}, args...)...)
	inst.cmd.Env = append(os.Environ(), env...)
	inst.cmd.Stderr = &lockedWriter{w: inst.stderr}
	if err := inst.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.kill() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(inst.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return inst
			}
		}
		if time.Now().After(deadline) || inst.cmd.ProcessState != nil {
			t.Fatalf("instance %s did not become healthy: %v\nstderr: %s", inst.base, err, inst.stderr)
		}
		time.Sleep(50 * time.Millisecond) // polling a child process's readiness, bounded by deadline
	}
}

func (i *instance) kill() {
	if i.cmd.Process != nil && i.cmd.ProcessState == nil {
		_ = i.cmd.Process.Signal(syscall.SIGKILL)
		_ = i.cmd.Wait()
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// query runs query_datasf on the instance over Streamable HTTP and returns
// the structured content.
func (i *instance) query(t *testing.T, datasetID, soql string) map[string]any {
	t.Helper()
	return i.queryWithin(t, 30*time.Second, datasetID, soql)
}

// queryWithin is query with its own bound on the whole exchange.
func (i *instance) queryWithin(t *testing.T, within time.Duration, datasetID, soql string) map[string]any {
	t.Helper()
	res := i.callWithin(t, within, nil, "query_datasf", map[string]any{"dataset_id": datasetID, "soql": soql})
	if res.IsError {
		t.Fatalf("query_datasf on %s: %+v", i.base, res.Content)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var sc map[string]any
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	return sc
}

// callWithin calls tool with args in a new MCP session on the instance,
// over Streamable HTTP with headers added, within a bound on the whole
// exchange.
func (i *instance) callWithin(t *testing.T, within time.Duration, headers map[string]string, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	c, err := client.NewStreamableHttpClient(i.base+"/mcp", transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "process-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize %s: %v", i.base, err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s on %s: %v", tool, i.base, err)
	}
	return res
}

func resourceID(t *testing.T, sc map[string]any) string {
	t.Helper()
	uri, _ := sc["resource"].(map[string]any)["uri"].(string)
	id, ok := strings.CutPrefix(uri, "resource://")
	if !ok || id == "" {
		t.Fatalf("no resource uri in %v", sc["resource"])
	}
	return id
}

// pages reads every row of a result through GET pages of the given size.
func pages(t *testing.T, base, id string, size int) ([]string, int) {
	t.Helper()
	var rows []string
	offset := 0
	for range 10_000 {
		resp, err := http.Get(fmt.Sprintf("%s/resources/%s?offset=%d&limit=%d", base, id, offset, size))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return rows, resp.StatusCode
		}
		var page struct {
			Data       []json.RawMessage `json:"data"`
			HasNext    bool              `json:"has_next"`
			NextOffset int               `json:"next_offset"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatalf("page %s: %v", body, err)
		}
		for _, r := range page.Data {
			rows = append(rows, string(r))
		}
		if !page.HasNext {
			return rows, http.StatusOK
		}
		offset = page.NextOffset
	}
	t.Fatal("too many pages")
	return nil, 0
}

func export(t *testing.T, base, id string) []string {
	t.Helper()
	resp, err := http.Get(base + "/resources/" + id + "/export?format=ndjson")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export from %s: HTTP %d", base, resp.StatusCode)
	}
	var rows []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		rows = append(rows, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func sameRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows; want %d", what, len(got), len(want))
	}
	for i := range got {
		if !jsonEqual(got[i], want[i]) {
			t.Fatalf("%s: row %d = %s; want %s", what, i, got[i], want[i])
		}
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

func TestTwoInstancesShareOneRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and redis-server")
	}
	t.Parallel()
	redisAddr := redistest.Start(t)
	store := "redis://" + redisAddr + "/0"
	a := startInstance(t, "--store", store)
	b := startInstance(t, "--store", store)

	sc := a.query(t, "rqzj-sfat", "SELECT applicant, facilitytype, status WHERE status != 'EXPIRED'")
	id := resourceID(t, sc)
	total := int(sc["metadata"].(map[string]any)["total_count"].(float64))

	fromA, status := pages(t, a.base, id, 37)
	if status != http.StatusOK {
		t.Fatalf("paging on A: HTTP %d", status)
	}
	fromB, status := pages(t, b.base, id, 50)
	if status != http.StatusOK {
		t.Fatalf("paging on B (created on A): HTTP %d\nB stderr: %s", status, b.stderr)
	}
	if len(fromA) != total {
		t.Fatalf("A served %d rows; total_count %d", len(fromA), total)
	}
	sameRows(t, "pages from B vs A", fromB, fromA)
	sameRows(t, "export from B vs pages from A", export(t, b.base, id), fromA)
	t.Logf("two instances, one Redis: result created on A (%d rows) paged and exported through B, identical", total)
}

func TestRestartAfterSIGKILLWithSQLiteStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	db := filepath.Join(t.TempDir(), "results.db")
	store := "sqlite:" + db

	// Phase 1: a result that expires one second after creation.
	p1 := startInstance(t, "--store", store, "--expiration", "1s")
	expired := resourceID(t, p1.query(t, "yitu-d5am", "SELECT title, locations"))
	expiresBy := time.Now().Add(time.Second)
	p1.kill()

	// Phase 2: an unpinned result with a long expiry, and a pinned one.
	p2 := startInstance(t, "--store", store, "--expiration", "1h")
	unpinned := resourceID(t, p2.query(t, "rqzj-sfat", "SELECT applicant, status WHERE facilitytype = 'Truck'"))
	pinned := resourceID(t, p2.query(t, "vw6y-z8j6", "SELECT service_name, count(*) AS n GROUP BY service_name"))
	req, _ := http.NewRequest(http.MethodPut, p2.base+"/resources/"+pinned, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("pin: %v %v", err, resp)
	}
	resp.Body.Close()
	wantUnpinned, _ := pages(t, p2.base, unpinned, 100)
	wantPinned, _ := pages(t, p2.base, pinned, 100)
	p2.kill() // SIGKILL: no clean shutdown

	if d := time.Until(expiresBy); d > 0 {
		time.Sleep(d) // the expiry is wall-clock time in another process
	}
	p3 := startInstance(t, "--store", store, "--expiration", "1h")
	gotUnpinned, status := pages(t, p3.base, unpinned, 100)
	if status != http.StatusOK {
		t.Fatalf("unexpired result after restart: HTTP %d", status)
	}
	sameRows(t, "unpinned result after restart", gotUnpinned, wantUnpinned)
	gotPinned, status := pages(t, p3.base, pinned, 100)
	if status != http.StatusOK {
		t.Fatalf("pinned result after restart: HTTP %d", status)
	}
	sameRows(t, "pinned result after restart", gotPinned, wantPinned)
	if _, status := pages(t, p3.base, expired, 100); status != http.StatusNotFound {
		t.Fatalf("expired result after restart: HTTP %d; want 404", status)
	}
	t.Logf("restart after SIGKILL (SQLite store): unexpired %d rows and pinned %d rows identical; expired result answered 404",
		len(gotUnpinned), len(gotPinned))
}

func TestStdioExitsOnEOFAndServeOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	// stdio mode: closing stdin ends the process cleanly.
	cmd := exec.Command(binary(t), "--offline", "--rest-addr", "127.0.0.1:0", "--log-level", "warn")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stdio mode after stdin EOF: %v\nstderr: %s", err, stderr.String())
		}
		if stdout.Len() != 0 {
			t.Errorf("stdio mode wrote %q to stdout without a request; stdout is the protocol", stdout.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("stdio mode did not exit within 60s of stdin EOF")
	}

	// serve mode: SIGTERM shuts down cleanly (exit status 0).
	inst := startInstance(t)
	if err := inst.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go func() { done <- inst.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v\nstderr: %s", err, inst.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not exit within 30s of SIGTERM")
	}
}

func TestAppTokenNotPrintedByTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	const token = "SECRET-cli-token-51be0e77"
	for _, args := range [][]string{
		{"query", "rqzj-sfat", "SELECT applicant", "--offline", "--log-level", "debug"},
		{"query", "rqzj-sfat", "SELECT nosuch", "--offline", "--log-level", "debug"},
		{"schema", "zzzz-9999", "--offline", "--log-level", "debug"},
		{"--help"},
	} {
		cmd := exec.Command(binary(t), args...)
		cmd.Env = append(os.Environ(), "SOCRATA_APP_TOKEN="+token)
		out, _ := cmd.CombinedOutput()
		if bytes.Contains(out, []byte(token)) {
			t.Errorf("datasf-mcp %q printed the app token:\n%s", args, out)
		}
		if len(out) == 0 {
			t.Errorf("datasf-mcp %q printed nothing; the check proves nothing", args)
		}
	}
}

// The README's three-command path: serve, query --server, fetch the link.
func TestQueryThroughServerThenFetch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	inst := startInstance(t)
	out, err := exec.Command(binary(t), "query", "rqzj-sfat", "SELECT applicant, status WHERE status = 'APPROVED'",
		"--server", inst.base, "--sample-size", "5").Output()
	if err != nil {
		t.Fatalf("query --server: %v\n%s", err, out)
	}
	var sc struct {
		Resource struct{ URL string } `json:"resource"`
		Metadata struct {
			TotalCount int `json:"total_count"`
		} `json:"metadata"`
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(out, &sc); err != nil || sc.Resource.URL == "" {
		t.Fatalf("query --server printed %s (%v)", out, err)
	}
	if len(sc.Results) != 5 {
		t.Errorf("sample has %d rows; want 5 (--sample-size)", len(sc.Results))
	}
	csvPath := filepath.Join(t.TempDir(), "approved.csv")
	if out, err := exec.Command(binary(t), "fetch", sc.Resource.URL, "--format", "csv", "-o", csvPath).CombinedOutput(); err != nil {
		t.Fatalf("fetch: %v\n%s", err, out)
	}
	b, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if lines[0] != "applicant,status" || len(lines)-1 != sc.Metadata.TotalCount {
		t.Errorf("fetched CSV has header %q and %d rows; want applicant,status and total_count %d", lines[0], len(lines)-1, sc.Metadata.TotalCount)
	}
	// -o - is stdout, as for every other command (it used to create a file named -).
	dir := t.TempDir()
	cmd := exec.Command(binary(t), "fetch", sc.Resource.URL, "--format", "csv", "-o", "-")
	cmd.Dir = dir
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("fetch -o -: %v", err)
	}
	if got := strings.Count(string(stdout), "\n") - 1; got != len(lines)-1 {
		t.Errorf("fetch -o - wrote %d rows to stdout; want %d", got, len(lines)-1)
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Error("fetch -o - created a file named -")
	}
	t.Logf("serve → query --server → fetch: %d rows in the CSV = total_count", len(lines)-1)
}
