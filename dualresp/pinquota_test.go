package dualresp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/sqlitestore"
)

// Pinned results never expire: each owner may pin at most
// MaxPinnedPerOwner of them, and deleting one frees a place.
func TestPinQuota(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"memory", "sqlite"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			opts := dualresp.Options{MaxPinnedPerOwner: 3}
			if store == "sqlite" {
				s, err := sqlitestore.Open(t.Context(), t.TempDir()+"/r.db", sqlitestore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				opts.Store = s
			}
			srv, _ := newServer(t, &genExecutor{}, opts)
			alice := dualresp.WithOwner(t.Context(), "alice")
			bob := dualresp.WithOwner(t.Context(), "bob")
			newID := func(ctx context.Context) string {
				t.Helper()
				resp, err := srv.CreateResponse(ctx, dualresp.Spec{Query: dualresp.Query{Kind: "gen", Text: "all"}, Columns: genColumns})
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
			if _, err := srv.CreateResponse(alice, dualresp.Spec{Query: dualresp.Query{Kind: "gen", Text: "all"}, Expiration: -1}); !errors.Is(err, dualresp.ErrPinQuota) {
				t.Errorf("CreateResponse(pinned) over the quota = %v; want ErrPinQuota", err)
			}
			// Deleting a pinned result frees a place.
			if err := srv.Delete(alice, pinned[1]); err != nil {
				t.Fatal(err)
			}
			if _, err := srv.Pin(alice, extra); err != nil {
				t.Errorf("Pin after a delete = %v; want nil", err)
			}
		})
	}
}

// Concurrent pins by one owner never go over the quota.
func TestPinQuotaConcurrent(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{}, dualresp.Options{MaxPinnedPerOwner: 5})
	var ids []string
	for range 40 {
		ids = append(ids, create(t, srv, dualresp.Spec{}).ID())
	}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
		ok int
	)
	for _, id := range ids {
		wg.Go(func() {
			_, err := srv.Pin(t.Context(), id)
			switch {
			case err == nil:
				mu.Lock()
				ok++
				mu.Unlock()
			case !errors.Is(err, dualresp.ErrPinQuota):
				t.Errorf("Pin(%s) = %v", id, err)
			}
		})
	}
	wg.Wait()
	if ok != 5 {
		t.Errorf("%d of 40 concurrent pins succeeded; want 5", ok)
	}
}

func TestPinQuotaNegativeMeansNone(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{}, dualresp.Options{MaxPinnedPerOwner: -1})
	for i := range dualresp.DefaultMaxPinnedPerOwner + 5 {
		if _, err := srv.Pin(t.Context(), create(t, srv, dualresp.Spec{}).ID()); err != nil {
			t.Fatalf("Pin #%d without a quota = %v", i+1, err)
		}
	}
}

// Over REST a pin over the quota is a 409 in the error envelope, and the
// Client reports it as an error matching ErrPinQuota.
func TestPinQuotaREST(t *testing.T) {
	t.Parallel()
	srv, _, ts := startServer(t, &genExecutor{}, dualresp.Options{MaxPinnedPerOwner: 1}, nil)
	put := func(id string) (int, map[string]string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, ts.URL+"/resources/"+id, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	if code, body := put(create(t, srv, dualresp.Spec{}).ID()); code != http.StatusOK {
		t.Fatalf("first PUT = %d %v; want 200", code, body)
	}
	code, body := put(create(t, srv, dualresp.Spec{}).ID())
	if code != http.StatusConflict || body["error"] != "pin_quota_exceeded" || !strings.Contains(body["message"], "DELETE /resources/") {
		t.Errorf("second PUT = %d %v; want 409 pin_quota_exceeded saying how to free one", code, body)
	}

	c := newClient(t, dualresp.ClientOptions{})
	_, err := parse(t, c, create(t, srv, dualresp.Spec{})).Pin(t.Context())
	var fe *dualresp.FetchError
	if !errors.Is(err, dualresp.ErrPinQuota) || !errors.As(err, &fe) || fe.StatusCode != http.StatusConflict || errors.Is(err, dualresp.ErrNotFound) {
		t.Errorf("Client Pin over the quota = %v; want a 409 FetchError matching ErrPinQuota", err)
	}
}

// A pinned result lives as long as it is read: Cleanup deletes the pinned
// records unread for PinnedIdleExpiration, in the memory and SQLite stores.
func TestPinnedIdleExpiration(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"memory", "sqlite"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			opts := dualresp.Options{PinnedIdleExpiration: 10 * 24 * time.Hour}
			if store == "sqlite" {
				s, err := sqlitestore.Open(t.Context(), t.TempDir()+"/r.db", sqlitestore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				opts.Store = s
			}
			srv, clock := newServer(t, &genExecutor{}, opts)
			ctx := t.Context()
			pin := func() string {
				t.Helper()
				resp, err := srv.CreateResponse(ctx, dualresp.Spec{Query: dualresp.Query{Kind: "gen", Text: "all"}, Columns: genColumns})
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
		})
	}
}
