package socrata

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// step is one scripted answer of a flaky server.
type step struct {
	status     int
	retryAfter string
	body       string
}

// scripted answers steps in order, then repeats the last one.
func scripted(steps []step, n *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		s := steps[min(i, len(steps)-1)]
		if s.retryAfter != "" {
			w.Header().Set("Retry-After", s.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-SODA2-Fields", `["n"]`)
		w.Header().Set("X-SODA2-Types", `["number"]`)
		w.WriteHeader(s.status)
		body := s.body
		if body == "" && s.status == 200 {
			body = `[{"n":"1"}]`
		}
		if body == "" {
			body = `{"error":true,"message":"status ` + strconv.Itoa(s.status) + `"}`
		}
		w.Write([]byte(body))
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	ok := step{status: 200}
	httpDate := testNow.Add(5 * time.Second).Format(http.TimeFormat)
	tests := []struct {
		name         string
		opts         Options
		steps        []step
		wantRequests int64
		wantSleeps   []time.Duration
		check        func(t *testing.T, err error)
	}{
		{name: "429 Retry-After seconds", steps: []step{{status: 429, retryAfter: "2"}, ok},
			wantRequests: 2, wantSleeps: []time.Duration{2 * time.Second}},
		{name: "429 Retry-After HTTP date", steps: []step{{status: 429, retryAfter: httpDate}, ok},
			wantRequests: 2, wantSleeps: []time.Duration{5 * time.Second}},
		{name: "503 then 503 then ok: exponential backoff", steps: []step{{status: 503}, {status: 503}, ok},
			wantRequests: 3, wantSleeps: []time.Duration{125 * time.Millisecond, 250 * time.Millisecond}},
		{name: "502 504 202 then ok", steps: []step{{status: 502}, {status: 504}, {status: 202, body: "{}"}, ok},
			wantRequests: 4, wantSleeps: []time.Duration{125 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond}},
		{name: "503 with Retry-After", steps: []step{{status: 503, retryAfter: "3"}, ok},
			wantRequests: 2, wantSleeps: []time.Duration{3 * time.Second}},
		{name: "429 forever: RateLimitError after MaxRetries", steps: []step{{status: 429, retryAfter: "1", body: `{"message":"slow down"}`}},
			wantRequests: 4, wantSleeps: []time.Duration{time.Second, time.Second, time.Second},
			check: func(t *testing.T, err error) {
				var rl *RateLimitError
				if !errors.As(err, &rl) || rl.RetryAfter != time.Second || rl.Message != "slow down" {
					t.Errorf("error = %#v; want *RateLimitError{RetryAfter: 1s, Message: slow down}", err)
				}
			}},
		{name: "MaxRetries 1", opts: Options{MaxRetries: 1}, steps: []step{{status: 503}},
			wantRequests: 2, wantSleeps: []time.Duration{125 * time.Millisecond},
			check: wantAPIStatus(503, "")},
		{name: "negative MaxRetries: none", opts: Options{MaxRetries: -1}, steps: []step{{status: 503}, ok},
			wantRequests: 1, check: wantAPIStatus(503, "")},
		{name: "Retry-After beyond MaxRetryWait: no wait", opts: Options{MaxRetryWait: 3 * time.Second},
			steps: []step{{status: 429, retryAfter: "10"}, ok}, wantRequests: 1,
			check: func(t *testing.T, err error) {
				var rl *RateLimitError
				if !errors.As(err, &rl) || rl.RetryAfter != 10*time.Second {
					t.Errorf("error = %v; want *RateLimitError with RetryAfter 10s", err)
				}
			}},
		{name: "total wait bounded", opts: Options{MaxRetries: 10, MaxRetryWait: 5 * time.Second},
			steps: []step{{status: 429, retryAfter: "2"}}, wantRequests: 3,
			wantSleeps: []time.Duration{2 * time.Second, 2 * time.Second},
			check: func(t *testing.T, err error) {
				var rl *RateLimitError
				if !errors.As(err, &rl) {
					t.Errorf("error = %v; want *RateLimitError", err)
				}
			}},
		{name: "202 forever: still processing", steps: []step{{status: 202, body: "{}"}},
			wantRequests: 4, wantSleeps: []time.Duration{125 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond},
			check: wantAPIStatus(202, "still_processing")},
		{name: "400 is not retried", steps: []step{{status: 400, body: `{"errorCode":"query.compiler.malformed","message":"bad"}`}, ok},
			wantRequests: 1, check: wantAPIStatus(400, "query.compiler.malformed")},
		{name: "404 is not retried", steps: []step{{status: 404, body: `{"code":"dataset.missing","error":true,"message":"Not found"}`}, ok},
			wantRequests: 1, check: func(t *testing.T, err error) {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("error = %v; want ErrNotFound", err)
				}
			}},
		{name: "403 is not retried", steps: []step{{status: 403}, ok}, wantRequests: 1, check: wantAPIStatus(403, "")},
		{name: "500 is not retried", steps: []step{{status: 500}, ok}, wantRequests: 1, check: wantAPIStatus(500, "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var n atomic.Int64
			c, sl, _ := newTestClient(t, scripted(tt.steps, &n), tt.opts)
			res, err := c.Query(t.Context(), "abcd-1234", "SELECT n")
			if tt.check == nil {
				if err != nil {
					t.Fatalf("Query: %v", err)
				}
				if len(res.Rows) != 1 || res.Rows[0]["n"] != "1" {
					t.Errorf("rows = %v; want [{n:1}]", res.Rows)
				}
			} else {
				if err == nil {
					t.Fatal("Query succeeded; want an error")
				}
				tt.check(t, err)
			}
			if got := n.Load(); got != tt.wantRequests {
				t.Errorf("requests = %d; want %d", got, tt.wantRequests)
			}
			if diff := cmp.Diff(tt.wantSleeps, sl.all()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

func wantAPIStatus(status int, code string) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var api *APIError
		if !errors.As(err, &api) || api.StatusCode != status || api.Code != code {
			t.Errorf("error = %#v; want *APIError{StatusCode: %d, Code: %q}", err, status, code)
		}
	}
}

// TestBackoffJitter checks the real jitter stays within each attempt's window.
func TestBackoffJitter(t *testing.T) {
	t.Parallel()
	c := NewClient(Options{})
	for attempt := range 10 {
		hi := min(250*time.Millisecond<<attempt, 8*time.Second)
		seen := map[time.Duration]bool{}
		for range 200 {
			d := c.backoff(attempt)
			if d < hi/2 || d > hi {
				t.Fatalf("backoff(%d) = %v; want in [%v, %v]", attempt, d, hi/2, hi)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("backoff(%d) gave one value 200 times; want jitter", attempt)
		}
	}
}

// TestTransportErrorRetried: a refused connection is retried, then reported
// as a plain error (not a timeout, not an APIError).
func TestTransportErrorRetried(t *testing.T) {
	t.Parallel()
	c, sl, srv := newTestClient(t, http.NotFoundHandler(), Options{MaxRetries: 2})
	srv.Close()
	_, err := c.Query(t.Context(), "abcd-1234", "SELECT 1")
	var api *APIError
	var te *TimeoutError
	if err == nil || errors.As(err, &api) || errors.As(err, &te) {
		t.Fatalf("error = %#v; want a transport error", err)
	}
	if got := len(sl.all()); got != 2 {
		t.Errorf("retries = %d; want 2", got)
	}
}

func TestTimeouts(t *testing.T) {
	t.Parallel()
	block := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

	t.Run("context deadline passed", func(t *testing.T) {
		t.Parallel()
		var n atomic.Int64
		c, _, _ := newTestClient(t, scripted([]step{{status: 200}}, &n), Options{})
		ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
		defer cancel()
		_, err := c.Query(ctx, "abcd-1234", "SELECT 1")
		var te *TimeoutError
		if !errors.As(err, &te) || !te.Timeout() || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error = %#v; want *TimeoutError wrapping context.DeadlineExceeded", err)
		}
		if n.Load() != 0 {
			t.Errorf("requests = %d; want 0", n.Load())
		}
	})
	t.Run("http client timeout", func(t *testing.T) {
		t.Parallel()
		c, sl, _ := newTestClient(t, http.HandlerFunc(block), Options{Timeout: 50 * time.Millisecond})
		_, err := c.Schema(t.Context(), "abcd-1234")
		var te *TimeoutError
		if !errors.As(err, &te) || te.Endpoint != "views" {
			t.Errorf("error = %#v; want *TimeoutError from views", err)
		}
		if len(sl.all()) != 0 {
			t.Errorf("a timeout was retried %d times; want 0", len(sl.all()))
		}
	})
	t.Run("context deadline during request", func(t *testing.T) {
		t.Parallel()
		c, _, _ := newTestClient(t, http.HandlerFunc(block), Options{})
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		_, err := c.Search(ctx, "trees", 5)
		var te *TimeoutError
		if !errors.As(err, &te) || te.Endpoint != "catalog" {
			t.Errorf("error = %#v; want *TimeoutError from catalog", err)
		}
	})
	t.Run("canceled during the retry wait", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		h := func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(429)
		}
		c, _, _ := newTestClient(t, http.HandlerFunc(h), Options{MaxRetryWait: time.Hour})
		slept := false
		c.sleep = func(ctx context.Context, d time.Duration) error {
			slept = true
			cancel()
			return sleepCtx(ctx, d) // the real one: it must return when ctx ends, not after 30s
		}
		_, err := c.Query(ctx, "abcd-1234", "SELECT 1")
		var te *TimeoutError
		if !errors.Is(err, context.Canceled) || errors.As(err, &te) {
			t.Errorf("error = %#v; want context.Canceled, not a timeout", err)
		}
		if !slept {
			t.Error("the client did not wait before retrying")
		}
	})
}

func TestNewClientDefaults(t *testing.T) {
	t.Parallel()
	own := &http.Client{}
	tests := []struct {
		name string
		opts Options
		want func(c *Client) string // "" when fine
	}{
		{"zero value", Options{}, func(c *Client) string {
			if c.Domain() != "data.sf.gov" || c.base != "https://data.sf.gov" || c.discovery != "https://api.us.socrata.com" ||
				c.userAgent != "datasf-mcp/"+Version || c.maxRetries != 3 || c.maxRetryWait != 30*time.Second || c.http.Timeout != 30*time.Second {
				return fmt.Sprintf("%+v", c)
			}
			return ""
		}},
		{"other domain, trailing slashes", Options{Domain: "data.cityofchicago.org", DiscoveryURL: "http://127.0.0.1:9/", BaseURL: "http://127.0.0.1:8/"}, func(c *Client) string {
			if c.Domain() != "data.cityofchicago.org" || c.base != "http://127.0.0.1:8" || c.discovery != "http://127.0.0.1:9" {
				return fmt.Sprintf("%+v", c)
			}
			return ""
		}},
		{"own client copied, following no redirect", Options{HTTPClient: own}, func(c *Client) string {
			if c.http == own || c.http.Transport != own.Transport || c.http.CheckRedirect == nil || own.CheckRedirect != nil {
				return "want a copy of the caller's client, with its transport, following no redirect, the caller's client untouched"
			}
			return ""
		}},
		{"own client with Timeout: a copy", Options{HTTPClient: own, Timeout: time.Second}, func(c *Client) string {
			if c.http == own || c.http.Timeout != time.Second || own.Timeout != 0 {
				return "want a copy with the timeout, the caller's client untouched"
			}
			return ""
		}},
		{"no retries", Options{MaxRetries: -5}, func(c *Client) string {
			if c.maxRetries != 0 {
				return fmt.Sprint("maxRetries = ", c.maxRetries)
			}
			return ""
		}},
	}
	for _, tt := range tests {
		if msg := tt.want(NewClient(tt.opts)); msg != "" {
			t.Errorf("NewClient(%s): %s", tt.name, msg)
		}
	}
}
