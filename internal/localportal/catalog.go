package localportal

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/datasf-mcp/datasf-mcp/internal/rank"
)

type catalogHit struct {
	sc     Schema
	link   string
	score  float64
	domain string // the portal that publishes it
}

// rankedCatalog keeps the search index of the datasets last searched:
// rebuilt only when the catalog changed (a dataset added, loaded or
// updated), so a search does not re-analyse 600 descriptions.
type rankedCatalog struct {
	mu  sync.Mutex
	key uint64
	ix  *rank.Index
}

// rankHits scores hits for query with package rank, the ranker
// search_datasf uses, and keeps those that match, best first.
func (s *Emulator) rankHits(hits []catalogHit, query string) []catalogHit {
	h := fnv.New64a()
	for _, x := range hits {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00%d\x00%d\x00%q\x00%d\x00%d\x00", x.domain, x.sc.ID, x.sc.Name, len(x.sc.Description), len(x.sc.Columns), x.sc.UpdatedAt.UnixNano(),
			x.sc.Signals.Tags, x.sc.Signals.PageViews, x.sc.Signals.Downloads)
	}
	key := h.Sum64()
	s.ranked.mu.Lock()
	ix := s.ranked.ix
	if ix == nil || s.ranked.key != key || ix.Len() != len(hits) {
		docs := make([]rank.Doc, len(hits))
		for i, x := range hits {
			docs[i] = rankDoc(x.sc)
		}
		ix = rank.New(docs)
		s.ranked.key, s.ranked.ix = key, ix
	}
	s.ranked.mu.Unlock()
	found := ix.Search(query, 0)
	out := make([]catalogHit, 0, len(found))
	for _, f := range found {
		x := hits[f.Index]
		x.score = f.Score
		out = append(out, x)
	}
	return out
}

// rankDoc is what the ranker reads of a dataset.
func rankDoc(sc Schema) rank.Doc {
	d := rank.Doc{ID: sc.ID, Name: sc.Name, Description: sc.Description, Category: sc.Category,
		Department: sc.Department, UpdatedAt: sc.UpdatedAt,
		Tags: sc.Signals.Tags, PageViews: sc.Signals.PageViews, Downloads: sc.Signals.Downloads}
	for _, c := range sc.Columns {
		if !isSystemField(c.FieldName) {
			d.Columns = append(d.Columns, rank.Column{Name: c.Name, FieldName: c.FieldName, Description: c.Description})
		}
	}
	return d
}

func listParam(v []string) []string {
	var out []string
	for _, s := range v {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func (s *Emulator) serveCatalog(w http.ResponseWriter, r *http.Request) {
	if strings.TrimSuffix(r.URL.Path, "/") == "/api/catalog/v1/domains" {
		s.serveDomains(w, r)
		return
	}
	params := r.URL.Query()
	limit, offset := 100, 0
	for _, p := range []struct {
		name string
		dst  *int
	}{{"limit", &limit}, {"offset", &offset}} {
		if v := params.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
					"message": p.name + " must be a non-negative integer, got " + strconv.Quote(v)}})
				return
			}
			*p.dst = n
		}
	}
	if limit > 10000 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "limit must be less than or equal to 10000"}})
		return
	}

	// Every portal this one serves answers for itself (domains.go).
	var hits []catalogHit
	for _, p := range s.federation() {
		hits = append(hits, p.catalogHits(params)...)
	}
	if q := strings.TrimSpace(params.Get("q")); q != "" {
		hits = s.rankHits(hits, q)
	}

	order := strings.Fields(strings.ReplaceAll(params.Get("order"), "+", " "))
	field, desc := "relevance", true
	if len(order) > 0 {
		field = order[0]
		desc = field != "name"
		if len(order) > 1 {
			desc = strings.EqualFold(order[1], "desc")
		}
	}
	less := func(a, b catalogHit) int { // <0 when a sorts first, ascending
		switch strings.ToLower(field) {
		case "name":
			return strings.Compare(strings.ToLower(a.sc.Name), strings.ToLower(b.sc.Name))
		case "updatedat", "data_updated_at", "createdat", "metadata_updated_at":
			return a.sc.UpdatedAt.Compare(b.sc.UpdatedAt)
		case "dataset_id":
			return strings.Compare(a.sc.ID, b.sc.ID)
		default: // relevance; without a query, freshness
			if a.score != b.score {
				return cmp.Compare(a.score, b.score)
			}
			return a.sc.UpdatedAt.Compare(b.sc.UpdatedAt)
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		c := less(hits[i], hits[j])
		if c == 0 {
			return hits[i].sc.ID < hits[j].sc.ID
		}
		if desc {
			return c > 0
		}
		return c < 0
	})

	total := len(hits)
	if offset > len(hits) {
		offset = len(hits)
	}
	hits = hits[offset:]
	if limit < len(hits) {
		hits = hits[:limit]
	}
	results := make([]map[string]any, 0, len(hits))
	for _, h := range hits {
		results = append(results, s.discoveryResult(h))
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"results":       results,
		"resultSetSize": total,
		"timings":       map[string]any{"serviceMillis": 1, "searchMillis": []int{0, 0}},
		"warnings":      []any{},
	})
}

