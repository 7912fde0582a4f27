package datasf

import (
	"fmt"
	"strings"
)

// Every zero explained: an answer of no rows, or of aggregates all 0 or
// null, says why when it can (see internal/hints for what a query's
// conditions are checked against). This file holds the zeros that come
// from the data source itself: offline, a dataset only the catalog
// describes (--catalog) has no rows at all, and its every count is 0
// there whatever the live dataset holds.

// zeroHint is a hint of this file: kind names it for a program.
type zeroHint struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func (h zeroHint) HintMessage() string { return h.Message }

// isCatalogOnly reports whether, offline, the dataset id of domain has no
// data: only the catalog describes it.
func (s *toolServer) isCatalogOnly(domain, id string) bool {
	return s.catalogOnly != nil && s.catalogOnly(domain, id)
}

// catalogOnlyWords is what an answer says of a dataset only the offline
// catalog describes.
func catalogOnlyWords(id string) string {
	return "Offline, " + id + " has no rows: the offline catalog describes it, but no data is loaded for it, " +
		"so its counts here are 0 whatever the live dataset holds. The server's operator can serve its rows with --data " +
		id + "=FILE (its export from the portal), or run the server without --offline."
}

// catalogOnlyHint is the hint of a query answer on a dataset only the
// offline catalog describes (nil when it has data, or online).
func (s *toolServer) catalogOnlyHint(domain, id string) *zeroHint {
	if !s.isCatalogOnly(domain, id) {
		return nil
	}
	return &zeroHint{Kind: "no_data_offline", Message: catalogOnlyWords(id)}
}

// catalogOnlyNote marks, offline, the datasets of a catalog answer that
// only the catalog describes: their row count is left out (none is
// loaded; 0 would read as an empty dataset), and the sentence returned
// names them ("" when there are none). domain is the portal of the items
// that name none.
func (s *toolServer) catalogOnlyNote(domain string, items []datasetItem) string {
	if s.catalogOnly == nil {
		return ""
	}
	var ids []string
	for i, it := range items {
		d := domain
		if it.Domain != "" {
			d = it.Domain
		}
		if s.catalogOnly(d, it.ID) {
			items[i].RowCount = nil
			ids = append(ids, it.ID)
		}
	}
	switch len(ids) {
	case 0:
		return ""
	case 1:
		return "Offline, " + ids[0] + " has no rows (only the catalog describes it)."
	}
	list := strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
	if len(ids) > 5 {
		list = strings.Join(ids[:5], ", ") + fmt.Sprintf(" and %d more", len(ids)-5)
	}
	return "Offline, " + list + " have no rows (only the catalog describes them)."
}
