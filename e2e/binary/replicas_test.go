//go:build e2e

package binary

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp/redisstore/redistest"
	"github.com/datasf-mcp/datasf-mcp/e2e/harness"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// countingPortal is the fake portal behind the replicas: socratatest's,
// wrapped to record when each request came and to send large answers (the
// export's pages) slowly, so that an export lasts long enough to kill
// the replica streaming it.
type countingPortal struct {
	next     http.Handler
	mu       sync.Mutex
	arrivals []time.Time
}

func (p *countingPortal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.arrivals = append(p.arrivals, time.Now())
	p.mu.Unlock()
	p.next.ServeHTTP(&slowWriter{ResponseWriter: w}, r)
}

// since returns the arrival times from index i on.
func (p *countingPortal) since(i int) []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.arrivals[i:]...)
}

func (p *countingPortal) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.arrivals)
}

// observedRate is (n-1-burst) requests over the time from the first to the
// last: the rate past the first burst.
func observedRate(arrivals []time.Time, burst int) float64 {
	n := len(arrivals)
	if n <= burst+1 {
		return 0
	}
	return float64(n-1-burst) / arrivals[n-1].Sub(arrivals[0]).Seconds()
}

// slowWriter writes an answer past its first 4 KiB in 4 KiB pieces, 30ms
// apart.
type slowWriter struct {
	http.ResponseWriter
	n int
}

func (w *slowWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		chunk := min(len(p), 4<<10)
		if w.n >= 4<<10 {
			time.Sleep(30 * time.Millisecond)
		}
		n, err := w.ResponseWriter.Write(p[:chunk])
		written += n
		w.n += n
		if err != nil {
			return written, err
		}
		if f, ok := w.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		p = p[chunk:]
	}
	return written, nil
}

