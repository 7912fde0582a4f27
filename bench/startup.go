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

	"github.com/datasf-mcp/datasf-mcp/internal/localportal/sampledata"
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
// first use; -quick: the smallest), so the cost that start-up no longer pays shows where it went.

// startupSet names the datasets part 5 queries: the one whose first query
// is timed cold and warm, the column its GROUP BY groups by, and the other
// sample datasets queried once each before the RSS figure.
type startupSet struct {
	dataset, groupBy string
	others           []string
	// queried says in the table which datasets the RSS figure queried.
	queried string
}

// fullStartup is the largest sample dataset (police incident reports,
// 250,000 rows made on first use) and the other three.
var fullStartup = startupSet{dataset: "wg3w-h783", groupBy: "incident_category",
	others: []string{"rqzj-sfat", "vw6y-z8j6", "yitu-d5am"}, queried: "each of the four sample datasets"}

// quickStartup is -quick's: the smallest sample dataset (480 food truck
// permits) and the film locations. Building the 250,000 incidents cold
// was most of a quick run's CPU time (20 s of 27 on a 2-core machine),
// which a smoke run of the driver does not need.
var quickStartup = startupSet{dataset: "rqzj-sfat", groupBy: "facilitytype", others: []string{"yitu-d5am"},
	queried: "rqzj-sfat and yitu-d5am"}

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
	exportQuery, csvRows, set := "SELECT *", 1_000_000, fullStartup
	if cfg.Quick {
		exportQuery, csvRows, set = "SELECT * LIMIT 20000", 20_000, quickStartup
	}
	rep.exportQuery, rep.csvRows, rep.startup = exportQuery, csvRows, set
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
		// Cold: an empty cache directory, as on the very first start.
		cache, err := os.MkdirTemp(dir, "cache-")
		if err != nil {
			return err
		}
		m, err := runOffline(ctx, exe, cache, set, false, "")
		if err != nil {
			return err
		}
		rep.add("startup.ready.ms", float64(m.ready)/1e6)
		rep.add("startup.rss", float64(m.rss))
		rep.add("startup.search.ms", float64(m.search)/1e6)
		rep.add("startup.query.ms", float64(m.query)/1e6)
		rep.add("startup.query.rss", float64(m.queryRSS))
		// Warm: the next start, on the cache the cold one built.
		w, err := runOffline(ctx, exe, cache, set, true, exportQuery)
		if err != nil {
			return err
		}
		rep.add("startup.warm.ready.ms", float64(w.ready)/1e6)
		rep.add("startup.warm.query.ms", float64(w.query)/1e6)
		rep.add("startup.warm.query.rss", float64(w.queryRSS))
		rep.add("startup.warm.groupby.ms", float64(w.groupBy)/1e6)
		rep.add("startup.warm.all.rss", float64(w.allRSS))
		rep.add("startup.export.peak", float64(w.exportPeak))
		rep.add("startup.export.idle", float64(w.idleRSS))
		rep.add("startup.export.rows", float64(w.exportRows))
		os.RemoveAll(cache) //nolint:errcheck // inside dir, removed at the end anyway
		if run == 0 || !cfg.Quick {
			csvDir, err := os.MkdirTemp(dir, "csv-")
			if err != nil {
				return err
			}
			load, warm, peak, err := loadCSV(ctx, exe, csvDir, csvRows)
			if err != nil {
				return err
			}
			os.RemoveAll(csvDir) //nolint:errcheck // inside dir, removed at the end anyway
			rep.add("startup.csv.load.ms", float64(load)/1e6)
			rep.add("startup.csv.peak", float64(peak))
			rep.add("startup.csv.warm.ms", float64(warm)/1e6)
		}
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
	// Warm starts only (measureWarm).
	groupBy                     time.Duration
	allRSS, exportPeak, idleRSS int64
	exportRows                  int64
}

// runOffline starts `datasf-mcp serve --http ADDR --offline` (MCP at /mcp
// and /healthz on a free loopback port) and measures it; the process is
// stopped before returning.
func runOffline(ctx context.Context, exe, cacheDir string, set startupSet, full bool, exportQuery string) (offlineRun, error) {
	var m offlineRun
	port, err := freePort()
	if err != nil {
		return m, err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	// The cold start's first query builds the 250,000 rows: on a loaded
	// machine that took longer than the default upstream timeout (30 s),
	// which then failed the run rather than measure it. The figure is
	// the time it takes, whatever the timeout.
	cmd := exec.Command(exe, "serve", "--http", strings.TrimPrefix(base, "http://"), "--offline", "--log-level", "warn", "--cache-dir", cacheDir,
		"--upstream-timeout", "4m")
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
		"arguments": map[string]any{"dataset_id": set.dataset, "soql": "SELECT count(*) AS n"}}); err != nil {
		return m, fmt.Errorf("query_datasf: %w", err)
	}
	m.query = time.Since(t)
	if mem, err := readMem(cmd.Process.Pid); err == nil {
		m.queryRSS = mem.RSS
	}
	if !full {
		return m, nil
	}
	return m, measureWarm(ctx, rpc, cmd.Process.Pid, set, exportQuery, &m)
}

