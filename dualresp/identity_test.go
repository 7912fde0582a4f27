package dualresp_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// TestMemoryStoreLabelsShareTheirIdentity: owners "identity/label" share
// the identity's bound, so a caller minting a label per record holds no
// more than one with a single label, and a burst under minted labels
// evicts its own records, never another identity's: a victim's 5 records
// survive 1,040 saves under new labels in a store of 100 (before, every
// label was an owner of one record and the victim, holding the most, lost
// its records first).
func TestMemoryStoreLabelsShareTheirIdentity(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{MaxResources: 100, MaxResourcesPerOwner: 60})
	save := func(id, owner string) {
		t.Helper()
		if err := s.Save(ctx, &dualresp.Record{ID: id, Owner: owner}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		save(fmt.Sprint("victim-", i), "ip:victim/key")
	}
	for i := range 30 {
		save(fmt.Sprint("other-", i), "ip:other")
	}
	for i := range 1_040 {
		save(fmt.Sprint("minted-", i), fmt.Sprintf("ip:attacker/key-%d", i))
	}
	for i := range 5 {
		if _, err := s.Get(ctx, fmt.Sprint("victim-", i)); err != nil {
			t.Errorf("the victim's record %d after 1,040 saves under new labels: %v; want it kept", i, err)
		}
	}
	kept := 0
	for i := range 1_040 {
		if _, err := s.Get(ctx, fmt.Sprint("minted-", i)); err == nil {
			kept++
		}
	}
	if kept != 60 {
		t.Errorf("the attacker keeps %d records under 1,040 labels; want 60, its identity's bound", kept)
	}
	if n := s.Len(); n > 100 {
		t.Errorf("Len() = %d; want at most 100", n)
	}
}

// TestMemoryStorePinsCountAgainstTheBound: pinned records count against
// MaxResources, and pins past MaxPinned (half of it by default) are
// refused with a *PinQuotaError naming the store, whoever the owners: 200
// pins under 200 identities leave at most 100 records, and new results
// still have room.
func TestMemoryStorePinsCountAgainstTheBound(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{MaxResources: 100})
	pinned, refused := 0, 0
	for i := range 200 {
		id := fmt.Sprint("r", i)
		if err := s.Save(ctx, &dualresp.Record{ID: id, Owner: fmt.Sprint("minted-", i)}); err != nil {
			t.Fatal(err)
		}
		_, err := s.Pin(ctx, id)
		var qe *dualresp.PinQuotaError
		switch {
		case err == nil:
			pinned++
		case errors.As(err, &qe) && qe.Store && qe.Max == 50 && errors.Is(err, dualresp.ErrPinQuota):
			refused++
		default:
			t.Fatalf("Pin(%s) = %v; want nil or a store *PinQuotaError of 50", id, err)
		}
	}
	if pinned != 50 || refused != 150 {
		t.Errorf("200 pins under 200 owners: %d pinned, %d refused; want 50, 150", pinned, refused)
	}
	if n := s.Len(); n > 100 {
		t.Errorf("Len() = %d; want at most 100", n)
	}
	for i := range 80 {
		if err := s.Save(ctx, &dualresp.Record{ID: fmt.Sprint("new", i), Owner: "someone"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Get(ctx, "new79"); err != nil || s.Len() != 100 {
		t.Errorf("after 80 new results: Get(new79) = %v, Len() = %d; want it kept, 100", err, s.Len())
	}
}

// TestPinQuotaPerIdentity: the Server's pin quota counts an identity's
// pins whatever their labels: with a quota of 3, owners x/1 … x/10 pin
// 3 results in all.
func TestPinQuotaPerIdentity(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, &genExecutor{}, dualresp.Options{MaxPinnedPerOwner: 3})
	pinned := 0
	for i := range 10 {
		ctx := dualresp.WithOwner(t.Context(), fmt.Sprintf("x/%d", i))
		resp, err := srv.CreateResponse(ctx, dualresp.Spec{Query: dualresp.Query{Kind: "gen", Text: "all"}, Columns: genColumns})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Pin(ctx, resp.ID()); err == nil {
			pinned++
		} else if !errors.Is(err, dualresp.ErrPinQuota) {
			t.Fatalf("Pin under x/%d = %v; want nil or ErrPinQuota", i, err)
		}
	}
	if pinned != 3 {
		t.Errorf("10 labels of one identity pinned %d results; want 3", pinned)
	}
}
