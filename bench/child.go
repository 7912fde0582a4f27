package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
	"github.com/datasf-mcp/datasf-mcp/internal/localportal/sampledata"
	"github.com/datasf-mcp/datasf-mcp/schemacache"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// The bench binary re-executes itself for the server sides it measures. The
// child's role and arguments travel in the environment (not in flags) so that
// the test binary, which owns its flags, can run the same children.
const (
	envChild    = "DATASF_BENCH_CHILD"    // "upstream" or "export"
	envSizes    = "DATASF_BENCH_SIZES"    // upstream: comma-separated row counts
	envUpstream = "DATASF_BENCH_UPSTREAM" // export: the upstream base URL
)

const (
	roleUpstream = "upstream"
	roleExport   = "export"
)

// datasetID is the 4x4 id of the generated dataset with index i.
func datasetID(i int) string { return fmt.Sprintf("bn%02d-rows", i) }

// runChildIfAsked runs the child role named in the environment, if any, and
// reports whether it did. The caller exits with the returned code.
func runChildIfAsked() (code int, ran bool) {
	role := os.Getenv(envChild)
	if role == "" {
		return 0, false
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("child", role)
	ctx, cancel := context.WithCancel(context.Background())
	// The parent closes our stdin to stop us (and so does its death).
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	var err error
	switch role {
	case roleUpstream:
		err = serveUpstream(ctx, log, os.Getenv(envSizes))
	case roleExport:
		err = serveExport(ctx, log, os.Getenv(envUpstream))
	default:
		err = fmt.Errorf("%s must be %q or %q; got %q", envChild, roleUpstream, roleExport, role)
	}
	if err != nil {
		log.Error("bench child failed", "err", err)
		return 1, true
	}
	return 0, true
}

// announce tells the parent where we listen: the first stdout line.
func announce(url string) {
	fmt.Fprintf(os.Stdout, "LISTEN %s\n", url)
}

// serveOn serves h on ln until ctx ends.
func serveOn(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func mountPprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
}

// incidentSchema is the sample data's police incident dataset, renamed for a
// generated dataset of n rows. Its Row function gives row i for any i.
func incidentSchema(id string, n int) (localportal.Schema, func(int) map[string]any) {
	d := sampledata.Datasets(sampledata.Options{Scale: 1e-9})[0]
	schema := localportal.Schema{
		ID:          id,
		Name:        fmt.Sprintf("Police Department Incident Reports (bench, %d rows)", n),
		Description: d.Description,
		Category:    d.Category,
		UpdatedAt:   d.UpdatedAt,
		Columns:     d.Columns,
	}
	return schema, d.Row
}

// parseSizes reads a comma-separated list of positive row counts.
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s must be positive row counts separated by commas; got %q", envSizes, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// upstreamStats is the answer of the upstream child's /bench/stats: what the
// fake Socrata handler did since the last /bench/reset.
type upstreamStats struct {
	// Requests counts the requests to the fake portal (all endpoints, cumulative).
	Requests int `json:"requests"`
	// Calls is the number of handler calls since the reset.
	Calls int `json:"calls"`
	// UnionNS is the wall time during which at least one handler call was
	// running (parallel calls are not counted twice).
	UnionNS int64 `json:"union_ns"`
	// SumNS adds the handler times.
	SumNS int64 `json:"sum_ns"`
}

// timing wraps the fake's handler and records when each call ran.
type timing struct {
	next     http.Handler
	mu       sync.Mutex
	idle     *sync.Cond // signalled when inflight drops to 0
	inflight int
	total    int // calls since start, never reset
	ivs      [][2]time.Time
	delay    time.Duration // added before every call (POST /bench/latency)
}

func newTiming(next http.Handler) *timing {
	t := &timing{next: next}
	t.idle = sync.NewCond(&t.mu)
	return t
}

func (t *timing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t.mu.Lock()
	t.inflight++
	t.total++
	delay := t.delay
	t.mu.Unlock()
	start := time.Now()
	if delay > 0 {
		time.Sleep(delay) // an upstream that answers in delay
	}
	t.next.ServeHTTP(w, r)
	end := time.Now()
	t.mu.Lock()
	t.ivs = append(t.ivs, [2]time.Time{start, end})
	t.inflight--
	if t.inflight == 0 {
		t.idle.Broadcast()
	}
	t.mu.Unlock()
}

// requests is the number of calls since start (reset does not clear it).
func (t *timing) requests() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

func (t *timing) reset() {
	t.mu.Lock()
	t.ivs = t.ivs[:0]
	t.mu.Unlock()
}

// stats waits for the calls in flight (a client can read a whole response
// before its handler returns) and sums up the recorded ones.
func (t *timing) stats() (calls int, union, sum time.Duration) {
	t.mu.Lock()
	for t.inflight > 0 {
		t.idle.Wait()
	}
	ivs := slices.Clone(t.ivs)
	t.mu.Unlock()
	return len(ivs), unionDuration(ivs), sumDuration(ivs)
}

func sumDuration(ivs [][2]time.Time) time.Duration {
	var d time.Duration
	for _, iv := range ivs {
		d += iv[1].Sub(iv[0])
	}
	return d
}

// unionDuration is the length of the union of the intervals.
func unionDuration(ivs [][2]time.Time) time.Duration {
	ivs = slices.Clone(ivs)
	slices.SortFunc(ivs, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
	var total time.Duration
	var cur [2]time.Time
	for i, iv := range ivs {
		switch {
		case i == 0:
			cur = iv
		case !iv[0].After(cur[1]):
			if iv[1].After(cur[1]) {
				cur[1] = iv[1]
			}
		default:
			total += cur[1].Sub(cur[0])
			cur = iv
		}
	}
	if len(ivs) > 0 {
		total += cur[1].Sub(cur[0])
	}
	return total
}

// serveUpstream is the fake Socrata portal holding the generated datasets
// (one per size), with handler timing and pprof.
func serveUpstream(ctx context.Context, log *slog.Logger, sizesArg string) error {
	sizes, err := parseSizes(sizesArg)
	if err != nil {
		return err
	}
	fake, err := localportal.New(localportal.Options{})
	if err != nil {
		return err
	}
	defer fake.Close()
	cost := os.Getenv(envCost)
	var synth *synthetic
	if cost != "" {
		synth = &synthetic{sizes: map[string]int{}}
	}
	for i, n := range sizes {
		start := time.Now()
		schema, row := incidentSchema(datasetID(i), n)
		if synth != nil {
			// Part 6: the portal holds a sample of the rows; the rows of a
			// page are made from it (see synthetic).
			schema, row = numbered(schema, row)
			synth.sizes[schema.ID] = n
			n = min(n, syntheticSample)
		}
		if err := fake.AddGenerated(ctx, schema, n, row); err != nil {
			return fmt.Errorf("generating %d rows: %w", n, err)
		}
		log.Info("generated dataset", "id", schema.ID, "rows", n, "took", time.Since(start).Round(time.Millisecond))
	}
	runtime.GC()
	debug.FreeOSMemory()

	var portal http.Handler = fake.Handler()
	if synth != nil {
		perRequest, perRow, err := parseCost(cost)
		if err != nil {
			return err
		}
		if err := synth.load(portal); err != nil {
			return err
		}
		synth.next = portal
		portal = &costed{next: synth, perRequest: perRequest, perRow: perRow}
	}
	tm := newTiming(portal)
	mux := http.NewServeMux()
	mux.Handle("/", tm)
	mux.HandleFunc("POST /bench/reset", func(w http.ResponseWriter, r *http.Request) {
		tm.reset()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /bench/latency", func(w http.ResponseWriter, r *http.Request) {
		d, err := time.ParseDuration(r.URL.Query().Get("d"))
		if err != nil || d < 0 {
			http.Error(w, "d must be a duration such as 50ms", http.StatusBadRequest)
			return
		}
		tm.mu.Lock()
		tm.delay = d
		tm.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /bench/stats", func(w http.ResponseWriter, r *http.Request) {
		calls, union, sum := tm.stats()
		writeJSONBody(w, upstreamStats{Requests: tm.requests(), Calls: calls, UnionNS: int64(union), SumNS: int64(sum)})
	})
	mountPprof(mux)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	announce("http://" + ln.Addr().String())
	return serveOn(ctx, ln, mux)
}

func writeJSONBody(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// createdResult is the answer of the export child's /bench/query.
type createdResult struct {
	URL        string `json:"url"`
	TotalCount int64  `json:"total_count"`
	Error      string `json:"error,omitempty"`
}

// serveExport is the product's REST side: a socrata client to the upstream,
// the datasf executor and the dualresp REST endpoint, plus the MCP server
// (in-process) so that /bench/query creates results exactly as
// query_datasf does.
func serveExport(ctx context.Context, log *slog.Logger, upstream string) error {
	if upstream == "" {
		return fmt.Errorf("%s is not set", envUpstream)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	st, err := newStack(ctx, upstream, base, exportLimits())
	if err != nil {
		return err
	}
	defer st.Close()
	mux := http.NewServeMux()
	mux.Handle("/resources/", st.results.Handler())
	mux.HandleFunc("POST /bench/query", func(w http.ResponseWriter, r *http.Request) {
		res, err := st.query(r.Context(), r.URL.Query().Get("dataset_id"), r.URL.Query().Get("soql"))
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			writeJSONBody(w, createdResult{Error: err.Error()})
			return
		}
		p := dualresp.Parse(res)
		if p == nil {
			w.WriteHeader(http.StatusInternalServerError)
			writeJSONBody(w, createdResult{Error: "query_datasf result is not a dual response"})
			return
		}
		writeJSONBody(w, createdResult{URL: p.ResourceURL, TotalCount: p.TotalCount})
	})
	mountPprof(mux)
	announce(base)
	return serveOn(ctx, ln, mux)
}

// stack is the product assembled against an upstream portal (datasf.New)
// with an in-process MCP client.
type stack struct {
	svc     *datasf.Service
	results *dualresp.Server
	schemas *schemacache.Cache
	mcp     *client.Client
	closers []func()
}

// newStack assembles the product against upstream, its REST links pointing
// at restBase.
func newStack(ctx context.Context, upstream, restBase string, limits datasf.UpstreamLimits) (st *stack, err error) {
	st = &stack{}
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	st.svc, err = datasf.New(ctx, datasf.Config{
		Socrata:         socrata.Options{BaseURL: upstream, DiscoveryURL: upstream, Timeout: 10 * time.Minute},
		PublicURL:       restBase,
		CleanupInterval: -1,
		MaxResources:    100_000,
		// Parts 1 to 3 measure the server's own overhead over a local fake
		// portal: the politeness limits meant for real portals (5 requests
		// a second by default) would measure their waits instead; part 6
		// keeps them (see exportLimits).
		Upstream: limits,
	})
	if err != nil {
		return st, err
	}
	st.closers = append(st.closers, func() { _ = st.svc.Close() })
	st.results, st.schemas = st.svc.Results(), st.svc.Schemas()
	if st.mcp, err = client.NewInProcessClient(st.svc.MCPServer()); err != nil {
		return st, err
	}
	st.closers = append(st.closers, func() { _ = st.mcp.Close() })
	if err := st.mcp.Start(ctx); err != nil {
		return st, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "datasf-bench", Version: "1"}
	_, err = st.mcp.Initialize(ctx, init)
	return st, err
}

// query calls query_datasf through the MCP session. A tool error (isError)
// is an error here.
func (st *stack) query(ctx context.Context, datasetID, soql string) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = "query_datasf"
	req.Params.Arguments = map[string]any{"dataset_id": datasetID, "soql": soql}
	res, err := st.mcp.CallTool(ctx, req)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		return nil, fmt.Errorf("query_datasf(%s, %q) failed: %s", datasetID, soql, b)
	}
	return res, nil
}

func (st *stack) Close() {
	for i := len(st.closers) - 1; i >= 0; i-- {
		st.closers[i]()
	}
	st.closers = nil
}

// child is a running child process of the bench binary.
type child struct {
	role  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	URL   string
	done  chan error
}

// startChild starts the bench binary in role with the extra environment and
// waits (up to wait) until it announces its URL.
func startChild(role string, env []string, wait time.Duration) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), envChild+"="+role), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{role: role, cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { c.done <- cmd.Wait() }()
	select {
	case line, ok := <-lines:
		url, found := strings.CutPrefix(line, "LISTEN ")
		if !ok || !found {
			c.Stop()
			return nil, fmt.Errorf("bench child %s did not announce its address (got %q)", role, line)
		}
		c.URL = url
		return c, nil
	case <-time.After(wait):
		c.Stop()
		return nil, fmt.Errorf("bench child %s not ready after %v", role, wait)
	}
}

// PID is the child's process id.
func (c *child) PID() int { return c.cmd.Process.Pid }

// Stop closes the child's stdin (it shuts down) and kills it if it has not
// exited within 10 s.
func (c *child) Stop() {
	_ = c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// memStatus holds the memory figures of /proc/PID/status, in bytes.
type memStatus struct {
	RSS, HWM int64
}

// readMem reads VmRSS and VmHWM (peak RSS) of process pid.
func readMem(pid int) (memStatus, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memStatus{}, err
	}
	var m memStatus
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch k {
		case "VmRSS":
			dst = &m.RSS
		case "VmHWM":
			dst = &m.HWM
		default:
			continue
		}
		f := strings.Fields(v)
		if len(f) == 2 && f[1] == "kB" {
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return memStatus{}, fmt.Errorf("/proc/%d/status %s: %w", pid, k, err)
			}
			*dst = n * 1024
		}
	}
	if m.HWM == 0 {
		return m, fmt.Errorf("/proc/%d/status has no VmHWM", pid)
	}
	return m, nil
}
