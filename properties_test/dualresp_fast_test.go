package properties_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// manualClock is a clock the test moves by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// model is what the test expects of one created resource.
type model struct {
	id        string
	expiresAt time.Time
	pinned    bool
	gone      bool // deleted or cleaned up
}

// state is the expected readability: nil, ErrNotFound or ErrExpired.
func (m *model) state(now time.Time) error {
	switch {
	case m.gone:
		return dualresp.ErrNotFound
	case !m.pinned && !m.expiresAt.After(now):
		return dualresp.ErrExpired
	}
	return nil
}

// outcomes counts how often D4's reads saw each state, so the test can
// insist that every path (readable, expired, not found) was exercised.
// rapid runs the checks one after the other, so it needs no lock.
type outcomes struct{ readable, expired, notFound int }

func (o *outcomes) add(want error) {
	switch {
	case want == nil:
		o.readable++
	case errors.Is(want, dualresp.ErrExpired):
		o.expired++
	default:
		o.notFound++
	}
}

func checkErr(t *rapid.T, what string, got, want error) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Fatalf("%s = %v; want success", what, got)
	case want != nil && !errors.Is(got, want):
		t.Fatalf("%s = %v; want an error matching %v", what, got, want)
	}
}

// Property D4: with a controllable clock, a resource is readable until it
// expires (its expiry pushed out by each access by AccessExtension, never
// closer) and answers expired after; a pinned one never expires; deleting
// makes it unreadable (not found); cleanup turns expired ones into not found.
// Reads go through Server.Resource, Server.Access and the REST handler.
func TestFastResourceLifetime(t *testing.T) {
	t.Parallel()
	var seen outcomes
	defer func() {
		t.Logf("D4 reads checked: %d readable, %d expired, %d not found", seen.readable, seen.expired, seen.notFound)
		if !t.Failed() && (seen.readable == 0 || seen.expired == 0 || seen.notFound == 0) {
			t.Errorf("D4 reached readable %d, expired %d, not found %d times; want every state at least once (the generator no longer exercises them all)",
				seen.readable, seen.expired, seen.notFound)
		}
	}()
	rapid.Check(t, func(t *rapid.T) {
		clock := &manualClock{now: time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)}
		defExp := rapid.SampledFrom([]time.Duration{0, time.Minute, 10 * time.Minute, time.Hour}).Draw(t, "DefaultExpiration")
		ext := rapid.SampledFrom([]time.Duration{0, -1, 30 * time.Second, 20 * time.Minute}).Draw(t, "AccessExtension")
		store := dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{})
		defer store.Close()
		srv, err := dualresp.New(dualresp.Options{
			BaseURL: "http://127.0.0.1:1", Store: store, Now: clock.Now,
			DefaultExpiration: defExp, AccessExtension: ext, CleanupInterval: -1,
			Executors: map[string]dualresp.Executor{"test": &sliceExecutor{rows: []json.RawMessage{json.RawMessage(`{"a":1}`)}}},
		})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		defer srv.Close()
		effDef := defExp
		if effDef == 0 {
			effDef = dualresp.DefaultExpiration
		}
		effExt := ext
		if effExt == 0 {
			effExt = effDef
		}
		ctx := context.Background()
		var res []*model
		pick := func() *model { return res[rapid.IntRange(0, len(res)-1).Draw(t, "resource")] }
		// extend applies one access to the model.
		extend := func(m *model) {
			if effExt > 0 && !m.pinned {
				if at := clock.Now().Add(effExt); at.After(m.expiresAt) {
					m.expiresAt = at
				}
			}
		}
		h := srv.Handler()
		for range rapid.IntRange(1, 30).Draw(t, "steps") {
			op := rapid.IntRange(0, 8).Draw(t, "op")
			if len(res) == 0 {
				op = 0
			}
			switch op {
			case 0: // create
				exp := rapid.SampledFrom([]time.Duration{0, -1, time.Second, 5 * time.Minute}).Draw(t, "Expiration")
				resp, err := srv.CreateResponse(ctx, dualresp.Spec{
					Name: "r", Query: dualresp.Query{Kind: "test", Text: "all"}, Expiration: exp,
				})
				if err != nil {
					t.Fatalf("CreateResponse: %v", err)
				}
				m := &model{id: resp.ID()}
				switch {
				case exp < 0:
					m.pinned = true
				case exp == 0:
					m.expiresAt = clock.Now().Add(effDef)
				default:
					m.expiresAt = clock.Now().Add(exp)
				}
				res = append(res, m)
			case 1: // advance the clock, often to just before, at or after an expiry
				m := pick()
				d := rapid.SampledFrom([]time.Duration{time.Second, time.Minute, 7 * time.Minute, time.Hour}).Draw(t, "advance")
				if !m.pinned && m.expiresAt.After(clock.Now()) && rapid.Bool().Draw(t, "to expiry") {
					d = m.expiresAt.Sub(clock.Now()) + rapid.SampledFrom([]time.Duration{-time.Nanosecond, 0, time.Nanosecond}).Draw(t, "around")
				}
				clock.Advance(d)
			case 2: // Resource: no access
				m := pick()
				want := m.state(clock.Now())
				seen.add(want)
				_, err := srv.Resource(ctx, m.id)
				checkErr(t, "Resource", err, want)
			case 3: // Access
				m := pick()
				want := m.state(clock.Now())
				seen.add(want)
				_, err := srv.Access(ctx, m.id)
				checkErr(t, "Access", err, want)
				if want == nil {
					extend(m)
				}
			case 4: // REST metadata
				m := pick()
				want := m.state(clock.Now())
				seen.add(want)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/resources/"+m.id, nil))
				var body struct {
					Error string `json:"error"`
					ID    string `json:"id"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
					t.Fatalf("GET /resources/%s: body %q is not JSON: %v", m.id, rec.Body, err)
				}
				switch {
				case want == nil && (rec.Code != 200 || body.ID != m.id):
					t.Fatalf("GET /resources/%s = %d %s; want 200 with its metadata", m.id, rec.Code, rec.Body)
				case errors.Is(want, dualresp.ErrNotFound) && (rec.Code != 404 || body.Error != "not_found"):
					t.Fatalf("GET /resources/%s = %d %s; want 404 not_found", m.id, rec.Code, rec.Body)
				case errors.Is(want, dualresp.ErrExpired) && (rec.Code != 404 || body.Error != "expired"):
					t.Fatalf("GET /resources/%s = %d %s; want 404 expired", m.id, rec.Code, rec.Body)
				}
				if want == nil {
					extend(m)
				}
			case 5: // pin
				m := pick()
				want := m.state(clock.Now())
				seen.add(want)
				_, err := srv.Pin(ctx, m.id)
				checkErr(t, "Pin", err, want)
				if want == nil {
					m.pinned = true
				}
			case 6: // delete
				m := pick()
				want := m.state(clock.Now())
				seen.add(want)
				err := srv.Delete(ctx, m.id)
				checkErr(t, "Delete", err, want)
				m.gone = true
			case 7: // cleanup
				n, err := srv.Cleanup(ctx)
				if err != nil {
					t.Fatalf("Cleanup: %v", err)
				}
				wantN := 0
				for _, m := range res {
					if errors.Is(m.state(clock.Now()), dualresp.ErrExpired) {
						m.gone = true
						wantN++
					}
				}
				if n != wantN {
					t.Fatalf("Cleanup removed %d; want %d", n, wantN)
				}
			default: // every resource's state at once
				for _, m := range res {
					want := m.state(clock.Now())
					seen.add(want)
					_, err := srv.Resource(ctx, m.id)
					checkErr(t, "Resource "+m.id, err, want)
				}
			}
		}
	})
}

// sliceExecutor serves the pages of one in-memory result; a test's own data
// source for the Executor interface (every query is the same result). The
// result counts total rows when total is larger than len(rows) (only the
// first rows exist, enough for a sample).
type sliceExecutor struct {
	rows  []json.RawMessage
	total int64
}

// Prepare returns e itself: every query is the same result.
func (e *sliceExecutor) Prepare(context.Context, dualresp.Query) (dualresp.Plan, error) {
	return e, nil
}

func (e *sliceExecutor) Count(context.Context) (int64, error) {
	return max(e.total, int64(len(e.rows))), nil
}

func (e *sliceExecutor) Page(_ context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	if len(req.Sort) > 0 {
		return dualresp.PageResult{}, errors.New("sliceExecutor does not sort")
	}
	lo := min(max(req.Offset, 0), int64(len(e.rows)))
	hi := min(lo+max(req.Limit, 0), int64(len(e.rows)))
	return dualresp.PageResult{Rows: e.rows[lo:hi]}, nil
}
