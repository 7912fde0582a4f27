package socrata

import (
	"errors"
	"net/http"
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
