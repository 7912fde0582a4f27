package datasf_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// smallPortal is a fake portal with dataset smal-0001: 50 rows of n.
func smallPortal(t *testing.T) *socratatest.Server {
	t.Helper()
	fake := socratatest.NewServer(t)
	schema := socratatest.Schema{ID: "smal-0001", Name: "Small", Columns: []socratatest.Column{
		{Name: "N", FieldName: "n", DataType: "number"},
	}}
	if err := fake.AddGenerated(t.Context(), schema, 50, func(i int) map[string]any { return map[string]any{"n": i} }); err != nil {
		t.Fatal(err)
	}
	return fake
}

// scrape reads url's /metrics with the bearer token (when not empty) and
// returns the status and the sample lines by name and labels.
func scrape(t *testing.T, base, token string) (int, map[string]float64) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return resp.StatusCode, out
}

// sum adds the samples whose name and labels match re.
func sum(samples map[string]float64, re string) float64 {
	rx := regexp.MustCompile(re)
	var s float64
	for k, v := range samples {
		if rx.MatchString(k) {
			s += v
		}
	}
	return s
}

// callURL runs query_datasf and returns the result's url, or "" for an
// isError result.
func callURL(t *testing.T, env *datasftest.Env, dataset string) string {
	t.Helper()
	res, err := env.Call(t.Context(), "query_datasf", map[string]any{"dataset_id": dataset, "soql": "SELECT n"})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		return ""
	}
	b, _ := json.Marshal(res.StructuredContent)
	var sc struct {
		Resource struct {
			URL string `json:"url"`
		} `json:"resource"`
	}
	_ = json.Unmarshal(b, &sc)
	return sc.Resource.URL
}

// TestMetricsMoveWithCalls scrapes /metrics on the REST listener before and
// after tool calls and an export: the counters move by what was done, and
// with bearer tokens /metrics wants the operator's (MetricsTokens), never a
// tenant's, or any token holder would read every tenant's metrics.
func TestMetricsMoveWithCalls(t *testing.T) {
	t.Parallel()
	const token, operator = "metrics-test-token-1234567890", "metrics-operator-token-0987654321"
	fake := smallPortal(t)
	tokenEnv := datasftest.New(t, datasftest.Options{PortalURL: fake.URL(),
		Config: datasf.Config{RESTTokens: []string{token}, MetricsTokens: []string{operator}}})
	for _, tc := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {token, http.StatusUnauthorized}, {operator, http.StatusOK}} {
		if code, _ := scrape(t, tokenEnv.RESTURL(), tc.token); code != tc.want {
			t.Errorf("GET /metrics with token %q = %d; want %d", tc.token, code, tc.want)
		}
	}
	closed := datasftest.New(t, datasftest.Options{PortalURL: fake.URL(), Config: datasf.Config{RESTTokens: []string{token}}})
	if code, _ := scrape(t, closed.RESTURL(), token); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics with a tenant's token and no operator token = %d; want 401", code)
	}

	// The counters, on a server without tokens (in token mode a result
	// belongs to the token that made it, and this in-process client has
	// none).
	env := datasftest.New(t, datasftest.Options{PortalURL: fake.URL()})
	base := env.RESTURL()
	code, before := scrape(t, base, "")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d; want 200", code)
	}
	url := callURL(t, env, "smal-0001")
	if url == "" {
		t.Fatal("query_datasf failed")
	}
	if callURL(t, env, "nope-0000") != "" {
		t.Fatal("query_datasf on a missing dataset succeeded")
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/export?format=ndjson", nil)
	// Uncompressed: the bytes metric counts the body as sent.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	exported, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export = %d %s; want 200", resp.StatusCode, exported)
	}

	_, after := scrape(t, base, "")
	for _, tc := range []struct {
		series string
		want   float64
	}{
		{`^datasf_tool_calls_total\{outcome="ok",tool="query_datasf"\}$`, 1},
		{`^datasf_tool_calls_total\{outcome="tool_error",tool="query_datasf"\}$`, 1},
		{`^datasf_exports_started_total\{format="ndjson"\}$`, 1},
		{`^datasf_exports_finished_total\{format="ndjson",outcome="completed"\}$`, 1},
		{`^datasf_export_rows_total\{format="ndjson"\}$`, 50},
		{`^datasf_export_bytes_total\{format="ndjson"\}$`, float64(len(exported))},
		{`^datasf_stored_results$`, 1},
	} {
		if got := sum(after, tc.series) - sum(before, tc.series); got != tc.want {
			t.Errorf("%s moved by %g; want %g", tc.series, got, tc.want)
		}
	}
	// Upstream requests: the count, the sample and the export's pages, by
	// portal and status, with their latencies.
	if got := sum(after, `^datasf_upstream_requests_total\{.*status="200"`) - sum(before, `^datasf_upstream_requests_total\{.*status="200"`); got < 3 {
		t.Errorf("datasf_upstream_requests_total{status=200} moved by %g; want at least 3", got)
	}
	if got := sum(after, `^datasf_upstream_request_duration_seconds_count\{`); got < 3 {
		t.Errorf("datasf_upstream_request_duration_seconds_count = %g; want at least 3", got)
	}
}

