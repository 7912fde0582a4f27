package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// RunPins runs the pin rules of a dualresp.Server on a store newStore
// returns (as Run's newStore: new, empty, isolated; RunPins closes it):
// each owner may pin at most Options.MaxPinnedPerOwner results and
// deleting one frees a place (a dualresp.PinCounter store); Cleanup
// deletes the pinned results unread for Options.PinnedIdleExpiration
// (only for a dualresp.UnusedPinDeleter store: the Server cannot enforce
// it on others). Subtests run one after the other.
func RunPins(t *testing.T, newStore func(t *testing.T) dualresp.Store) {
	t.Helper()
	t.Run("Quota", func(t *testing.T) { testPinQuota(t, newStore(t)) })
	s := newStore(t)
	if _, ok := s.(dualresp.UnusedPinDeleter); !ok {
		_ = s.Close()
		return
	}
	t.Run("IdleExpiration", func(t *testing.T) { testPinnedIdleExpiration(t, s) })
}

// clock is a clock the pin tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// oneRow is an Executor whose every query is the one row {"n": 1}.
type oneRow struct{}

func (oneRow) Prepare(context.Context, dualresp.Query) (dualresp.Plan, error) { return oneRow{}, nil }

func (oneRow) Count(context.Context) (int64, error) { return 1, nil }

func (oneRow) Page(_ context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	if req.Offset > 0 || req.Limit < 1 {
		return dualresp.PageResult{}, nil
	}
	return dualresp.PageResult{Rows: []json.RawMessage{json.RawMessage(`{"n":1}`)}}, nil
}

// newPinServer returns a Server on s (which it closes) with opts, its
// clock starting at base.
func newPinServer(t *testing.T, s dualresp.Store, opts dualresp.Options) (*dualresp.Server, *clock) {
	t.Helper()
	c := &clock{t: base}
	opts.Store = s
	opts.BaseURL = "http://example.test"
	opts.Executors = map[string]dualresp.Executor{"one": oneRow{}}
	opts.Now = c.Now
	opts.CleanupInterval = -1
	srv, err := dualresp.New(opts)
	if err != nil {
		_ = s.Close()
		t.Fatalf("New() = %v", err)
	}
	t.Cleanup(func() {
		_ = srv.Close()
		_ = s.Close()
	})
	return srv, c
}

var pinSpec = dualresp.Spec{Query: dualresp.Query{Kind: "one", Text: "all"}, Columns: []dualresp.Column{{Name: "n", Type: "number"}}}

func testPinQuota(t *testing.T, s dualresp.Store) {
	srv, _ := newPinServer(t, s, dualresp.Options{MaxPinnedPerOwner: 3})
	alice := dualresp.WithOwner(t.Context(), "alice")
	bob := dualresp.WithOwner(t.Context(), "bob")
	newID := func(ctx context.Context) string {
		t.Helper()
		resp, err := srv.CreateResponse(ctx, pinSpec)
		if err != nil {
			t.Fatal(err)
		}
		return resp.ID()
	}
	var pinned []string
	for range 3 {
		id := newID(alice)
		if _, err := srv.Pin(alice, id); err != nil {
			t.Fatalf("Pin #%d = %v; want nil", len(pinned)+1, err)
		}
		pinned = append(pinned, id)
	}
	if _, err := srv.Pin(alice, pinned[0]); err != nil {
		t.Errorf("Pin(already pinned) = %v; want nil", err)
	}
	extra := newID(alice)
	_, err := srv.Pin(alice, extra)
	var qe *dualresp.PinQuotaError
	if !errors.As(err, &qe) || !errors.Is(err, dualresp.ErrPinQuota) || qe.Max != 3 || qe.Owner != "alice" {
		t.Fatalf("Pin #4 = %v; want a *PinQuotaError{alice, 3} matching ErrPinQuota", err)
	}
	if !strings.Contains(err.Error(), "delete a pinned result") {
		t.Errorf("Pin #4 error %q does not say how to free a place", err)
	}
	if rec, _ := srv.Resource(alice, extra); rec.Pinned {
		t.Errorf("the refused pin pinned the record")
	}
	// Other owners have their own quota.
	if _, err := srv.Pin(bob, newID(bob)); err != nil {
		t.Errorf("Pin by bob = %v; want nil", err)
	}
	// Records created pinned count too.
	created := pinSpec
	created.Expiration = -1
	if _, err := srv.CreateResponse(alice, created); !errors.Is(err, dualresp.ErrPinQuota) {
		t.Errorf("CreateResponse(pinned) over the quota = %v; want ErrPinQuota", err)
	}
	// Deleting a pinned result frees a place.
	if err := srv.Delete(alice, pinned[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Pin(alice, extra); err != nil {
		t.Errorf("Pin after a delete = %v; want nil", err)
	}
}

// A pinned result lives as long as it is read.
func testPinnedIdleExpiration(t *testing.T, s dualresp.Store) {
	srv, clock := newPinServer(t, s, dualresp.Options{PinnedIdleExpiration: 10 * 24 * time.Hour})
	ctx := t.Context()
	pin := func() string {
		t.Helper()
		resp, err := srv.CreateResponse(ctx, pinSpec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Pin(ctx, resp.ID()); err != nil {
			t.Fatal(err)
		}
		return resp.ID()
	}
	used, unused := pin(), pin()
	for range 3 { // read every 6 days for 18 days
		clock.Advance(6 * 24 * time.Hour)
		if _, err := srv.Access(ctx, used); err != nil {
			t.Fatalf("Access(used pin) = %v", err)
		}
		if _, err := srv.Cleanup(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := srv.Resource(ctx, used); err != nil {
		t.Errorf("a pinned result read every 6 days, after 18 days: %v; want it kept", err)
	}
	if _, err := srv.Resource(ctx, unused); !errors.Is(err, dualresp.ErrNotFound) {
		t.Errorf("a pinned result unread for 18 days (bound 10): %v; want ErrNotFound", err)
	}
}
