//go:build e2e

package binary

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// These tests run the built binary against a fake that plays DataSF as
// the evidence describes it in 2026 (testdata/evidence/live-portals-2026.jsonl):
// the portal moved from data.sfgov.org to data.sf.gov; the old host
// answers 301 to plain reads and a bare nginx 403 to queries; data.sf.gov
// serves the data, counts as strings. The fake's own domain is the
// Discovery API's (api.us.socrata.com): a request that does not name its
// portal in the Host header reaches no portal's data.

const (
	sfOld      = "data.sfgov.org"
	sfNew      = "data.sf.gov"
	sfTrees    = "tkzw-k3nq" // "Street trees tkzw-k3nq is live on data.sf.gov" (evidence live-tkzw-k3nq)
	treesTotal = 40
)

// liveSF starts the fake. A portal cityOld that moved to cityNew (a move
// no table knows, learnt from the portal's answers) serves the same data.
func liveSF(t *testing.T) *socratatest.Server {
	t.Helper()
	fake := socratatest.NewServer(t, socratatest.WithDomain("api.us.socrata.com"))
	for _, d := range []string{sfNew, cityNew} {
		if err := fake.AddDomain(d); err != nil {
			t.Fatal(err)
		}
		if err := fake.AddGenerated(t.Context(), socratatest.Schema{ID: sfTrees, Name: "San Francisco Street Tree Inventory", Domain: d,
			Category: "City Infrastructure",
			Columns: []socratatest.Column{{Name: "Species", FieldName: "qspecies", DataType: "text"},
				{Name: "Site Order", FieldName: "siteorder", DataType: "number"}}}, treesTotal,
			func(i int) map[string]any {
				return map[string]any{"qspecies": []string{"Oak", "Elm", "Plane"}[i%3], "siteorder": i}
			}); err != nil {
			t.Fatal(err)
		}
	}
	for old, now := range map[string]string{sfOld: sfNew, cityOld: cityNew} {
		if err := fake.SetMoved(old, now); err != nil {
			t.Fatal(err)
		}
	}
	return fake
}

const (
	cityOld = "data.oldcity.example"
	cityNew = "data.newcity.example"
)

// fakeArgs are the portal flags that send every request to the fake.
func fakeArgs(fake *socratatest.Server) []string {
	return []string{"--base-url", fake.URL(), "--discovery-url", fake.URL(), "--log-level", "warn"}
}