// TestUpstreamLimitRefusesInTime: with one request in flight allowed per
// portal and a short wait, a page asked for while another holds the slot
// gets 503 with Retry-After, a tool call gets an actionable rate_limit
// isError, both without reaching the portal, and the metrics count the
// waits.
func TestUpstreamLimitRefusesInTime(t *testing.T) {
	t.Parallel()
	fake := smallPortal(t)
	env := datasftest.New(t, datasftest.Options{PortalURL: fake.URL(), Config: datasf.Config{
		// A wait long enough for the first call's own requests, which
		// queue for the one slot, on a busy machine under -race; far
		// shorter than the slot holder's latency below.
		Upstream: datasf.UpstreamLimits{MaxConcurrent: 1, MaxWait: 500 * time.Millisecond},
	}})
	url := callURL(t, env, "smal-0001")
	if url == "" {
		t.Fatal("query_datasf failed")
	}
	fake.SetLatency(3 * time.Second) // the slot holder's request takes this long
	held := fake.RequestCount("")
	var wg sync.WaitGroup
	wg.Go(func() {
		resp, err := http.Get(url + "?offset=0&limit=5")
		if err == nil {
			resp.Body.Close()
		}
	})
	defer wg.Wait()
	for range 500 { // until the holder's request reached the portal
		if fake.RequestCount("") > held {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling the condition above, bounded
	}
	sent := fake.RequestCount("")
	resp, err := http.Get(url + "?offset=5&limit=5")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), `"busy"`) {
		t.Errorf("page while the slot is held = %d, Retry-After %q, %s; want 503 busy with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	res, err := env.Call(t.Context(), "query_datasf", map[string]any{"dataset_id": "smal-0001", "soql": "SELECT n WHERE n > 3"})
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprint(res.Content)
	if !res.IsError || !strings.Contains(text, "rate_limit") || !strings.Contains(text, "retry_after_seconds") {
		t.Errorf("query_datasf while the slot is held: isError %v, %s; want a rate_limit error with retry_after_seconds", res.IsError, text)
	}
	if n := fake.RequestCount(""); n != sent {
		t.Errorf("%d requests reached the portal while the slot was held; want none", n-sent)
	}
	_, samples := scrape(t, env.RESTURL(), "")
	if got := sum(samples, `^datasf_upstream_waits_total\{.*outcome="refused"`); got < 2 {
		t.Errorf("datasf_upstream_waits_total{outcome=refused} = %g; want at least 2", got)
	}
}

// TestMetricsCountEvictions: a result evicted by the memory store's bound
// is counted by reason in datasf_stored_results_evicted_total.
func TestMetricsCountEvictions(t *testing.T) {
	t.Parallel()
	fake := smallPortal(t)
	env := datasftest.New(t, datasftest.Options{PortalURL: fake.URL(), Config: datasf.Config{MaxResources: 2}})
	base := env.RESTURL()
	_, before := scrape(t, base, "")
	for range 3 {
		if callURL(t, env, "smal-0001") == "" {
			t.Fatal("query_datasf failed")
		}
	}
	_, after := scrape(t, base, "")
	series := `^datasf_stored_results_evicted_total\{reason="owner_bound"\}$`
	if got := sum(after, series) - sum(before, series); got != 1 {
		t.Errorf("%s moved by %g after 3 results in a store of 2; want 1 (samples %v)", series, got, after)
	}
	if got := sum(after, `^datasf_stored_results_evicted_total\{reason="store_full"\}$`); got != 0 {
		t.Errorf("store_full evictions = %g; want 0 (one owner)", got)
	}
}
