package spill_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/spill"
)

func rows(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"i":%d,"g":%d}`, i, i%3))
	}
	return out
}

// count prepares q on st and counts its rows.
func count(t *testing.T, st *spill.Store, q dualresp.Query) (int64, error) {
	t.Helper()
	p, err := st.Prepare(t.Context(), q)
	if err != nil {
		return 0, err
	}
	return p.Count(t.Context())
}

func TestStoreIsTheExecutorOfSpilledResults(t *testing.T) {
	t.Parallel()
	st := spill.NewStore(spill.StoreOptions{})
	key, evicted, err := st.Put(rows(10))
	if err != nil || len(evicted) != 0 {
		t.Fatalf("Put = %q, %v, %v", key, evicted, err)
	}
	plan, err := st.Prepare(t.Context(), dualresp.Query{Kind: spill.Kind, Text: key})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := plan.Count(t.Context()); n != 10 || err != nil {
		t.Errorf("Count = %d, %v; want 10", n, err)
	}
	page, err := plan.Page(t.Context(), dualresp.PageRequest{Offset: 2, Limit: 3,
		Order: dualresp.Order{Sort: []dualresp.SortField{{Field: "g", Desc: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range page.Rows {
		got = append(got, string(r))
	}
	// g desc, ties in original order: 2,5,8 (g=2), 1,4,7 (g=1), …
	want := []string{`{"i":8,"g":2}`, `{"i":1,"g":1}`, `{"i":4,"g":1}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sorted page (-want +got):\n%s", diff)
	}
	var streamed int
	streamer, ok := plan.(dualresp.Streamer)
	if !ok {
		t.Fatalf("the plan of a spilled result (%T) does not stream", plan)
	}
	if err := streamer.Stream(t.Context(), dualresp.PageRequest{Offset: 7}, func(json.RawMessage) error { streamed++; return nil }); err != nil || streamed != 3 {
		t.Errorf("Stream from 7 = %d rows, %v; want 3", streamed, err)
	}
	if _, err := st.Prepare(t.Context(), dualresp.Query{Kind: "soql", Text: key}); err == nil {
		t.Error("Prepare of another kind succeeded; want an error")
	}
}

func TestStoreEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	st := spill.NewStore(spill.StoreOptions{MaxBlobs: 2, MaxBlobsPerOwner: 2})
	k1, _, _ := st.Put(rows(1))
	st.SetID(k1, "id1")
	k2, _, _ := st.Put(rows(2))
	if _, err := count(t, st, dualresp.Query{Kind: spill.Kind, Text: k1}); err != nil { // k1 is now the most recent
		t.Fatal(err)
	}
	_, evicted, _ := st.Put(rows(3))
	if len(evicted) != 1 || evicted[0].Key != k2 || evicted[0].ID != "" {
		t.Errorf("evicted = %+v; want %s (least recently used)", evicted, k2)
	}
	if _, err := count(t, st, dualresp.Query{Kind: spill.Kind, Text: k2}); !errors.Is(err, spill.ErrGone) {
		t.Errorf("Count(evicted) = %v; want ErrGone", err)
	}
	if n, _ := st.Stats(); n != 2 || !st.Has(k1) || st.IDs()[k1] != "id1" {
		t.Errorf("Stats = %d, Has(k1) = %v, IDs = %v", n, st.Has(k1), st.IDs())
	}
}
