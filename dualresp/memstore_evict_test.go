package dualresp_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// TestMemoryStoreCountsEvictions: evictions are counted by cause, an
// owner over its own bound apart from a store over its bound.
func TestMemoryStoreCountsEvictions(t *testing.T) {
	t.Parallel()
	s := dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{MaxResources: 4, MaxResourcesPerOwner: 3})
	save := func(owner string, i int) {
		t.Helper()
		rec := &dualresp.Record{ID: fmt.Sprintf("%s-%d", owner, i), Owner: owner, ExpiresAt: time.Now().Add(time.Hour)}
		if err := s.Save(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		save("a", i) // the 4th goes over a's bound of 3
	}
	if got, want := s.Evictions(), (dualresp.Evictions{OwnerBound: 1}); got != want {
		t.Fatalf("after 4 saves of one owner: Evictions() = %+v; want %+v", got, want)
	}
	for i := range 2 {
		save("b", i) // 5 and then 5 again over the store's 4: a holds the most
	}
	if got, want := s.Evictions(), (dualresp.Evictions{OwnerBound: 1, StoreFull: 1}); got != want {
		t.Fatalf("after b's saves: Evictions() = %+v; want %+v", got, want)
	}
}
