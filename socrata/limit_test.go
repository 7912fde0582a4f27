package socrata

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLimits: a request over the bound of requests in flight or over the
// rate waits for its turn (logged and reported to OnWait) and, when the
// turn would come after MaxQueueWait, fails with a *BusyError without
// reaching the portal.
func TestLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts Options
		// hold keeps the first answer's body open during the second request.
		hold       bool
		wantBusy   bool
		wantWaited bool // the second request waited (and was served unless busy)
	}{
		{"in flight: refused after MaxQueueWait", Options{MaxConcurrent: 1, MaxQueueWait: 30 * time.Millisecond}, true, true, true},
		{"in flight: a closed answer frees its slot", Options{MaxConcurrent: 1, MaxQueueWait: 30 * time.Millisecond}, false, false, false},
		{"rate: refused when the turn comes too late", Options{RequestRate: 0.5, MaxQueueWait: 100 * time.Millisecond}, false, true, true},
		{"rate: waits for its turn", Options{RequestRate: 0.5, MaxQueueWait: 10 * time.Second}, false, false, true},
		{"no limits", Options{}, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			h := serveJSON(http.StatusOK, []byte(`[{"n":"1"}]`))
			var (
				mu    sync.Mutex
				waits []WaitInfo
			)
			tc.opts.OnWait = func(w WaitInfo) { mu.Lock(); waits = append(waits, w); mu.Unlock() }
			c, _, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				h(w, r)
			}), tc.opts)
			first, err := c.QueryStream(t.Context(), "abcd-1234", "SELECT n")
			if err != nil {
				t.Fatal(err)
			}
			if !tc.hold {
				first.Close()
			}
			_, err = c.Query(t.Context(), "abcd-1234", "SELECT n")
			first.Close()
			var busy *BusyError
			if got := errors.As(err, &busy); got != tc.wantBusy || (!tc.wantBusy && err != nil) {
				t.Fatalf("second request: %v; want busy %v", err, tc.wantBusy)
			}
			if tc.wantBusy && (busy.RetryAfter() < time.Second || hits.Load() != 1) {
				t.Errorf("busy: RetryAfter %s, %d requests reached the portal; want >= 1s and 1", busy.RetryAfter(), hits.Load())
			}
			mu.Lock()
			defer mu.Unlock()
			if tc.wantWaited != (len(waits) == 1) || (len(waits) == 1 && waits[0].Served == tc.wantBusy) {
				t.Errorf("OnWait calls = %+v; want waited %v, served %v", waits, tc.wantWaited, !tc.wantBusy)
			}
		})
	}
}

type callerKey struct{}

// TestFairSlotsBetweenCallers: while one caller (Options.Identity) floods
// the client with requests, another caller's few requests get the next
// slots that come free, in turn with the flood's, and none is refused.
// The failure this guards against (issue 55): the slots went first come,
// first served, so one tenant paging with 30 threads made another's small
// queries wait behind all of them, and refused some.
func TestFairSlotsBetweenCallers(t *testing.T) {
	t.Parallel()
	const (
		slots = 2
		flood = 30
		few   = 3
	)
	arrivals := make(chan string, flood+few)
	proceed := make(chan struct{})
	answer := serveJSON(http.StatusOK, []byte(`[{"n":"1"}]`))
	c, _, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := "flood"
		if strings.Contains(r.URL.Path, "bbbb-0002") {
			who = "few"
		}
		arrivals <- who
		select { // a slow portal: each answer waits for the test
		case <-proceed:
		case <-r.Context().Done():
			return
		}
		answer(w, r)
	}), Options{MaxConcurrent: slots, MaxQueueWait: 10 * time.Minute, MaxRetries: -1,
		Identity: func(ctx context.Context) string { s, _ := ctx.Value(callerKey{}).(string); return s }})

	waiting := func() int {
		c.limit.slots.mu.Lock()
		defer c.limit.slots.mu.Unlock()
		n := 0
		for _, q := range c.limit.slots.waiting {
			n += q.Len()
		}
		return n
	}
	waitFor := func(n int) {
		t.Helper()
		for range 10_000 { // bounded: the goroutines queue within moments
			if waiting() == n {
				return
			}
			time.Sleep(time.Millisecond)
		}
		t.Fatalf("%d requests waiting for a slot; want %d", waiting(), n)
	}
	var (
		wg       sync.WaitGroup
		refusals atomic.Int32
	)
	run := func(who, dataset string, n int) {
		ctx := context.WithValue(t.Context(), callerKey{}, who)
		for range n {
			wg.Go(func() {
				if _, err := c.Query(ctx, dataset, "SELECT n"); err != nil {
					if who == "few" {
						refusals.Add(1)
					}
					t.Errorf("%s: %v", who, err)
				}
			})
		}
	}
	run("flood", "aaaa-0001", flood)
	waitFor(flood - slots)
	run("few", "bbbb-0002", few)
	waitFor(flood - slots + few)

	// The portal answers one request at a time: each answer frees a slot,
	// and the next request to arrive is the one that got it.
	var order []string
	for range slots {
		<-arrivals // the flood's first, served at once
	}
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
		if who == "few" {
			last = i
		}
	}
	t.Logf("order of the requests that waited, once the %d of the second caller had queued behind %d of the flood: %v", few, flood-slots, order)
	// Round robin: the second caller's three go 1st, 3rd and 5th.
	if last >= 2*few || refusals.Load() != 0 {
		t.Errorf("the second caller's last request reached the portal %d-th of %d waiting, %d refused; want within the first %d, none refused", last+1, len(order), refusals.Load(), 2*few)
	}
}

// TestFairSlotsGivingUp: a request that gives up waiting leaves no slot
// taken, whether it left before a slot came to it or just after.
func TestFairSlotsGivingUp(t *testing.T) {
	t.Parallel()
	f := newFairSlots(1)
	if w := f.take("a"); w != nil {
		t.Fatal("take on a free slot waited")
	}
	before := f.take("b")
	f.leave(before) // gave up before a slot came
	given := f.take("c")
	f.release() // the slot goes to c…
	select {
	case <-given.ready:
	default:
		t.Fatal("release gave the slot to no waiting request")
	}
	f.leave(given) // …which had given up meanwhile: the slot is free again
	if f.free != 1 || len(f.turns) != 0 || len(f.waiting) != 0 {
		t.Errorf("after every request left: free %d, turns %v, %d callers waiting; want 1, none, none", f.free, f.turns, len(f.waiting))
	}
}
