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

func TestMemoryStoreEvictsLeastRecentlyUsedUnpinned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{MaxResources: 3})
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
	if _, err := s.Pin(ctx, "a"); err != nil { // pinned: never evicted, not counted
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
