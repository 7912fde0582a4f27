//go:build e2e

package binary

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// defaultRESTAddr is the REST address of a stdio instance without
// --rest-addr (see parseConfig).
const defaultRESTAddr = "127.0.0.1:8765"

// holdDefaultAddr makes sure the default REST address is busy for the
// test: it listens on it, or leaves it to whoever already does.
func holdDefaultAddr(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", defaultRESTAddr)
	if err != nil {
		if !errors.Is(err, syscall.EADDRINUSE) {
			t.Fatalf("holding %s: %v", defaultRESTAddr, err)
		}
		return // already busy: that is what the test needs
	}
	t.Cleanup(func() { ln.Close() })
}

// stdioInstance is a `datasf-mcp --offline` process spoken to over stdio,
// as Claude Desktop or Claude Code run it.
type stdioInstance struct {
	c      *client.Client
	stderr lockedWriter
	buf    bytes.Buffer
}

func startStdio(t *testing.T, args ...string) *stdioInstance {
	t.Helper()
	// Its own cache directory: its own default result store, so that it
	// never gives links on the address of another test's instance.
	env := []string{"DATASF_REST_ADDR=", "XDG_CACHE_HOME=" + t.TempDir()}
	c, err := client.NewStdioMCPClient(binary(t), env, append([]string{"--offline"}, args...)...)
	if err != nil {
		t.Fatalf("starting the stdio instance: %v", err)
	}
	inst := &stdioInstance{c: c}
	inst.stderr.w = &inst.buf
	if r, ok := client.GetStderr(c); ok {
		go func() { _, _ = io.Copy(&inst.stderr, r) }()
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "stdio-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize over stdio: %v\nstderr: %s", err, inst.logs())
	}
	return inst
}

func (s *stdioInstance) logs() string {
	s.stderr.mu.Lock()
	defer s.stderr.mu.Unlock()
	return s.buf.String()
}

// queryURL runs a query and returns the result's resource URL.
func (s *stdioInstance) queryURL(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "query_datasf"
	req.Params.Arguments = map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT applicant, status LIMIT 20"}
	res, err := s.c.CallTool(ctx, req)
	if err != nil || res.IsError {
		t.Fatalf("query_datasf over stdio: %v %+v\nstderr: %s", err, res, s.logs())
	}
	sc, _ := res.StructuredContent.(map[string]any)
	resource, _ := sc["resource"].(map[string]any)
	u, _ := resource["url"].(string)
	if u == "" {
		t.Fatalf("query_datasf result has no resource.url: %+v", res.StructuredContent)
	}
	return u
}

// TestTwoStdioInstances runs two stdio instances at once, as two Claude
// sessions on one machine do, while the default REST address is taken:
// both start, and each one's links carry the port it really listens on.
func TestTwoStdioInstances(t *testing.T) {
	t.Parallel()
	holdDefaultAddr(t)
	var insts [2]*stdioInstance
	var wg sync.WaitGroup
	for i := range insts {
		wg.Go(func() { insts[i] = startStdio(t) })
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	hosts := map[string]bool{}
	for i, inst := range insts {
		link := inst.queryURL(t)
		u, err := url.Parse(link)
		if err != nil {
			t.Fatalf("instance %d: link %q: %v", i, link, err)
		}
		if u.Host == defaultRESTAddr {
			t.Errorf("instance %d: link %s uses the busy default address", i, link)
		}
		hosts[u.Host] = true
		var page struct {
			TotalCount int64 `json:"total_count"`
		}
		getJSONBody(t, link+"?offset=0&limit=5", &page)
		if page.TotalCount != 20 {
			t.Errorf("instance %d: GET %s total_count = %d; want 20", i, link, page.TotalCount)
		}
		if !strings.Contains(inst.logs(), "using a free port") {
			t.Errorf("instance %d: stderr does not say it moved to a free port:\n%s", i, inst.logs())
		}
	}
	if len(hosts) != 2 {
		t.Errorf("the two instances' links share a host: %v", hosts)
	}
}

// TestExplicitBusyRESTAddr: an address the user chose that is busy is a
// clear error, not a silent move.
func TestExplicitBusyRESTAddr(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name string
		args []string
		env  []string
	}{
		{"flag", []string{"--offline", "--rest-addr", addr}, nil},
		{"env", []string{"--offline"}, []string{"DATASF_REST_ADDR=" + addr}},
	} {
		cmd := exec.CommandContext(ctx, binary(t), tc.args...)
		cmd.Env = append(cmd.Environ(), tc.env...)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("%s: busy --rest-addr %s: err = %v; want a non-zero exit\n%s", tc.name, addr, err, out)
			continue
		}
		if !strings.Contains(string(out), "listen on "+addr) || !strings.Contains(string(out), "address already in use") {
			t.Errorf("%s: output does not name the busy address and the reason:\n%s", tc.name, out)
		}
	}
}

// getJSONBody GETs url and decodes its JSON body into v.
func getJSONBody(t *testing.T, url string, v any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// TestBadStore: a store that cannot be opened ends the process with a
// non-zero exit and one line naming the store and the reason (it used to
// panic in Close).
func TestBadStore(t *testing.T) {
	t.Parallel()
	closed := freeAddr(t) // nothing listens there
	for _, tc := range []struct{ store, reason string }{
		{"redis://" + closed + "/0", "connection refused"},
		{"sqlite:/nonexistent/dir/x.db", "unable to open database file"},
		{"postgres://x", "store must be memory, sqlite:PATH or redis://HOST:PORT/DB"},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		cmd := exec.CommandContext(ctx, binary(t), "--offline", "--rest-addr", "127.0.0.1:0", "--store", tc.store)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("--store %s: err = %v; want a non-zero exit\n%s", tc.store, err, out)
			continue
		}
		if strings.Contains(string(out), "panic") {
			t.Errorf("--store %s: panicked:\n%s", tc.store, out)
		}
		var line string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "datasf-mcp: ") {
				line = l
			}
		}
		if !strings.Contains(line, tc.store) || !strings.Contains(line, tc.reason) {
			t.Errorf("--store %s: last error line %q does not name the store and %q\n%s", tc.store, line, tc.reason, out)
		}
	}
}
