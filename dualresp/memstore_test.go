package dualresp_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/storetest"
)

func TestMemoryStoreContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) dualresp.Store {
		return dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{})
	})
}

// The pin quota and the pinned results' idle expiration, on the memory
// store (dualresp/sqlitestore and dualresp/redisstore run them on theirs).
func TestMemoryStorePins(t *testing.T) {
	t.Parallel()
	storetest.RunPins(t, func(t *testing.T) dualresp.Store {
		return dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{})
	})
}

func TestMemoryStoreEvictsLeastRecentlyUsedUnpinned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{MaxResources: 4})
	defer s.Close()
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	save := func(id string) {
		t.Helper()
		if err := s.Save(ctx, storetest.Record(id, exp)); err != nil {
			t.Fatal(err)
		}
	}
	save("a")
	save("b")
	save("c")
	if _, err := s.Pin(ctx, "a"); err != nil { // pinned: never evicted, counted
		t.Fatal(err)
	}
	save("d")
	if _, err := s.Get(ctx, "b"); err != nil { // b becomes most recently used
		t.Fatal(err)
	}
	save("e") // evicts c, the least recently used unpinned record
	save("f") // evicts d
	for id, want := range map[string]bool{"a": true, "b": true, "c": false, "d": false, "e": true, "f": true} {
		_, err := s.Get(ctx, id)
		if got := err == nil; got != want {
			t.Errorf("Get(%s) = %v; want present=%v", id, err, want)
		}
		if !want && !errors.Is(err, dualresp.ErrNotFound) {
			t.Errorf("Get(%s) = %v; want ErrNotFound", id, err)
		}
	}
	if got := s.Len(); got != 4 {
		t.Errorf("Len() = %d; want 4", got)
	}
	for i := range 10 {
		save(fmt.Sprint("x", i))
	}
	if got := s.Len(); got != 4 {
		t.Errorf("Len() after 10 more saves = %d; want 4 (3 unpinned + 1 pinned)", got)
	}
}

// TestMemoryStoreOwnersApart: a Save over the bounds evicts from the owner
// that holds the most (its least recently used record), so an owner's burst
// never evicts another owner's records, and the per-owner bound holds.
func TestMemoryStoreOwnersApart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, tc := range []struct {
		name                 string
		max, perOwner, burst int
		wantB                int // records of B left
	}{
		{"store bound", 10, -1, 50, 6}, // A's pinned record counts
		{"owner bound", 100, 4, 50, 4},
		{"both", 10, 5, 50, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{MaxResources: tc.max, MaxResourcesPerOwner: tc.perOwner})
			save := func(id, owner string, pinned bool) {
				t.Helper()
				if err := s.Save(ctx, &dualresp.Record{ID: id, Owner: owner, Pinned: pinned}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 3 {
				save(fmt.Sprint("a", i), "owner-a", false)
			}
			save("a-pinned", "owner-a", true)
			for i := range tc.burst {
				save(fmt.Sprint("b", i), "owner-b", false)
			}
			for _, id := range []string{"a0", "a1", "a2", "a-pinned"} {
				if _, err := s.Get(ctx, id); err != nil {
					t.Errorf("Get(%s) of owner A after owner B saved %d = %v; want it kept", id, tc.burst, err)
				}
			}
			left := 0
			for i := range tc.burst {
				if _, err := s.Get(ctx, fmt.Sprint("b", i)); err == nil {
					left++
				}
			}
			if left != tc.wantB {
				t.Errorf("owner B has %d records left; want %d (the newest)", left, tc.wantB)
			}
			if _, err := s.Get(ctx, fmt.Sprint("b", tc.burst-1)); err != nil {
				t.Errorf("owner B's newest record: %v; want it kept", err)
			}
		})
	}
}
