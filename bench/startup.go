package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Part 5 measures how fast `datasf-mcp --offline` is ready and how much
// memory it holds then, against `datasf-mcp --help` (the process start and
// flag parsing alone) as the baseline. The binary is built once into a
// temporary directory; each run starts a fresh process.
//
// Ready means both: GET /healthz answers 200 and an MCP initialize request
// posted to /mcp is answered (the server runs as `serve --http --offline`,
// the mode that has both). RSS is VmRSS of /proc/PID/status at that moment. After that, the
// run times one search_datasf call (catalog only: no rows) and one
// query_datasf count on the largest sample dataset (whose rows are made on
// first use), so the cost that start-up no longer pays shows where it went.

// startupDataset is the largest sample dataset (police incident reports).
const startupDataset = "wg3w-h783"

// buildProduct builds cmd/datasf-mcp into dir and returns the binary's path.
func buildProduct(ctx context.Context, dir string) (string, error) {
	exe := filepath.Join(dir, "datasf-mcp")
	// The package path, not ./cmd/...: the bench runs from the module root
	// (make bench) and from bench/ (its tests).
	cmd := exec.CommandContext(ctx, "go", "build", "-o", exe, "github.com/datasf-mcp/datasf-mcp/cmd/datasf-mcp")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build cmd/datasf-mcp: %w", err)
	}
	return exe, nil
}

// startup measures part 5, cfg.Runs times.
func startup(ctx context.Context, cfg config, rep *report) error {
	dir, err := os.MkdirTemp("", "datasf-bench-startup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	exe, err := buildProduct(ctx, dir)
	if err != nil {
		return err
	}
	for run := 0; run < cfg.Runs; run++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		help, helpRSS, err := runHelp(ctx, exe)
		if err != nil {
			return err
		}
		rep.add("startup.help.ms", float64(help)/1e6)
		rep.add("startup.help.rss", float64(helpRSS))
		m, err := runOffline(ctx, exe)
		if err != nil {
			return err
		}
		rep.add("startup.ready.ms", float64(m.ready)/1e6)
		rep.add("startup.rss", float64(m.rss))
		rep.add("startup.search.ms", float64(m.search)/1e6)
		rep.add("startup.query.ms", float64(m.query)/1e6)
		rep.add("startup.query.rss", float64(m.queryRSS))
	}
	return nil
}

// runHelp runs `datasf-mcp --help` and returns its wall time and peak RSS.
func runHelp(ctx context.Context, exe string) (time.Duration, int64, error) {
	cmd := exec.CommandContext(ctx, exe, "--help")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("datasf-mcp --help: %w", err)
	}
	took := time.Since(start)
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss * 1024 // kB on Linux
	}
	return took, rss, nil
}

// offlineRun is one measured start of the offline server.
type offlineRun struct {
	ready, search, query time.Duration
	rss, queryRSS        int64
}