// cliJSON runs a tool command against the fake with env and decodes its
// JSON answer.
func cliJSON(t *testing.T, fake *socratatest.Server, env []string, args ...string) (map[string]any, string) {
	t.Helper()
	stdout, stderr, err := runEnv(t, env, append(args, fakeArgs(fake)...)...)
	if err != nil {
		t.Fatalf("datasf-mcp %q: %v\nstdout: %s\nstderr: %s", args, err, stdout, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("datasf-mcp %q printed no JSON (%v):\n%s", args, err, stdout)
	}
	return v, stderr
}

func metadataOf(v map[string]any) map[string]any {
	m, _ := v["metadata"].(map[string]any)
	return m
}

// TestMovedPortalThroughTheCLI: the default portal, the old name as the
// tool's domain and as DATASF_DOMAIN, and a move the portal answers.
func TestMovedPortalThroughTheCLI(t *testing.T) {
	t.Parallel()
	fake := liveSF(t)
	const soql = "SELECT qspecies, count(*) AS n GROUP BY qspecies ORDER BY qspecies"

	// The default portal is data.sf.gov, named in every request's Host.
	v, _ := cliJSON(t, fake, nil, "schema", sfTrees)
	if n, _ := v["row_count"].(float64); n != treesTotal {
		t.Errorf("schema %s on the default portal: row_count %v; want %d (%v)", sfTrees, v["row_count"], treesTotal, v)
	}

	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"tool domain", nil, []string{"query", sfTrees, soql, "--domain", sfOld}},
		{"DATASF_DOMAIN", []string{"DATASF_DOMAIN=" + sfOld}, []string{"query", sfTrees, soql}},
	} {
		before := len(fake.Requests())
		v, _ := cliJSON(t, fake, tc.env, tc.args...)
		meta := metadataOf(v)
		if n, _ := meta["total_count"].(float64); n != 3 {
			t.Errorf("%s: total_count %v; want 3", tc.name, meta["total_count"])
		}
		want := "data.sfgov.org has moved to data.sf.gov; this ran there."
		if meta["moved"] != want || !strings.Contains(v["summary"].(string), want) {
			t.Errorf("%s: summary %q, metadata.moved %v; want the line %q", tc.name, v["summary"], meta["moved"], want)
		}
		if u, _ := meta["portal_url"].(string); !strings.HasPrefix(u, "https://data.sf.gov/resource/"+sfTrees+".json?$query=") {
			t.Errorf("%s: portal_url %q; want the query on https://data.sf.gov", tc.name, u)
		}
		// A known move is resolved before anything is sent.
		for _, r := range fake.Requests()[before:] {
			if r.Host != sfNew {
				t.Errorf("%s: a request went to %s %s; want every one to %s", tc.name, r.Host, r.Path, sfNew)
			}
		}
	}

	// A move no table knows: the portal's own 301, followed by the
	// registry and said in the answer.
	v, stderr := cliJSON(t, fake, nil, "query", sfTrees, soql, "--domain", cityOld)
	want := cityOld + " has moved to " + cityNew + "; this ran there."
	if meta := metadataOf(v); meta["moved"] != want || meta["total_count"] != float64(3) {
		t.Errorf("query --domain %s: metadata %v; want total 3 and moved %q\nstderr: %s", cityOld, meta, want, stderr)
	}
	// With an allowlist that does not name the new host: refused, saying why.
	stdout, stderr, err := runEnv(t, nil, append([]string{"query", sfTrees, soql, "--domain", cityOld, "--domains", cityOld}, fakeArgs(fake)...)...)
	if err == nil || !strings.Contains(stdout+stderr, "has moved to "+cityNew+", which this server refuses") {
		t.Errorf("query with an allowlist without %s: %v\n%s%s; want the move refused, named", cityNew, err, stdout, stderr)
	}
}

// TestBurstsStaleAndStringCounts: 425 bursts are retried; a stale
// replica is said; the count comes as a string and is read as a number.
func TestBurstsStaleAndStringCounts(t *testing.T) {
	t.Parallel()
	fake := liveSF(t)
	fake.SetBurst(2, 1)
	fake.SetStale(true)
	v, _ := cliJSON(t, fake, nil, "query", sfTrees, "SELECT qspecies WHERE siteorder < 10", "--domain", sfNew)
	meta := metadataOf(v)
	if meta["total_count"] != float64(10) {
		t.Errorf("total_count %v under 425 bursts; want 10", meta["total_count"])
	}
	hints, _ := json.Marshal(v["hints"])
	if !strings.Contains(string(hints), "stale_data") || !strings.Contains(v["summary"].(string), "out of date") {
		t.Errorf("a stale replica's answer: summary %q, hints %s; want it said", v["summary"], hints)
	}
}

// TestOfflineSaysItsSource: offline answers name the built-in snapshot
// and carry no live portal URL.
func TestOfflineSaysItsSource(t *testing.T) {
	t.Parallel()
	var v map[string]any
	offlineJSON(t, &v, "query", "rqzj-sfat", "SELECT status, count(*) AS n GROUP BY status")
	meta := metadataOf(v)
	if _, ok := meta["portal_url"]; ok {
		t.Errorf("offline metadata has portal_url %v; want none", meta["portal_url"])
	}
	b, _ := json.Marshal(v)
	if !strings.Contains(string(b), "Offline snapshot: made-up rows") || strings.Contains(string(b), "https://data.sf") {
		t.Errorf("offline answer %s; want it to say the rows are the offline snapshot's, made up, and give no live URL", b)
	}
	var sc map[string]any
	offlineJSON(t, &sc, "schema", "rqzj-sfat")
	if !strings.Contains(sc["summary"].(string), "Offline snapshot: made-up rows") {
		t.Errorf("offline schema summary %q; want it to name the snapshot", sc["summary"])
	}
}

