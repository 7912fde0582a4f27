package portal

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/datasf-mcp/datasf-mcp/dualresp/redisstore/redistest"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// upstream is a fake portal that records when each request came and how
// many were in flight at most.
type upstream struct {
	mu          sync.Mutex
	arrivals    []time.Time
	inFlight    int
	maxInFlight int
	hold        time.Duration
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.arrivals = append(u.arrivals, time.Now())
	u.inFlight++
	u.maxInFlight = max(u.maxInFlight, u.inFlight)
	u.mu.Unlock()
	time.Sleep(u.hold) // a slow portal, so that requests overlap
	u.mu.Lock()
	u.inFlight--
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`[{"n":"1"}]`))
}

// rate returns the requests a second the portal saw after the first burst
// requests: (n-burst) / (last - first).
func (u *upstream) rate(burst int) (perSecond float64, n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	n = len(u.arrivals)
	if n <= burst+1 {
		return 0, n
	}
	span := u.arrivals[n-1].Sub(u.arrivals[0]).Seconds()
	return float64(n-1-burst) / span, n
}

// replicaClient is the portal client one replica makes with limits.
func replicaClient(t *testing.T, url string, limits Limits) *socrata.Client {
	t.Helper()
	opts := socrata.Options{Domain: "data.example.org", BaseURL: url, MaxRetries: -1}
	limits.Apply(&opts)
	return socrata.NewClient(opts)
}

// queryAll sends n queries through each client at once and waits for them.
func queryAll(t *testing.T, clients []*socrata.Client, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for _, c := range clients {
		for range n {
			wg.Go(func() {
				if _, err := c.Query(t.Context(), "abcd-1234", "SELECT n"); err != nil {
					t.Errorf("query: %v", err)
				}
			})
		}
	}
	wg.Wait()
}

// TestSharedBudget: two replicas sharing a Redis ask the portal for at
// most the configured rate and concurrency of the whole service, not
// twice them; with Redis stopped, each keeps to its share (the limits
// divided by Replicas), says so in the log and through Shared, and never
// sends without limit.
func TestSharedBudget(t *testing.T) {
	t.Parallel()
	const (
		rate        = 20.0
		concurrency = 2
		perReplica  = 20 // queries each replica sends at once
	)
	srv := redistest.StartServer(t)
	up := &upstream{hold: 20 * time.Millisecond}
	portal := httptest.NewServer(up)
	t.Cleanup(portal.Close)

	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(p)
	}), nil))
	var clients []*socrata.Client
	var budgets []*SharedBudget
	for range 2 {
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: time.Second})
		t.Cleanup(func() { rdb.Close() })
		b := NewSharedBudget(SharedBudgetOptions{Client: rdb, Logger: logger, Prefix: "test:" + t.Name() + ":"})
		budgets = append(budgets, b)
		clients = append(clients, replicaClient(t, portal.URL,
			Limits{Rate: rate, MaxConcurrent: concurrency, Replicas: 2, Shared: b, MaxWait: time.Minute}))
	}

	queryAll(t, clients, perReplica)
	got, n := up.rate(int(rate))
	t.Logf("shared: %d requests from 2 replicas at %.2f/s (limit %.0f/s for the service), at most %d in flight (limit %d)",
		n, got, rate, up.maxInFlight, concurrency)
	if got > rate*1.25 {
		t.Errorf("the portal saw %.2f requests/s from 2 replicas sharing a budget of %.0f/s; want at most %.2f", got, rate, rate*1.25)
	}
	if up.maxInFlight > concurrency {
		t.Errorf("the portal had %d requests in flight from 2 replicas sharing a bound of %d", up.maxInFlight, concurrency)
	}
	for i, b := range budgets {
		if !b.Shared() || b.Fallbacks() != 0 {
			t.Errorf("replica %d with Redis up: Shared() = %v, Fallbacks() = %d; want true, 0", i, b.Shared(), b.Fallbacks())
		}
	}

	// Redis goes away: each replica keeps to its share, rate/2.
	srv.Stop()
	up.mu.Lock()
	up.arrivals, up.maxInFlight = nil, 0
	up.mu.Unlock()
	queryAll(t, clients[:1], perReplica)
	share := rate / 2
	got, n = up.rate(int(share))
	t.Logf("Redis stopped: %d requests from one replica at %.2f/s (its share %.0f/s), at most %d in flight (its share %d)",
		n, got, share, up.maxInFlight, concurrency/2)
	if got > share*1.25 {
		t.Errorf("with Redis stopped, one replica sent %.2f requests/s; want at most its share %.0f/s (+25%%)", got, share)
	}
	if up.maxInFlight > concurrency/2 {
		t.Errorf("with Redis stopped, one replica had %d requests in flight; want at most its share %d", up.maxInFlight, concurrency/2)
	}
	if budgets[0].Shared() || budgets[0].Fallbacks() == 0 {
		t.Errorf("with Redis stopped: Shared() = %v, Fallbacks() = %d; want false, > 0", budgets[0].Shared(), budgets[0].Fallbacks())
	}
	logMu.Lock()
	defer logMu.Unlock()
	if !strings.Contains(logs.String(), "Redis is unreachable; this replica keeps to its local share") {
		t.Errorf("the log does not say that the replica fell back to its local share:\n%s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