// measureWarm measures, on a server that has answered its first query: a
// warm GROUP BY over set's dataset, RSS after a query on each of the
// others, and the peak and idle RSS around two full CSV exports of
// exportQuery's result.
func measureWarm(ctx context.Context, rpc *httpRPC, pid int, set startupSet, exportQuery string, m *offlineRun) error {
	id := 10
	call := func(dataset, soql string) (json.RawMessage, error) {
		id++
		return rpc.call(ctx, id, "tools/call", map[string]any{"name": "query_datasf",
			"arguments": map[string]any{"dataset_id": dataset, "soql": soql, "sample_size": 5}})
	}
	groupBy := fmt.Sprintf("SELECT %[1]s, count(*) AS n GROUP BY %[1]s ORDER BY n DESC", set.groupBy)
	if _, err := call(set.dataset, groupBy); err != nil { // the first of its shape
		return fmt.Errorf("query_datasf GROUP BY: %w", err)
	}
	t := time.Now()
	if _, err := call(set.dataset, groupBy); err != nil {
		return fmt.Errorf("query_datasf GROUP BY: %w", err)
	}
	m.groupBy = time.Since(t)
	for _, ds := range set.others {
		if _, err := call(ds, "SELECT count(*) AS n"); err != nil {
			return fmt.Errorf("query_datasf on %s: %w", ds, err)
		}
	}
	if mem, err := readMem(pid); err == nil {
		m.allRSS = mem.RSS
	}
	res, err := call(set.dataset, exportQuery)
	if err != nil {
		return fmt.Errorf("query_datasf %q: %w", exportQuery, err)
	}
	var out struct {
		StructuredContent struct {
			Resource struct {
				URL string `json:"url"`
			} `json:"resource"`
			Metadata struct {
				TotalCount int64 `json:"total_count"`
			} `json:"metadata"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &out); err != nil || out.StructuredContent.Resource.URL == "" {
		return fmt.Errorf("query_datasf %q: no resource URL in %.300s", exportQuery, res)
	}
	m.exportRows = out.StructuredContent.Metadata.TotalCount
	// The peak: VmHWM since the counter was reset (clear_refs 5), and
	// VmRSS sampled during the exports where the reset is not allowed.
	reset := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
	stop := make(chan struct{})
	sampled := make(chan int64)
	go func() {
		var peak int64
		for {
			if mem, err := readMem(pid); err == nil {
				peak = max(peak, mem.RSS)
			}
			select {
			case <-stop:
				sampled <- peak
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	for range 2 {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, out.StructuredContent.Resource.URL+"/export?format=csv", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("export: HTTP %d: %v", resp.StatusCode, err)
		}
	}
	close(stop)
	m.exportPeak = <-sampled
	if mem, err := readMem(pid); err == nil && reset {
		m.exportPeak = max(m.exportPeak, mem.HWM)
	}
	// Idle: the server has had time to give the burst back (its memory
	// releaser checks every 2 s).
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(6 * time.Second):
	}
	if mem, err := readMem(pid); err == nil {
		m.idleRSS = mem.RSS
	}
	return nil
}

// loadCSV measures the load of a generated export of n rows with --data
// (strict: the server answers once it has loaded): the time to ready and
// the peak RSS; then a second start on the same cache, ready and the first
// GROUP BY.
func loadCSV(ctx context.Context, exe, dir string, n int) (load, warmQuery time.Duration, peak int64, err error) {
	csvPath := filepath.Join(dir, "Bench_Incidents.csv")
	f, err := os.Create(csvPath)
	if err != nil {
		return 0, 0, 0, err
	}
	if err := sampledata.WriteIncidentsCSV(f, n); err != nil {
		f.Close()
		return 0, 0, 0, err
	}
	if err := f.Close(); err != nil {
		return 0, 0, 0, err
	}
	cache := filepath.Join(dir, "cache-csv")
	for run := range 2 {
		port, err := freePort()
		if err != nil {
			return 0, 0, 0, err
		}
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		cmd := exec.Command(exe, "serve", "--http", strings.TrimPrefix(base, "http://"), "--offline", "--log-level", "info",
			"--cache-dir", cache, "--data", "bnch-0001="+csvPath, "--data-strict")
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return 0, 0, 0, err
		}
		wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		err = waitHealthy(wctx, base+"/healthz")
		cancel()
		took := time.Since(start)
		if err == nil && run == 0 {
			load = took
			if mem, merr := readMem(cmd.Process.Pid); merr == nil {
				peak = mem.HWM
			}
		}
		if err == nil && run == 1 {
			rpc := &httpRPC{url: base + "/mcp", client: &http.Client{Timeout: 5 * time.Minute}}
			if _, err = rpc.call(ctx, 1, "initialize", map[string]any{"protocolVersion": "2025-06-18",
				"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}}); err == nil {
				t := time.Now()
				_, err = rpc.call(ctx, 2, "tools/call", map[string]any{"name": "query_datasf", "arguments": map[string]any{
					"dataset_id": "bnch-0001", "soql": "SELECT incident_category, count(*) AS n GROUP BY incident_category ORDER BY n DESC"}})
				warmQuery = time.Since(t)
			}
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // stderr is complete after Wait
		if err == nil && run == 1 && !strings.Contains(stderr.String(), "cache=reused") {
			err = fmt.Errorf("the second start did not reuse the cache: %s", stderr.String())
		}
		if err != nil {
			return 0, 0, 0, fmt.Errorf("--data %d rows: %w", n, err)
		}
	}
	return load, warmQuery, peak, nil
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
	const mb = 1 << 20
	fig := "`--offline` start to ready (/healthz 200 and MCP initialize answered; baseline: `--help` runs to exit)"
	rows := []row{
		{section: p5, figure: fig, ours: ms(ready), base: ms(help), ratio: times(ready / help), goal: "< 1,000 ms",
			status: r.judge(fig, ready < 1000, fmt.Sprintf("%.0f ms", ready))},
		{section: p5, figure: "`--offline` RSS when ready (baseline: `--help` peak RSS)", ours: mib(rss), base: mib(helpRSS), ratio: times(rss / helpRSS)},
		{section: p5, figure: "first search_datasf after ready (catalog only, no rows)", ours: ms(r.med("startup.search.ms"))},
	}
	cold, warm := r.med("startup.query.ms"), r.med("startup.warm.query.ms")
	fig = fmt.Sprintf("first query_datasf count(*) on %s, cold: empty cache directory (its rows are made and cached; baseline: warm)", r.startup.dataset)
	rows = append(rows, row{section: p5, figure: fig, ours: ms(cold), base: ms(warm), ratio: times(cold / warm), goal: "≤ 4,000 ms",
		status: r.judge(fig, cold <= 4000, ms(cold))})
	fig = fmt.Sprintf("first query_datasf count(*) on %s, warm: the next start, on the cache", r.startup.dataset)
	rows = append(rows, row{section: p5, figure: fig, ours: ms(warm), goal: "≤ 1,000 ms", status: r.judge(fig, warm <= 1000, ms(warm))})
	q, wq := r.med("startup.query.rss"), r.med("startup.warm.query.rss")
	fig = "RSS after the first query, cold (baseline: warm)"
	rows = append(rows, row{section: p5, figure: fig, ours: mib(q), base: mib(wq), goal: "≤ 120 MiB", status: r.judge(fig, q <= 120*mb, mib(q))})
	fig = "RSS after the first query, warm"
	rows = append(rows, row{section: p5, figure: fig, ours: mib(wq), goal: "≤ 120 MiB", status: r.judge(fig, wq <= 120*mb, mib(wq))})
	g := r.med("startup.warm.groupby.ms")
	fig = fmt.Sprintf("query_datasf GROUP BY %s over %s, warm (count + sample)", r.startup.groupBy, r.startup.dataset)
	rows = append(rows, row{section: p5, figure: fig, ours: ms(g), goal: "≤ 150 ms", status: r.judge(fig, g <= 150, ms(g))})
	all := r.med("startup.warm.all.rss")
	fig = "RSS after a query on " + r.startup.queried
	rows = append(rows, row{section: p5, figure: fig, ours: mib(all), goal: "≤ 120 MiB", status: r.judge(fig, all <= 120*mb, mib(all))})
	peak, idle := r.med("startup.export.peak"), r.med("startup.export.idle")
	n := group(int(r.med("startup.export.rows")))
	fig = fmt.Sprintf("peak RSS during two full CSV exports of `%s` on %s (%s rows each; baseline: before)", r.exportQuery, r.startup.dataset, n)
	rows = append(rows, row{section: p5, figure: fig, ours: mib(peak), base: mib(all), ratio: times(peak / all), goal: "≤ 200 MiB",
		status: r.judge(fig, peak <= 200*mb, mib(peak))})
	fig = "RSS idle 6 s after the exports"
	rows = append(rows, row{section: p5, figure: fig, ours: mib(idle), goal: "≤ 120 MiB", status: r.judge(fig, idle <= 120*mb, mib(idle))})
	load, csvPeak := r.med("startup.csv.load.ms"), r.med("startup.csv.peak")
	fig = fmt.Sprintf("--data CSV export of %s rows: start to ready, loaded and cached (--data-strict)", group(r.csvRows))
	rows = append(rows, row{section: p5, figure: fig, ours: ms(load), goal: "≤ 30,000 ms", status: r.judge(fig, load <= 30000, ms(load))})
	fig = fmt.Sprintf("--data CSV export of %s rows: peak RSS of that load", group(r.csvRows))
	rows = append(rows, row{section: p5, figure: fig, ours: mib(csvPeak), goal: "≤ 300 MiB", status: r.judge(fig, csvPeak <= 300*mb, mib(csvPeak))})
	cw := r.med("startup.csv.warm.ms")
	fig = fmt.Sprintf("--data CSV export of %s rows: first GROUP BY on the next start (cache reused)", group(r.csvRows))
	rows = append(rows, row{section: p5, figure: fig, ours: ms(cw), goal: "≤ 1,000 ms", status: r.judge(fig, cw <= 1000, ms(cw))})
	return rows
}
