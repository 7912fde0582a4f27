package localportal

import (
	"net/http"
	"regexp"
	"strings"
	"time"
)

func (s *Emulator) serveViews(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/views/"), ".json")
	sc, ok := s.schemaOf(r.Context(), id)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"code": "not_found", "error": true,
			"message": "Cannot find view with id " + id})
		return
	}
	// Statistics come from rows: a dataset made or loaded on first use
	// (and not used yet) has none, as a real portal's new dataset has no
	// cachedContents until it computes them. A Views request does not
	// make the dataset.
	var stats map[string]*columnStats
	s.mu.RLock()
	ds := s.datasets[id]
	s.mu.RUnlock()
	if ds != nil {
		stats = s.storedStats(ds)
	}
	writeJSON(w, http.StatusOK, viewDocument(sc, stats))
}

// viewDocument renders a schema in the Views API document shape, with each
// column's cachedContents from stats (by field name) when it has some.
func viewDocument(sc Schema, stats map[string]*columnStats) map[string]any {
	cols := make([]map[string]any, 0, len(sc.Columns))
	for i, c := range sc.Columns {
		col := map[string]any{
			"id":             100000 + i + 1,
			"name":           c.Name,
			"dataTypeName":   c.DataType,
			"fieldName":      c.FieldName,
			"position":       i + 1,
			"renderTypeName": c.DataType,
			"tableColumnId":  200000 + i + 1,
			"format":         map[string]any{},
		}
		if c.Description != "" {
			col["description"] = c.Description
		}
		if st := stats[c.FieldName]; st != nil {
			col["cachedContents"] = st
		}
		cols = append(cols, col)
	}
	updated := sc.UpdatedAt.Unix()
	doc := map[string]any{
		"id":               sc.ID,
		"name":             sc.Name,
		"assetType":        "dataset",
		"category":         sc.Category,
		"createdAt":        updated,
		"description":      sc.Description,
		"displayType":      "table",
		"newBackend":       true,
		"provenance":       "official",
		"publicationStage": "published",
		"rowsUpdatedAt":    updated,
		"viewLastModified": updated,
		"viewType":         "tabular",
		"columns":          cols,
		"metadata":         map[string]any{},
	}
	if sc.UpdatedAt.IsZero() {
		// An entry the catalog gave no date: say none, rather than the
		// year 1 as a negative Unix time.
		delete(doc, "createdAt")
		delete(doc, "rowsUpdatedAt")
		delete(doc, "viewLastModified")
	}
	if sc.Department != "" {
		doc["metadata"] = map[string]any{"custom_fields": map[string]any{
			"Department Metrics": map[string]any{"Publishing Department": sc.Department}}}
	}
	return doc
}

var slugRE = regexp.MustCompile(`[^A-Za-z0-9]+`)

func slug(s string) string {
	return strings.Trim(slugRE.ReplaceAllString(s, "-"), "-")
}

func rfc3339ms(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