// runOffline starts `datasf-mcp serve --http ADDR --offline` (MCP at /mcp
// and /healthz on a free loopback port) and measures it; the process is
// stopped before returning.
func runOffline(ctx context.Context, exe string) (offlineRun, error) {
	var m offlineRun
	port, err := freePort()
	if err != nil {
		return m, err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.Command(exe, "serve", "--http", strings.TrimPrefix(base, "http://"), "--offline", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return m, err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	if err := waitHealthy(ctx, base+"/healthz"); err != nil {
		return m, err
	}
	rpc := &httpRPC{url: base + "/mcp", client: &http.Client{Timeout: 5 * time.Minute}}
	if _, err := rpc.call(ctx, 1, "initialize", map[string]any{"protocolVersion": "2025-06-18",
		"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}}); err != nil {
		return m, fmt.Errorf("initialize: %w", err)
	}
	m.ready = time.Since(start)
	if mem, err := readMem(cmd.Process.Pid); err == nil {
		m.rss = mem.RSS
	}
	if _, err := rpc.call(ctx, 0, "notifications/initialized", nil); err != nil {
		return m, err
	}
	t := time.Now()
	if _, err := rpc.call(ctx, 2, "tools/call", map[string]any{"name": "search_datasf",
		"arguments": map[string]any{"query": "police incidents"}}); err != nil {
		return m, fmt.Errorf("search_datasf: %w", err)
	}
	m.search = time.Since(t)
	t = time.Now()
	if _, err := rpc.call(ctx, 3, "tools/call", map[string]any{"name": "query_datasf",
		"arguments": map[string]any{"dataset_id": startupDataset, "soql": "SELECT count(*) AS n"}}); err != nil {
		return m, fmt.Errorf("query_datasf: %w", err)
	}
	m.query = time.Since(t)
	if mem, err := readMem(cmd.Process.Pid); err == nil {
		m.queryRSS = mem.RSS
	}
	return m, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitHealthy polls url every 2 ms until it answers 200.
func waitHealthy(ctx context.Context, url string) error {
	client := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never answered 200: %w", url, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// httpRPC speaks JSON-RPC to an MCP Streamable HTTP endpoint.
type httpRPC struct {
	url     string
	client  *http.Client
	session string
}

// call posts a request (id > 0) or a notification (id 0) and returns the
// result; a JSON-RPC error or a tool result with isError is a failure.
func (r *httpRPC) call(ctx context.Context, id int, method string, params any) (json.RawMessage, error) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if id > 0 {
		msg["id"] = id
	}
	if params != nil {
		msg["params"] = params
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if r.session != "" {
		req.Header.Set("Mcp-Session-Id", r.session)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		r.session = s
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s: HTTP %d: %.300s", method, resp.StatusCode, raw)
	}
	if id == 0 {
		return nil, nil
	}
	// The answer is JSON, or an event stream whose data lines hold it.
	payloads := [][]byte{raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		payloads = nil
		for _, line := range bytes.Split(raw, []byte("\n")) {
			if d, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok {
				payloads = append(payloads, bytes.TrimSpace(d))
			}
		}
	}
	for _, p := range payloads {
		var out struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(p, &out) != nil || out.ID != id {
			continue
		}
		if len(out.Error) > 0 && string(out.Error) != "null" {
			return nil, errors.New(string(out.Error))
		}
		if bytes.Contains(out.Result, []byte(`"isError":true`)) {
			return nil, fmt.Errorf("tool error: %.300s", out.Result)
		}
		return out.Result, nil
	}
	return nil, fmt.Errorf("%s: no answer with id %d in %.300s", method, id, raw)
}

// startupRows are the rows of part 5.
func (r *report) startupRows() []row {
	const p5 = "5 start-up"
	ready, help := r.med("startup.ready.ms"), r.med("startup.help.ms")
	rss, helpRSS := r.med("startup.rss"), r.med("startup.help.rss")
	ms := func(v float64) string { return fmt.Sprintf("%.0f ms", v) }
	fig := "`--offline` start to ready (/healthz 200 and MCP initialize answered; baseline: `--help` runs to exit)"
	return []row{
		{section: p5, figure: fig, ours: ms(ready), base: ms(help), ratio: times(ready / help), goal: "< 1,000 ms",
			status: r.judge(fig, ready < 1000, fmt.Sprintf("%.0f ms", ready))},
		{section: p5, figure: "`--offline` RSS when ready (baseline: `--help` peak RSS)", ours: mib(rss), base: mib(helpRSS), ratio: times(rss / helpRSS)},
		{section: p5, figure: "first search_datasf after ready (catalog only, no rows)", ours: ms(r.med("startup.search.ms"))},
		{section: p5, figure: fmt.Sprintf("first query_datasf count(*) on %s (its sample rows are made on first use)", startupDataset),
			ours: ms(r.med("startup.query.ms"))},
		{section: p5, figure: "`--offline` RSS after that query (baseline: when ready)", ours: mib(r.med("startup.query.rss")), base: mib(rss),
			ratio: times(r.med("startup.query.rss") / rss)},
	}
}