// stdioCall starts `datasf-mcp` over stdio against the fake with env and
// calls query_datasf.
func stdioCall(t *testing.T, fake *socratatest.Server, env []string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	c, err := client.NewStdioMCPClient(binary(t), append([]string{"DATASF_REST_ADDR=", "DATASF_OFFLINE="}, env...),
		append([]string{"--rest-addr", freeAddr(t)}, fakeArgs(fake)...)...)
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedWriter
	var buf bytes.Buffer
	logs.w = &buf
	if r, ok := client.GetStderr(c); ok {
		go func() { _, _ = io.Copy(&logs, r) }()
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "moved-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "query_datasf"
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	return res, buf.String()
}

// TestMovedPortalTwoStdioInstances: two stdio servers configured with the
// old name, as two Claude sessions of a user who set it: each answers from
// data.sf.gov, says so, and its link pages the result there.
func TestMovedPortalTwoStdioInstances(t *testing.T) {
	t.Parallel()
	fake := liveSF(t)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			res, logs := stdioCall(t, fake, []string{"DATASF_DOMAIN=" + sfOld},
				map[string]any{"dataset_id": sfTrees, "soql": "SELECT qspecies, siteorder WHERE siteorder < 25"})
			sc, _ := res.StructuredContent.(map[string]any)
			if res.IsError || sc == nil {
				t.Errorf("instance %d: query_datasf = %+v\nstderr: %s", i, res.Content, logs)
				return
			}
			meta := metadataOf(sc)
			if meta["moved"] != "data.sfgov.org has moved to data.sf.gov; this ran there." || meta["total_count"] != float64(25) {
				t.Errorf("instance %d: metadata %v; want total 25 and the move said", i, meta)
			}
			link := sc["resource"].(map[string]any)["url"].(string)
			var page struct {
				TotalCount int64             `json:"total_count"`
				Data       []json.RawMessage `json:"data"`
			}
			getJSONBody(t, link+"?offset=20&limit=10", &page)
			if page.TotalCount != 25 || len(page.Data) != 5 {
				t.Errorf("instance %d: page of %s: total %d, %d rows; want 25 and 5", i, link, page.TotalCount, len(page.Data))
			}
		})
	}
	wg.Wait()
	for _, r := range fake.Requests() {
		if r.Host == sfOld {
			t.Errorf("a request went to the old host: %s %s", r.Method, r.Path)
		}
	}
}

// TestMovedPortalServe: `serve` answers a tool call naming the old host.
func TestMovedPortalServe(t *testing.T) {
	t.Parallel()
	fake := liveSF(t)
	addr := freeAddr(t)
	cmd := exec.Command(binary(t), append([]string{"serve", "--http", addr}, fakeArgs(fake)...)...)
	cmd.Env = append(os.Environ(), "DATASF_OFFLINE=", "DATASF_REST_TOKEN=")
	var stderr lockedWriter
	var buf bytes.Buffer
	stderr.w = &buf
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not become healthy: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling a child process's readiness, bounded by deadline
	}
	c, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "moved-serve", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"get_schema", map[string]any{"dataset_id": sfTrees, "domain": sfOld}, "has moved to data.sf.gov"},
		{"query_datasf", map[string]any{"dataset_id": sfTrees, "soql": "SELECT count(*) AS n", "domain": sfOld}, "has moved to data.sf.gov"},
		{"search_datasf", map[string]any{"query": "tree", "domain": sfOld}, "has moved to data.sf.gov"},
	} {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool.name, tool.args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		if res.IsError || !strings.Contains(string(b), tool.want) {
			t.Errorf("%s over serve: %s; want no error, saying %q\nstderr: %s", tool.name, b, tool.want, stderr.String())
		}
	}
	for _, r := range fake.Requests() {
		if r.Host == sfOld {
			t.Errorf("a request went to the old host: %s %s", r.Method, r.Path)
		}
		if r.Endpoint == "catalog" && r.Query.Get("search_context") != "" && r.Query.Get("search_context") != sfNew {
			t.Errorf("a Discovery request named search_context=%s; want %s", r.Query.Get("search_context"), sfNew)
		}
	}
}