func (w *slowWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// replicaRows is the size of the dataset the replicas serve.
const replicaRows = 12_000

func startCountingPortal(t *testing.T) (*countingPortal, string) {
	t.Helper()
	srv, err := socratatest.New(socratatest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	schema := socratatest.Schema{ID: "repl-0001", Name: "Replica Test Permits", Description: "Generated permits for the replicas test",
		Columns: []socratatest.Column{
			{Name: "N", FieldName: "n", DataType: "number"},
			{Name: "Label", FieldName: "label", DataType: "text"},
			{Name: "Status", FieldName: "status", DataType: "text"},
		}}
	if err := srv.AddGenerated(t.Context(), schema, replicaRows, func(i int) map[string]any {
		return map[string]any{"n": i, "label": fmt.Sprintf("permit %05d with a longer label to make the rows wider", i), "status": []string{"OPEN", "CLOSED", "PENDING"}[i%3]}
	}); err != nil {
		t.Fatal(err)
	}
	cp := &countingPortal{next: srv.Handler()}
	ts := httptest.NewServer(cp)
	t.Cleanup(ts.Close)
	return cp, ts.URL
}

// startReplica starts `serve --http` against the fake portal with args
// added, and waits until it is healthy.
func startReplica(t *testing.T, portal string, args ...string) *instance {
	t.Helper()
	addr := freeAddr(t)
	inst := &instance{base: "http://" + addr, stderr: &bytes.Buffer{}}
	all := append([]string{"serve", "--http", addr, "--base-url", portal, "--discovery-url", portal, "--log-level", "info"}, args...)
	inst.cmd = exec.Command(binary(t), all...)
	inst.cmd.Env = append(os.Environ(), "SOCRATA_APP_TOKEN=", "DATASF_DOMAIN=data.sfgov.org")
	inst.cmd.Stderr = &lockedWriter{w: inst.stderr}
	if err := inst.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inst.kill)
	waitHealthy(t, inst.base, func() string { return inst.stderrText() })
	return inst
}

func (i *instance) stderrText() string {
	lw := i.cmd.Stderr.(*lockedWriter)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return i.stderr.String()
}

// waitHealthy waits until base answers GET /healthz with 200.
func waitHealthy(t *testing.T, base string, why func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not healthy within 30s: %v\n%s", base, err, why())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startHAProxy runs deploy/haproxy.cfg with the replicas' addresses and
// returns the balancer's base URL.
func startHAProxy(t *testing.T, listen string, replicas []*instance) string {
	t.Helper()
	bin := harness.HAProxy(t)
	cfg, err := filepath.Abs("../../deploy/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-db", "-f", cfg)
	cmd.Env = append(os.Environ(), "DATASF_LISTEN="+listen)
	for i, r := range replicas {
		cmd.Env = append(cmd.Env, fmt.Sprintf("DATASF_REPLICA_%d=%s", i+1, strings.TrimPrefix(r.base, "http://")))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &lockedWriter{w: &out}, &lockedWriter{w: &out}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	base := "http://" + listen
	waitHealthy(t, base, func() string { return "haproxy: " + out.String() })
	return base
}

// sessionClient is an MCP client of protocol version 2025-06-18: one
// session, started by initialize, carried by every later call.
func sessionClient(t *testing.T, base string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(base + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-06-18"
	init.Params.ClientInfo = mcp.Implementation{Name: "replicas-test", Version: "1"}
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatalf("initialize through the balancer: %v", err)
	}
	return c
}

// callTool calls a tool and returns its structured content, or the error
// text of a failed call.
func callToolSC(ctx context.Context, c *client.Client, tool string, args map[string]any) (map[string]any, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		b, _ := json.Marshal(res.Content)
		return nil, fmt.Errorf("%s: isError: %s", tool, b)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var sc map[string]any
	err = json.Unmarshal(b, &sc)
	return sc, err
}

// statelessCall calls a tool as a client of protocol version 2026-07-28,
// which has no session.
func statelessCall(ctx context.Context, base, tool string, args map[string]any) (map[string]any, error) {
	c, err := client.NewStreamableHttpClient(base + "/mcp")
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "replicas-test-stateless", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, err
	}
	return callToolSC(ctx, c, tool, args)
}

// metric reads one unlabelled value (or the sum of a labelled one) from a
// replica's /metrics.
func metric(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	re := regexp.MustCompile(`^` + name + `(\{[^}]*\})? ([0-9.e+-]+)$`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			sum += v
		}
	}
	return sum
}

// TestReplicasBehindHAProxy is the operator's setup: three replicas of the
// binary sharing one redis-server, HAProxy in front (deploy/haproxy.cfg,
// round robin per request, no stickiness), a fake portal that counts its
// requests. Through the balancer: a session client (2025-06-18) and
// stateless clients (2026-07-28) are all answered; every result link
// answers; the portal sees at most the configured rate of the whole
// service; `datasf-mcp fetch` completes in order after the replica
// streaming the export is killed with SIGKILL; and with Redis stopped,
// the replicas keep to their local shares and say so in the log and in
// /metrics.
func TestReplicasBehindHAProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server, haproxy and three processes")
	}
	const (
		rate     = 10.0 // the service's requests a second to the portal
		replicas = 3
	)
	redis := redistest.StartServer(t)
	portal, portalURL := startCountingPortal(t)
	lbAddr := freeAddr(t)
	var reps []*instance
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range replicas {
		wg.Go(func() {
			r := startReplica(t, portalURL, "--store", "redis://"+redis.Addr+"/0", "--public-url", "http://"+lbAddr,
				"--upstream-rate", strconv.FormatFloat(rate, 'f', -1, 64), "--upstream-concurrency", "4",
				"--replicas", strconv.Itoa(replicas))
			mu.Lock()
			reps = append(reps, r)
			mu.Unlock()
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	lb := startHAProxy(t, lbAddr, reps)
	ctx := t.Context()

	// 1. Session and stateless clients, all answered; every link answers.
	var links []string
	sess := sessionClient(t, lb)
	for i := range 6 {
		sc, err := callToolSC(ctx, sess, "query_datasf", map[string]any{"dataset_id": "repl-0001",
			"soql": fmt.Sprintf("SELECT n, label WHERE n < %d ORDER BY n", 100+i)})
		if err != nil {
			t.Errorf("session client, call %d of 6 through the balancer: %v", i+1, err)
			continue
		}
		links = append(links, sc["resource"].(map[string]any)["url"].(string))
	}
	listed, err := callToolSC(ctx, sess, "list_results", map[string]any{})
	if err != nil {
		t.Errorf("session client, list_results through the balancer: %v", err)
	} else if got := int(listed["total"].(float64)); got != 6 {
		t.Errorf("list_results of the session through the balancer lists %d results; want the 6 it made on whichever replica", got)
	}
	for i := range 6 {
		sc, err := statelessCall(ctx, lb, "query_datasf", map[string]any{"dataset_id": "repl-0001",
			"soql": fmt.Sprintf("SELECT n, status WHERE n >= %d ORDER BY n", 200+i)})
		if err != nil {
			t.Fatalf("stateless client, call %d of 6 through the balancer: %v", i+1, err)
		}
		links = append(links, sc["resource"].(map[string]any)["url"].(string))
	}
	served := 0
	for _, r := range reps {
		if metric(t, r.base, "datasf_tool_calls_total") > 0 {
			served++
		}
	}
	if served < 2 {
		t.Errorf("the balancer sent the tool calls to %d replica(s); want them spread (round robin, no stickiness)", served)
	}
	for _, link := range links {
		if !strings.HasPrefix(link, lb+"/resources/") {
			t.Fatalf("link %s does not point at the balancer %s", link, lb)
		}
		for range replicas { // round robin: each link read on every replica
			resp, err := http.Get(link + "?offset=0&limit=5")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s through the balancer: HTTP %d", link, resp.StatusCode)
			}
		}
	}
	t.Logf("session client 7/7 calls answered, stateless 6/6, %d links x %d reads through the balancer answered, tool calls served by %d replicas",
		len(links), replicas, served)

	// 2. One upstream budget: distinct queries at once from many clients.
	start := portal.count()
	var qwg sync.WaitGroup
	for i := range 15 {
		qwg.Go(func() {
			if _, err := statelessCall(ctx, lb, "query_datasf", map[string]any{"dataset_id": "repl-0001",
				"soql": fmt.Sprintf("SELECT n WHERE n > %d", 1000+i)}); err != nil {
				t.Errorf("query %d at once through the balancer: %v", i, err)
			}
		})
	}
	qwg.Wait()
	arrivals := portal.since(start)
	got := observedRate(arrivals, int(rate))
	t.Logf("15 distinct queries at once: the portal saw %d requests at %.2f/s past the first burst of %d (the service's limit %.0f/s, %d replicas)",
		len(arrivals), got, int(rate), rate, replicas)
	if got > rate*1.25 {
		t.Errorf("the portal saw %.2f requests/s from %d replicas; want at most the service's %.0f/s (+25%%)", got, replicas, rate)
	}

	// 3. An export read by `datasf-mcp fetch` through the balancer
	// survives the death of the replica streaming it.
	t.Run("fetch survives SIGKILL", func(t *testing.T) {
		sc, err := statelessCall(ctx, lb, "query_datasf", map[string]any{"dataset_id": "repl-0001", "soql": "SELECT n, label ORDER BY n"})
		if err != nil {
			t.Fatal(err)
		}
		link := sc["resource"].(map[string]any)["url"].(string)
		out := filepath.Join(t.TempDir(), "all.ndjson")
		fetch := exec.Command(binary(t), "fetch", link, "--format", "ndjson", "-o", out, "--log-level", "info")
		var fetchErr bytes.Buffer
		fetch.Stderr = &lockedWriter{w: &fetchErr}
		if err := fetch.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fetch.Process.Kill() })
		var victim *instance
		for range 3000 { // at most about 30s
			for _, r := range reps {
				if metric(t, r.base, "datasf_exports_started_total") > metric(t, r.base, "datasf_exports_finished_total") {
					victim = r
				}
			}
			// The download goes to all.ndjson.part until it is complete.
			if st, err := os.Stat(out + ".part"); victim != nil && err == nil && st.Size() > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if victim == nil {
			t.Fatalf("no replica was seen streaming the export; fetch: %s", fetchErr.String())
		}
		victim.kill()
		var atKill int64
		if st, err := os.Stat(out + ".part"); err == nil {
			atKill = st.Size()
		} else if st, err := os.Stat(out); err == nil {
			atKill = st.Size() // already complete: the check below says so
		}
		done := make(chan error, 1)
		go func() { done <- fetch.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("datasf-mcp fetch after SIGKILL of the replica streaming it: %v\n%s", err, fetchErr.String())
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("datasf-mcp fetch did not end within 2 minutes after the SIGKILL:\n%s", fetchErr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if atKill >= int64(len(b)) {
			t.Fatalf("the export had written all %d bytes when its replica was killed: the test proves nothing", len(b))
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != replicaRows {
			t.Fatalf("fetch wrote %d rows; want %d", len(lines), replicaRows)
		}
		for i, line := range lines {
			var row struct {
				N json.Number `json:"n"`
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil || row.N.String() != strconv.Itoa(i) {
				t.Fatalf("row %d = %s; want n = %d (every row once, in order)", i, line, i)
			}
		}
		t.Logf("fetch through the balancer: %d rows (%d bytes) in order after SIGKILL of the replica streaming them at byte %d", len(lines), len(b), atKill)
	})

	// 4. Redis stopped: local shares, said in the log and in /metrics.
	redis.Stop()
	start = portal.count()
	var swg sync.WaitGroup
	var answered atomic.Int32
	for i := range 24 {
		swg.Go(func() {
			if _, err := statelessCall(ctx, lb, "search_datasf", map[string]any{"query": fmt.Sprintf("permits %d", i), "limit": 2}); err == nil {
				answered.Add(1)
			}
		})
	}
	swg.Wait()
	arrivals = portal.since(start)
	local := 0
	for _, r := range reps {
		if r.cmd.ProcessState != nil {
			continue // killed above
		}
		if metric(t, r.base, "datasf_upstream_limits_shared") == 0 &&
			strings.Contains(r.stderrText(), "Redis is unreachable; this replica keeps to its local share") {
			local++
		}
	}
	t.Logf("Redis stopped: %d of 24 searches answered; %d live replicas say they keep to their local share (log and datasf_upstream_limits_shared 0); the portal saw %d requests at %.2f/s",
		answered.Load(), local, len(arrivals), observedRate(arrivals, int(rate)))
	if local == 0 {
		t.Errorf("with Redis stopped, no replica says in its log and /metrics that it keeps to its local share")
	}
	if got := observedRate(arrivals, int(rate)); got > rate*1.25 {
		t.Errorf("with Redis stopped the portal saw %.2f requests/s; want at most %.0f/s (+25%%): each replica keeps to 1/%d", got, rate, replicas)
	}
}
