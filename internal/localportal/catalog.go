package localportal

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// stopWords are ignored in Discovery queries.
var stopWords = map[string]bool{"a": true, "an": true, "and": true, "the": true, "of": true, "in": true,
	"on": true, "for": true, "to": true, "by": true, "with": true, "sf": false}

type catalogHit struct {
	sc     Schema
	link   string
	score  int
	domain string // the portal that publishes it
}

// stem drops a plural ending so that "trucks" finds "Truck".
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "es"):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

// relevance scores sc against the query words: name matches weigh most,
// then column names, category and description. 0 means no match.
func relevance(sc Schema, words []string) int {
	name := strings.ToLower(sc.Name)
	desc := strings.ToLower(sc.Description)
	cat := strings.ToLower(sc.Category + " " + sc.Department)
	var cols strings.Builder
	for _, c := range sc.Columns {
		cols.WriteString(strings.ToLower(c.Name + " " + c.FieldName + " " + c.Description + " "))
	}
	colText := cols.String()
	score := 0
	for _, w := range words {
		switch {
		case strings.Contains(name, w):
			score += 8
		case strings.Contains(colText, w):
			score += 3
		case strings.Contains(cat, w):
			score += 3
		case strings.Contains(desc, w):
			score += 1
		}
	}
	return score
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

func (s *Portal) serveCatalog(w http.ResponseWriter, r *http.Request) {
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

	var words []string
	for _, f := range strings.Fields(strings.ToLower(params.Get("q"))) {
		f = strings.Trim(f, `"'.,;:!?()`)
		if f != "" && !stopWords[f] {
			words = append(words, stem(f))
		}
	}
	// Every portal this one serves answers for itself (domains.go).
	var hits []catalogHit
	for _, p := range s.federation() {
		hits = append(hits, p.catalogHits(params, words)...)
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
				return a.score - b.score
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
// of params (domains, search_context, only, categories, ids) and match the
// query words, scored.
func (s *Portal) catalogHits(params url.Values, words []string) []catalogHit {
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
			score := 0
			if len(words) > 0 {
				if score = relevance(sc, words); score == 0 {
					continue
				}
			}
			hits = append(hits, catalogHit{sc: sc, link: link, score: score, domain: s.opts.Domain})
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
func (s *Portal) discoveryResult(h catalogHit) map[string]any {
	sc := h.sc
	var names, fields, types, descs []string
	formats := []map[string]any{}
	for _, c := range sc.Columns {
		if strings.HasPrefix(c.FieldName, ":") {
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
	updated := rfc3339ms(sc.UpdatedAt)
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
			"page_views":          map[string]any{"page_views_last_week": 0, "page_views_last_month": 0, "page_views_total": 0},
			"columns_name":        nonNil(names),
			"columns_field_name":  nonNil(fields),
			"columns_datatype":    nonNil(types),
			"columns_description": nonNil(descs),
			"columns_format":      formats,
			"download_count":      0,
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
			"domain_tags":     []string{},
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