// doctorRun runs `datasf-mcp doctor` against the fake.
func doctorRun(t *testing.T, _ *socratatest.Server, url string, args ...string) (string, int) {
	t.Helper()
	return doctorRunEnv(t, nil, url, args...)
}

// doctorRunEnv runs `datasf-mcp doctor` against the fake at url with env.
func doctorRunEnv(t *testing.T, env []string, url string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary(t), append(append([]string{"doctor"}, args...),
		"--base-url", url, "--discovery-url", url, "--log-level", "error")...)
	cmd.Env = append(append(os.Environ(), "DATASF_OFFLINE=", "SOCRATA_APP_TOKEN=", "DATASF_APP_TOKENS="), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), code
}

// TestDoctor runs doctor against the fake healthy, moved, throttled and
// down: one line a check, exit 0 only when all pass.
func TestDoctor(t *testing.T) {
	t.Parallel()
	fake := liveSF(t)
	lines := func(out string) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				m[f[1]] = f[0]
			}
		}
		return m
	}
	out, code := doctorRun(t, fake, fake.URL(), "--dataset", sfTrees)
	t.Logf("doctor, healthy:\n%s", out)
	got := lines(out)
	for _, name := range []string{"name", "tls", "discovery", "moved", "schema", "query", "count", "token", "limits"} {
		if got[name] == "" || got[name] == "FAIL" {
			t.Errorf("healthy: check %s = %q; want ok or skip\n%s", name, got[name], out)
		}
	}
	if code != 0 || !strings.Contains(out, "rows (sent as string)") {
		t.Errorf("healthy: exit %d; want 0, the count read from a string\n%s", code, out)
	}

	out, code = doctorRun(t, fake, fake.URL(), "--domain", sfOld, "--dataset", sfTrees)
	t.Logf("doctor, moved:\n%s", out)
	if code == 0 || !strings.Contains(out, "FAIL  moved      data.sfgov.org has moved to data.sf.gov") || !strings.Contains(out, "use --domain data.sf.gov") {
		t.Errorf("moved (known): exit %d; want a FAIL moved line with the fix\n%s", code, out)
	}
	out, code = doctorRun(t, fake, fake.URL(), "--domain", cityOld, "--dataset", sfTrees)
	if code == 0 || !strings.Contains(out, cityOld+" answers that it has moved to "+cityNew+" (HTTP 301)") {
		t.Errorf("moved (answered): exit %d; want the 301 named\n%s", code, out)
	}

	badToken := liveSF(t)
	badToken.RequireAppToken("the-right-token")
	out, code = doctorRunEnv(t, []string{"SOCRATA_APP_TOKEN=a-wrong-token"}, badToken.URL(), "--dataset", sfTrees)
	t.Logf("doctor, invalid token:\n%s", out)
	if code == 0 || !strings.Contains(out, "FAIL  token      the portal refused the app token: Invalid app_token specified") || strings.Contains(out, "a-wrong-token") {
		t.Errorf("invalid token: exit %d; want a FAIL token line, the token never printed\n%s", code, out)
	}

	// A portal's own token, keyed by its new name, with the old name
	// given: doctor sends it, as the server does.
	out, _ = doctorRunEnv(t, []string{"DATASF_APP_TOKENS=" + sfNew + "=the-right-token"}, badToken.URL(), "--domain", sfOld, "--dataset", sfTrees)
	if !strings.Contains(out, "ok    token      accepted") {
		t.Errorf("token keyed by the new name, --domain %s: want the token accepted\n%s", sfOld, out)
	}

	throttled := liveSF(t)
	throttled.SetBurst(0, 1)
	out, code = doctorRun(t, throttled, throttled.URL(), "--dataset", sfTrees)
	t.Logf("doctor, throttled:\n%s", out)
	if code == 0 || !strings.Contains(out, "FAIL  limits") || !strings.Contains(out, "HTTP 425") {
		t.Errorf("throttled: exit %d; want a FAIL limits line naming HTTP 425\n%s", code, out)
	}

	down := socratatest.NewServer(t)
	url := down.URL()
	down.Close()
	out, code = doctorRun(t, down, url, "--domain", socrata.DefaultDomain)
	t.Logf("doctor, down:\n%s", out)
	if code == 0 || !strings.Contains(out, "FAIL  discovery") {
		t.Errorf("down: exit %d; want FAIL lines\n%s", code, out)
	}
}

