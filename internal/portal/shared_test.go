package portal

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
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

type callerKey struct{}

// TestSharedBudgetFairShares: two replicas share a bound of 2 requests in
// flight through a real redis-server. Caller A floods replica 1 with 30
// requests; caller B then sends 3 through replica 2. The portal answers
// one request at a time and sees whose comes next: the slots that come
// free go to B's in turn with A's, so B's three are among the first six
// to come, not behind A's flood. Redis holds hashes of the callers, never
// their names. The failure this guards against (issue 55): the shared
// budget was first come, first served across replicas.
func TestSharedBudgetFairShares(t *testing.T) {
	t.Parallel()
	const (
		slots = 2
		flood = 30
		few   = 3
		// The callers' identities (tokens, addresses): never in Redis.
		callerA = "owner:tenant-a-identity"
		callerB = "owner:tenant-b-identity"
	)
	srv := redistest.StartServer(t)
	arrivals := make(chan string, flood+few)
	proceed := make(chan struct{})
	portal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := "A"
		if strings.Contains(r.URL.Path, "bbbb-0002") {
			who = "B"
		}
		arrivals <- who
		select { // a slow portal: each answer waits for the test
		case <-proceed:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"n":"1"}]`))
	}))
	t.Cleanup(portal.Close)

	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { rdb.Close() })
	prefix := "test:" + t.Name() + ":"
	var replicas []*socrata.Client
	for range 2 {
		b := NewSharedBudget(SharedBudgetOptions{Client: rdb, Prefix: prefix})
		opts := socrata.Options{Domain: "data.example.org", BaseURL: portal.URL, MaxRetries: -1,
			Identity: func(ctx context.Context) string { s, _ := ctx.Value(callerKey{}).(string); return s }}
		Limits{MaxConcurrent: slots, Replicas: 2, Shared: b, MaxWait: 10 * time.Minute}.Apply(&opts)
		replicas = append(replicas, socrata.NewClient(opts))
	}

	// waiting returns the callers waiting in Redis, and fails the test if
	// any key or member names a caller as it is.
	waiting := func() []string {
		t.Helper()
		keys, err := rdb.Keys(t.Context(), prefix+"*").Result()
		if err != nil {
			t.Fatal(err)
		}
		var callers []string
		for _, k := range keys {
			var members []string
			if strings.HasSuffix(k, ":inflight") || strings.HasSuffix(k, ":waiting") {
				members = rdb.ZRange(t.Context(), k, 0, -1).Val()
			}
			for _, s := range append(members, k) {
				if strings.Contains(s, "tenant-") {
					t.Fatalf("Redis names a caller as it is: %q", s)
				}
			}
			if strings.HasSuffix(k, ":waiting") {
				callers = append(callers, members...)
			}
		}
		return callers
	}
	// waitFor waits until n callers wait in Redis, or goes on after a
	// bounded wait (the old code had no waiters in Redis).
	waitFor := func(n int) {
		t.Helper()
		for range 2000 {
			if len(waiting()) >= n {
				return
			}
			time.Sleep(time.Millisecond)
		}
		t.Logf("%d callers waiting in Redis; want %d (going on)", len(waiting()), n)
	}
	var (
		wg       sync.WaitGroup
		refusals atomic.Int32
	)
	run := func(c *socrata.Client, who, dataset string, n int) {
		ctx := context.WithValue(t.Context(), callerKey{}, who)
		for range n {
			wg.Go(func() {
				if _, err := c.Query(ctx, dataset, "SELECT n"); err != nil {
					refusals.Add(1)
					t.Errorf("%s: %v", who, err)
				}
			})
		}
	}
	run(replicas[0], callerA, "aaaa-0001", flood)
	for range slots {
		<-arrivals // the flood's first, served at once
	}
	waitFor(1)
	run(replicas[1], callerB, "bbbb-0002", few)
	waitFor(2)
	// The callers waiting are bounded by time: the key ends by itself.
	if keys := rdb.Keys(t.Context(), prefix+"*:waiting").Val(); len(keys) != 1 {
		t.Errorf("keys of callers waiting in Redis: %q; want one", keys)
	} else if ttl := rdb.PTTL(t.Context(), keys[0]).Val(); ttl <= 0 || ttl > 2*waiterTTL {
		t.Errorf("PTTL %s = %s; want in (0, %s]", keys[0], ttl, 2*waiterTTL)
	}

	// Each answer frees a slot, and the next request to arrive is the one
	// that got it.
	var order []string
	for range flood - slots + few {
		proceed <- struct{}{}
		order = append(order, <-arrivals)
	}
	for range slots {
		proceed <- struct{}{}
	}
	wg.Wait()
	last := -1
	for i, who := range order {
		if who == "B" {
			last = i
		}
	}
	t.Logf("order of the requests that waited, A's %d on replica 1 then B's %d on replica 2: %s", flood-slots, few, strings.Join(order, ""))
	if last >= 2*few || refusals.Load() != 0 {
		t.Errorf("B's last request reached the portal %d-th of %d waiting, %d refused; want within the first %d, none refused",
			last+1, len(order), refusals.Load(), 2*few)
	}
}