// catalogHits are this portal's datasets that pass the Discovery filters
// of params (domains, search_context, only, categories, ids).
func (s *Emulator) catalogHits(params url.Values) []catalogHit {
	// Domain, type, category and id filters.
	domainOK := func(key string) bool {
		vals := listParam(params[key])
		if len(vals) == 0 {
			return true
		}
		for _, d := range vals {
			if strings.EqualFold(d, s.opts.Domain) {
				return true
			}
		}
		return false
	}
	typeOK := true
	if only := listParam(params["only"]); len(only) > 0 {
		typeOK = false
		for _, o := range only {
			if strings.EqualFold(o, "dataset") || strings.EqualFold(o, "datasets") {
				typeOK = true
			}
		}
	}
	cats := listParam(append(params["categories"], params["categories[]"]...))
	ids := listParam(append(params["ids"], params["ids[]"]...))

	s.mu.RLock()
	var hits []catalogHit
	if domainOK("domains") && domainOK("search_context") && typeOK {
		for _, id := range s.order {
			var sc Schema
			link := ""
			if e, ok := s.catalog[id]; ok {
				sc, link = e.schema, e.link
			}
			if p, ok := s.pending[id]; ok && (p.exact || sc.ID == "") {
				sc = p.schema
			}
			if ds, ok := s.datasets[id]; ok {
				sc = ds.schema
			}
			if len(ids) > 0 && !containsFold(ids, id) {
				continue
			}
			if len(cats) > 0 && !containsFold(cats, sc.Category) {
				continue
			}
			hits = append(hits, catalogHit{sc: sc, link: link, domain: s.opts.Domain})
		}
	}
	s.mu.RUnlock()
	return hits
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// discoveryResult renders one dataset in the Discovery API result shape.
func (s *Emulator) discoveryResult(h catalogHit) map[string]any {
	sc := h.sc
	var names, fields, types, descs []string
	formats := []map[string]any{}
	for _, c := range sc.Columns {
		// The live Discovery API lists a dataset's computed region
		// columns (":@computed_region_…", "SF Find Neighborhoods") with
		// the others, and leaves out only the system fields (":id"): a
		// 2025 recording of https://api.us.socrata.com/api/catalog/v1
		// for data.cityofchicago.org gives 8pix-ypme's columns_field_name
		// as […, ":@computed_region_bdys_3d7i", ":@computed_region_vrxf_vc4k", …]
		// (ryanzomorrodi/socratadata at fa758f4c,
		// tests/testthat/soc_discovery/api.us.socrata.com/api/catalog/v1-d51211.json),
		// and DataSF's own catalog metadata lists them among the columns.
		if isSystemField(c.FieldName) {
			continue
		}
		names = append(names, c.Name)
		fields = append(fields, c.FieldName)
		types = append(types, discoveryType(c.DataType))
		descs = append(descs, c.Description)
		formats = append(formats, map[string]any{})
	}
	domain := h.domain
	if domain == "" {
		domain = s.opts.Domain
	}
	link := h.link
	if link == "" {
		link = "https://" + domain + "/" + slug(sc.Category) + "/" + slug(sc.Name) + "/" + sc.ID
	}
	// An undated entry (a catalog line without rows_updated_at) has null
	// dates, not year 1 (0001-01-01T00:00:00.000Z), which reads as a date.
	var updated any
	if !sc.UpdatedAt.IsZero() {
		updated = rfc3339ms(sc.UpdatedAt)
	}
	user := map[string]any{"id": "fake-user", "user_type": "interactive", "display_name": "localportal"}
	return map[string]any{
		"resource": map[string]any{
			"name":                sc.Name,
			"id":                  sc.ID,
			"resource_name":       nil,
			"parent_fxf":          []string{},
			"description":         sc.Description,
			"attribution":         sc.Department,
			"attribution_link":    nil,
			"contact_email":       nil,
			"type":                "dataset",
			"updatedAt":           updated,
			"createdAt":           updated,
			"metadata_updated_at": updated,
			"data_updated_at":     updated,
			"page_views":          map[string]any{"page_views_last_week": 0, "page_views_last_month": 0, "page_views_total": sc.Signals.PageViews},
			"columns_name":        nonNil(names),
			"columns_field_name":  nonNil(fields),
			"columns_datatype":    nonNil(types),
			"columns_description": nonNil(descs),
			"columns_format":      formats,
			"download_count":      sc.Signals.Downloads,
			"provenance":          "official",
			"lens_view_type":      "tabular",
			"lens_display_type":   "table",
			"locked":              false,
			"blob_mime_type":      nil,
			"hide_from_data_json": false,
			"publication_date":    updated,
		},
		"classification": map[string]any{
			"categories":      []string{},
			"tags":            []string{},
			"domain_category": sc.Category,
			"domain_tags":     nonNil(sc.Signals.Tags),
			"domain_metadata": []any{},
		},
		"metadata":  map[string]any{"domain": domain, "license": "Public Domain"},
		"permalink": "https://" + domain + "/d/" + sc.ID,
		"link":      link,
		"owner":     user,
		"creator":   user,
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// CatalogOnly reports whether id is a dataset of this portal (or of the
// portal it serves for domain, see DomainPortal) that only the catalog
// describes: no data is loaded or waiting to load for it, so its queries
// answer no rows (see LoadCatalog). An answer built on it must say so:
// its zero says nothing of the live dataset.
func (s *Emulator) CatalogOnly(domain, id string) bool {
	p := s
	if domain != "" {
		var ok bool
		if p, ok = s.DomainPortal(domain); !ok {
			return false
		}
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	_, described := p.catalog[id]
	return described && p.datasets[id] == nil && p.pending[id] == nil
}