// TestStoredResultFollowsMove: a result stored while its portal was at
// its old host, paged and exported through the binary's REST API after
// the portal moved (a move no table knows: the old host answers 301 to
// the product's queries, SODA3 POSTs sent with an app token): the rows
// come from the new host, the move followed once.
func TestStoredResultFollowsMove(t *testing.T) {
	t.Parallel()
	const from, to = "data.laterold.example", "data.laternew.example"
	fake := liveSF(t)
	for _, d := range []string{from, to} {
		if err := fake.AddDomain(d); err != nil {
			t.Fatal(err)
		}
		if err := fake.AddGenerated(t.Context(), socratatest.Schema{ID: sfTrees, Name: "San Francisco Street Tree Inventory", Domain: d,
			Columns: []socratatest.Column{{Name: "Species", FieldName: "qspecies", DataType: "text"},
				{Name: "Site Order", FieldName: "siteorder", DataType: "number"}}}, treesTotal,
			func(i int) map[string]any {
				return map[string]any{"qspecies": []string{"Oak", "Elm", "Plane"}[i%3], "siteorder": i}
			}); err != nil {
			t.Fatal(err)
		}
	}
	res, logs := stdioCall(t, fake, []string{"DATASF_APP_TOKENS=" + from + "=old-host-token," + to + "=new-host-token"},
		map[string]any{"dataset_id": sfTrees, "soql": "SELECT qspecies, siteorder", "domain": from})
	sc, _ := res.StructuredContent.(map[string]any)
	if res.IsError || sc == nil {
		t.Fatalf("query_datasf on %s = %+v\nstderr: %s", from, res.Content, logs)
	}
	link := sc["resource"].(map[string]any)["url"].(string)
	if err := fake.SetMoved(from, to); err != nil {
		t.Fatal(err)
	}
	before := len(fake.Requests())

	var page struct {
		TotalCount int64             `json:"total_count"`
		Data       []json.RawMessage `json:"data"`
	}
	getJSONBody(t, link+"?offset=30&limit=20", &page)
	if page.TotalCount != treesTotal || len(page.Data) != treesTotal-30 {
		t.Errorf("page 30+ after the move: total %d, %d rows; want %d and %d", page.TotalCount, len(page.Data), treesTotal, treesTotal-30)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, link+"/export?format=ndjson", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("export after the move: %s, %v\n%s", resp.Status, err, body)
	}
	if n := strings.Count(strings.TrimSpace(string(body)), "\n") + 1; n != treesTotal {
		t.Errorf("export after the move: %d rows; want %d", n, treesTotal)
	}
	old, now := 0, 0
	for _, r := range fake.Requests()[before:] {
		switch r.Host {
		case from:
			old++
		case to:
			now++
		}
	}
	if old != 1 || now == 0 {
		t.Errorf("after the move: %d requests to %s, %d to %s; want 1 (answered with the move), then the rest to %s", old, from, now, to, to)
	}
}
