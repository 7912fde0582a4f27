package reliability

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// Upstream faults reach the model as isError results of the right type, with
// a message it can act on.
func TestUpstreamFaultsReachTheModelActionably(t *testing.T) {
	t.Parallel()
	st := newStack(t, stackOptions{maxRetries: 1, timeout: 2 * time.Second})
	args := map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT applicant, status"}
	// Warm the schema cache so that every fault hits the query itself.
	if res, _ := st.call(t, "get_schema", map[string]any{"dataset_id": "rqzj-sfat"}); res.IsError {
		t.Fatalf("get_schema: %+v", res.Content)
	}
	tests := []struct {
		name       string
		mode       fault
		n, status  int
		retryAfter string
		latency    time.Duration
		wantType   string
		wantInMsg  string
	}{
		{"429 beyond the retries", faultStatus, 10, 429, "7", 0, "rate_limit", "Wait 7 seconds"},
		{"500", faultStatus, 10, 500, "", 0, "api_error", "HTTP 500"},
		{"502 beyond the retries", faultStatus, 10, 502, "", 0, "api_error", "injected HTTP 502"},
		{"503 beyond the retries", faultStatus, 10, 503, "", 0, "api_error", "injected HTTP 503"},
		{"202 still processing", faultStatus, 10, 202, "", 0, "api_error", "still processing"},
		{"HTML instead of JSON", faultHTML, 10, 0, "", 0, "api_error", "HTML"},
		{"body cut mid-page", faultCut, 10, 0, "", 0, "api_error", ""},
		{"connection reset", faultReset, 10, 0, "", 0, "api_error", ""},
		{"timeout", faultNone, 0, 0, "", 3 * time.Second, "timeout", "did not answer in time"},
	}
	for _, tt := range tests {
		st.proxy.set(tt.mode, tt.n, tt.status, tt.retryAfter)
		st.fake.SetLatency(tt.latency)
		res, raw := st.call(t, "query_datasf", args)
		st.proxy.set(faultNone, 0, 0, "")
		st.fake.SetLatency(0)
		if !res.IsError {
			t.Errorf("%s: query succeeded; want an isError result", tt.name)
			continue
		}
		e := errorOf(t, res)
		if e.ErrorType != tt.wantType {
			t.Errorf("%s: error_type %q; want %q (%s)", tt.name, e.ErrorType, tt.wantType, raw)
		}
		if !strings.Contains(e.Error, tt.wantInMsg) {
			t.Errorf("%s: error %q; want it to say %q", tt.name, e.Error, tt.wantInMsg)
		}
		if e.Code == "" || e.Message != "" {
			t.Errorf("%s: error lacks a code, or says its text twice (error and message): %s", tt.name, raw)
		}
		t.Logf("%-24s -> %s/%s: %s", tt.name, e.ErrorType, e.Code, e.Error)
	}
	// And after the faults, the same call works.
	if res, raw := st.call(t, "query_datasf", args); res.IsError {
		t.Errorf("after the faults: %s", raw)
	}
}

// A 429 with Retry-After is retried after the wait it asks for.
func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	st := newStack(t, stackOptions{maxRetries: 2})
	st.call(t, "get_schema", map[string]any{"dataset_id": "rqzj-sfat"})
	st.proxy.set(faultStatus, 1, 429, "1")
	res, raw := st.call(t, "query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT count(*) AS n"})
	if res.IsError {
		t.Fatalf("query after one 429: %s", raw)
	}
	st.proxy.mu.Lock()
	arrivals := append([]time.Time(nil), st.proxy.arrivals...)
	st.proxy.mu.Unlock()
	if len(arrivals) < 2 {
		t.Fatalf("%d resource requests; want the 429 and its retry", len(arrivals))
	}
	// The first request got the 429; find the gap before the next request.
	gap := arrivals[1].Sub(arrivals[0])
	for _, a := range arrivals[2:] {
		gap = max(gap, a.Sub(arrivals[0]))
	}
	if gap < time.Second {
		t.Errorf("the retry came %v after the 429 with Retry-After: 1; want at least 1s", gap)
	}
	t.Logf("429 with Retry-After: 1 -> retried after %v", gap.Round(time.Millisecond))
}

// A full download through the client's Rows meets transient upstream faults
// mid-way and still delivers every row exactly once.
func TestRowsSurvivesTransientFaultsMidway(t *testing.T) {
	t.Parallel()
	const n = 20_000
	st := newStack(t, stackOptions{maxRetries: -1, generated: n})
	res, raw := st.call(t, "query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT n, label, grp"})
	if res.IsError {
		t.Fatalf("query: %s", raw)
	}
	c, err := dualresp.NewClient(dualresp.ClientOptions{RetryBackoff: time.Millisecond, MaxRetries: 5})
	if err != nil {
		t.Fatal(err)
	}
	parsed := c.Parse(res)
	if parsed == nil || parsed.TotalCount != n {
		t.Fatalf("parsed %+v; want total %d", parsed, n)
	}
	// From now on every 3rd upstream page request fails: 503, reset, cut
	// body in turn. The REST endpoint answers those pages with 502; the
	// client retries them from the last row it delivered.
	st.proxy.faultEvery(3, http.StatusServiceUnavailable, faultStatus, faultReset, faultCut)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	seen := make([]int, n)
	count := 0
	for row, err := range parsed.RowsWith(ctx, dualresp.RowsOptions{PageSize: 700}) {
		if err != nil {
			t.Fatalf("Rows stopped after %d rows: %v", count, err)
		}
		var r struct {
			N json.Number `json:"n"`
		}
		if err := json.Unmarshal(row, &r); err != nil {
			t.Fatal(err)
		}
		i, _ := r.N.Int64()
		seen[i]++
		count++
	}
	st.proxy.set(faultNone, 0, 0, "")
	for i, k := range seen {
		if k != 1 {
			t.Fatalf("row %d delivered %d times; want exactly once", i, k)
		}
	}
	st.proxy.mu.Lock()
	faults := st.proxy.injected
	st.proxy.mu.Unlock()
	if faults < 5 {
		t.Fatalf("only %d faults were injected; the test did not exercise resumption", faults)
	}
	t.Logf("Rows over %d rows with every 3rd upstream request failing (%d faults: 503, reset, cut body): %d rows, each exactly once", n, faults, count)
}
