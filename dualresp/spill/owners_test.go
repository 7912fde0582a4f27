package spill_test

import (
	"fmt"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp/spill"
)

// TestStoreKeepsOwnersApart: one owner's spills never evict another's
// while it still holds some of its own, whether the store's bound on
// count or on bytes is reached; an owner is bounded by its share; labels
// of one identity share it. The failure this guards against: with tokens A and B, B's 5 large
// spilled analyses evicted A's spilled result (one pool, oldest out).
func TestStoreKeepsOwnersApart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts spill.StoreOptions
		rows int
		most int // of B's spills kept: its share
	}{
		{"count", spill.StoreOptions{MaxBlobs: 8, MaxBlobsPerOwner: 6}, 10, 6},
		{"bytes", spill.StoreOptions{MaxBlobBytes: 8 << 10, MaxBlobBytesPerOwner: 6 << 10}, 60, 7}, // 830 bytes each
		{"labels", spill.StoreOptions{MaxBlobs: 100, MaxBlobsPerOwner: 6}, 10, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := spill.NewStore(tc.opts)
			var a []string
			for range 2 {
				key, _, err := st.PutOwned("token:a/key", rows(tc.rows))
				if err != nil {
					t.Fatal(err)
				}
				a = append(a, key)
			}
			kept := 0
			var bKeys []string
			for i := range 50 {
				owner := "token:b"
				if tc.name == "labels" {
					owner = fmt.Sprintf("token:b/minted-%d", i)
				}
				key, _, err := st.PutOwned(owner, rows(tc.rows))
				if err != nil {
					t.Fatal(err)
				}
				bKeys = append(bKeys, key)
			}
			for _, k := range bKeys {
				if st.Has(k) {
					kept++
				}
			}
			for i, k := range a {
				if !st.Has(k) {
					t.Errorf("A's spilled result %d after B's 50 spills: evicted; want it kept", i)
				}
			}
			if kept == 0 || kept > tc.most {
				t.Errorf("B keeps %d of its 50 spills; want 1 to %d (its share)", kept, tc.most)
			}
			if !st.Has(bKeys[49]) {
				t.Errorf("B's newest spill was evicted; want it kept")
			}
		})
	}
}
