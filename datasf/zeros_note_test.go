package datasf

import "testing"

// Offline, the datasets only the catalog describes are named in one
// sentence: all of them up to five, else five and how many more.
func TestCatalogOnlyNote(t *testing.T) {
	t.Parallel()
	s := &toolServer{catalogOnly: func(_, id string) bool { return id != "rows-0000" }}
	items := func(n int) []datasetItem {
		out := []datasetItem{{ID: "rows-0000"}}
		for i := range n {
			out = append(out, datasetItem{ID: "cat" + string(rune('a'+i)) + "-0001"})
		}
		return out
	}
	for _, tt := range []struct {
		n    int
		want string
	}{
		{0, ""},
		{1, "Offline, cata-0001 has no rows (only the catalog describes it)."},
		{3, "Offline, cata-0001, catb-0001 and catc-0001 have no rows (only the catalog describes them)."},
		{9, "Offline, cata-0001, catb-0001, catc-0001, catd-0001, cate-0001 and 4 more have no rows (only the catalog describes them)."},
	} {
		if got := s.catalogOnlyNote("data.sfgov.org", items(tt.n)); got != tt.want {
			t.Errorf("%d catalog-only: %q; want %q", tt.n, got, tt.want)
		}
	}
}
