package datasf

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// categoryCount is one category of the portal and how many of the datasets
// read have it.
type categoryCount struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// categoryScan is how many datasets (newest first) are read to list the
// portal's categories when a search or a category finds nothing.
const categoryScan = 1000

// categoriesTTL is how long the list of categories is reused: categories
// change rarely, and reading them costs a catalog request of categoryScan
// datasets.
const categoriesTTL = 10 * time.Minute

// noHits lists what the portal does hold, for an answer that found
// nothing: its categories (by number of datasets), and their table. A
// failure to read them leaves the answer as it was (nil, an empty table).
func (s *toolServer) noHits(ctx context.Context) []categoryCount {
	out, ok := s.categories.Get("")
	if !ok {
		var err error
		if out, err = s.readCategories(ctx); err != nil {
			s.log.WarnContext(ctx, "listing the categories for an answer without hits", "err", err)
			return nil
		}
		s.categories.Add("", out)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// categoryTable is the markdown table of an answer's categories.
func categoryTable(cats []categoryCount) string {
	var b strings.Builder
	b.WriteString("| category | datasets |\n|---|---|\n")
	for _, c := range cats {
		fmt.Fprintf(&b, "| %s | %d |\n", cell(c.Name), c.Count)
	}
	return b.String()
}

// readCategories reads the categories of the newest categoryScan datasets,
// most datasets first.
func (s *toolServer) readCategories(ctx context.Context) ([]categoryCount, error) {
	ds, err := s.client.List(ctx, "", categoryScan)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, d := range ds {
		if d.Category != "" {
			counts[d.Category]++
		}
	}
	out := make([]categoryCount, 0, len(counts))
	for name, n := range counts {
		out = append(out, categoryCount{Name: name, Count: n})
	}
	slices.SortFunc(out, func(a, b categoryCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name))
	})
	return out, nil
}
