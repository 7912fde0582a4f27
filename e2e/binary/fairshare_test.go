//go:build e2e

package binary

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/datasf-mcp/datasf-mcp/dualresp/redisstore/redistest"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// gatedPortal is a fake portal whose answers to the queries of two
// datasets wait for the test: each request of floodID or fewID is
// announced on arrivals ("A" or "B") and answered when the test sends on
// proceed. Other requests (the catalog) are answered at once.
type gatedPortal struct {
	next     http.Handler
	gated    atomic.Bool
	arrivals chan string
	proceed  chan struct{}
}

const (
	floodID = "flud-0001"
	fewID   = "smal-0002"
)

func (p *gatedPortal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	who := ""
	switch {
	case strings.Contains(r.URL.Path, floodID):
		who = "A"
	case strings.Contains(r.URL.Path, fewID):
		who = "B"
	}
	if who != "" && p.gated.Load() {
		p.arrivals <- who
		select {
		case <-p.proceed:
		case <-r.Context().Done():
			return
		}
	}
	p.next.ServeHTTP(w, r)
}

// TestFairSharesAcrossReplicasBinary: two replicas of the binary share
// one redis-server and one upstream budget of 2 requests in flight. With
// bearer token A, a client of replica 1 sends 30 queries at once to a
// slow portal; with token B, a client of replica 2 then sends 3. The
// portal answers one request at a time, and counts whose came next: B's
// three must all be served (none refused) and reach the portal before
// A's flood has drained, each after a few of A's. The failure this
// guards against (issue 55): the shared budget was first come, first
// served across replicas, so one tenant paging with 30 threads made
// another's small queries wait behind its flood (1.6–5.2 s), and refused
// some.
func TestFairSharesAcrossReplicasBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and two processes")
	}
	t.Parallel()
	const (
		slots = 2
		flood = 30
		few   = 3
	)
	srv, err := socratatest.New(socratatest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	for _, id := range []string{floodID, fewID} {
		schema := socratatest.Schema{ID: id, Name: "Fair share " + id, Description: "Generated rows for the fair shares test",
			Columns: []socratatest.Column{{Name: "N", FieldName: "n", DataType: "number"}}}
		if err := srv.AddGenerated(t.Context(), schema, 50, func(i int) map[string]any { return map[string]any{"n": i} }); err != nil {
			t.Fatal(err)
		}
	}
	portal := &gatedPortal{next: srv.Handler(), arrivals: make(chan string, 4*(flood+few)), proceed: make(chan struct{})}
	ts := httptest.NewServer(portal)
	t.Cleanup(ts.Close)

	rs := redistest.StartServer(t)
	const tokenA, tokenB = "fair-token-a-0123456789", "fair-token-b-0123456789"
	env := []string{"DATASF_REST_TOKEN=" + tokenA + "," + tokenB, "SOCRATA_APP_TOKEN=", "DATASF_DOMAIN=data.sfgov.org"}
	args := []string{"--base-url", ts.URL, "--discovery-url", ts.URL, "--store", "redis://" + rs.Addr + "/0",
		"--upstream-concurrency", fmt.Sprint(slots), "--upstream-rate", "1000", "--upstream-wait", "2m", "--replicas", "2"}
	var one, two *instance
	var wg sync.WaitGroup
	wg.Go(func() { one = startServe(t, env, args...) })
	wg.Go(func() { two = startServe(t, env, args...) })
	wg.Wait()
	if t.Failed() {
		return
	}
	as := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	a := newRawClient(t, one.base, "127.0.0.1")
	b := newRawClient(t, two.base, "127.0.0.1")
	if r := a.initialize(as(tokenA)); r.status != http.StatusOK {
		t.Fatalf("initialize A = %d %s", r.status, r.body)
	}
	if r := b.initialize(as(tokenB)); r.status != http.StatusOK {
		t.Fatalf("initialize B = %d %s", r.status, r.body)
	}
	// Every query is another (its LIMIT), so that none is answered from
	// a cache; each asks the portal for its rows and their count.
	query := func(c *rawClient, token, id string, i int) (toolAnswer, error) {
		return c.tryCall(as(token), "query_datasf", map[string]any{"dataset_id": id,
			"soql": fmt.Sprintf("SELECT n LIMIT %d", i+1)})
	}
	// Each replica learns both datasets' schemas first, ungated, so that
	// the queries below ask only for rows and counts.
	for _, c := range []struct {
		c     *rawClient
		token string
	}{{a, tokenA}, {b, tokenB}} {
		for _, id := range []string{floodID, fewID} {
			if res, err := query(c.c, c.token, id, 1000); err != nil || res.IsError {
				t.Fatalf("warm-up query of %s: %v %s", id, err, res.text())
			}
		}
	}

	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	t.Cleanup(func() { rdb.Close() })
	// waiters counts the callers the shared budget has waiting: the fixed
	// code keeps them in Redis; the old code has none, and the test goes
	// on after a bounded wait.
	waitForWaiters := func(n int64) {
		t.Helper()
		var got int64
		for range 2000 { // bounded: at most ~10 s
			keys, _ := rdb.Keys(t.Context(), "datasf:upstream:*:waiting").Result()
			got = 0
			for _, k := range keys {
				got += rdb.ZCard(t.Context(), k).Val()
			}
			if got >= n {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Logf("the shared budget shows %d callers waiting in Redis after ~10 s; want %d (going on)", got, n)
	}

	portal.gated.Store(true)
	var (
		calls    sync.WaitGroup
		refusedB atomic.Int32
		doneB    atomic.Int32
	)
	run := func(c *rawClient, token, id string, n int) {
		for i := range n {
			calls.Go(func() {
				res, err := query(c, token, id, i)
				if err == nil && res.IsError {
					err = fmt.Errorf("isError: %s", res.text())
				}
				if token == tokenB {
					doneB.Add(1)
					if err != nil {
						refusedB.Add(1)
					}
				}
				if err != nil {
					t.Errorf("a query with token %s: %v", token[:12], err)
				}
			})
		}
	}
	all := make(chan struct{})
	run(a, tokenA, floodID, flood)
	for range slots { // the flood's first, sent at once; the rest wait
		<-portal.arrivals
	}
	waitForWaiters(1)
	run(b, tokenB, fewID, few)
	waitForWaiters(2)
	go func() { calls.Wait(); close(all) }()

	// The portal answers one request at a time, and sees which comes
	// next: the one that got the slot freed.
	var order []string
	held := slots
	// release lets one held request go; bounded, should none be held (its
	// caller gone) after all.
	release := func() {
		select {
		case portal.proceed <- struct{}{}:
		case <-time.After(30 * time.Second):
			t.Fatalf("no held request took the go-ahead in 30 s; order so far %v", order)
		}
	}
	for done := false; !done; {
		if held == slots {
			release()
			held--
			continue
		}
		select {
		case who := <-portal.arrivals:
			order = append(order, who)
			held++
		case <-all:
			done = true
		case <-time.After(2 * time.Second): // nothing more waits: let one held go
			if held == 0 {
				t.Fatalf("no request reached the portal for 2 s with none in flight; order so far %v", order)
			}
			release()
			held--
		}
	}
	aBefore := []int{}
	seenA := slots // the flood's first, in flight before B's were sent
	for _, who := range order {
		if who == "A" {
			seenA++
		} else {
			aBefore = append(aBefore, seenA)
		}
	}
	t.Logf("order of the %d requests that waited for a slot: %s", len(order), strings.Join(order, ""))
	t.Logf("A's requests the portal saw before each of B's: %v (of %d); B's queries refused: %d of %d", aBefore, seenA, refusedB.Load(), few)
	if refusedB.Load() != 0 || doneB.Load() != few {
		t.Errorf("B: %d of %d queries refused (%d answered); want none refused", refusedB.Load(), few, doneB.Load())
	}
	if len(aBefore) < few {
		t.Fatalf("the portal saw %d requests of B's %d queries; want at least %d", len(aBefore), few, few)
	}
	// Fair shares: a slot that comes free goes to the waiting caller that
	// holds the fewest, so B's requests come one in every two.
	if last, most := aBefore[len(aBefore)-1], slots+2*len(aBefore); last > most {
		t.Errorf("the portal saw %d of A's %d requests before B's last; want at most %d (B's served before A's flood drains)",
			last, seenA, most)
	}
}
