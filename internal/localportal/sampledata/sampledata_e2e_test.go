//go:build e2e

package sampledata

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRowsAreRealRows checks that the generated rows' columns agree: each
// row's related values occur together in a real row. Film locations
// against the repository's own copy of the 2015 export (every (director,
// title) pair, with the location, company and lead actor); incidents, 311
// cases and food trucks against the real rows they are drawn from. The
// incidents have 250,000 distinct ids at the default scale.
func TestRowsAreRealRows(t *testing.T) {
	t.Parallel()
	real := map[string]map[string]bool{}
	add := func(id string, rows []map[string]any, keys ...string) {
		m := map[string]bool{}
		for _, r := range rows {
			m[key(r, keys...)] = true
		}
		real[id+"/"+strings.Join(keys, ",")] = m
	}
	films := readRowsJSON(t, filepath.Join("..", "..", "..", "testdata", "datasets", "yitu-d5am__film-locations__2015-08.rows.json.gz"))
	checks := map[string][][]string{
		"yitu-d5am": {{"director", "title"}, {"title", "release_year", "locations", "production_company", "director", "actor_1"}},
		"wg3w-h783": {{"incident_code", "incident_category", "incident_subcategory", "incident_description"},
			{"intersection", "police_district", "analysis_neighborhood", "resolution", "report_type_description"}},
		"vw6y-z8j6": {{"service_name", "service_subtype", "agency_responsible", "status_description", "address", "neighborhoods_sffind_boundaries", "police_district", "source"}},
		"rqzj-sfat": {{"applicant", "facilitytype", "locationdescription", "address", "permit", "status", "fooditems"}},
	}
	for id, sets := range checks {
		src := RealRows(id)
		if id == "yitu-d5am" {
			src = films
		}
		for _, keys := range sets {
			add(id, src, keys...)
		}
	}
	for _, d := range Datasets(Options{}) {
		ids := map[string]bool{}
		for i := range d.Rows {
			row := d.Row(i)
			for _, keys := range checks[d.ID] {
				k := key(stringsOf(row), keys...)
				if !real[d.ID+"/"+strings.Join(keys, ",")][k] {
					t.Fatalf("%s row %d: (%s) = %q occurs in no real row", d.ID, i, strings.Join(keys, ", "), strings.ReplaceAll(k, "\x1f", " | "))
				}
			}
			if d.ID == "wg3w-h783" {
				ids[row["incident_id"].(string)] = true
			}
		}
		if d.ID == "wg3w-h783" && (d.Rows != 250_000 || len(ids) != d.Rows) {
			t.Errorf("%s: %d rows, %d distinct incident ids; want 250,000 of each", d.ID, d.Rows, len(ids))
		}
	}
}

// readRowsJSON reads a legacy rows.json export (gzip): each row as a map
// of field name to value.
func readRowsJSON(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Meta struct {
			View struct {
				Columns []struct {
					FieldName string `json:"fieldName"`
				} `json:"columns"`
			} `json:"view"`
		} `json:"meta"`
		Data [][]any `json:"data"`
	}
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	rows := make([]map[string]any, len(doc.Data))
	for i, r := range doc.Data {
		rows[i] = map[string]any{}
		for j, c := range doc.Meta.View.Columns {
			if j < len(r) && r[j] != nil {
				rows[i][c.FieldName] = r[j]
			}
		}
	}
	return rows
}

// key joins a row's values of keys, "" for a missing one.
func key(row map[string]any, keys ...string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		if v, ok := row[k]; ok {
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, "\x1f")
}

// stringsOf renders a generated row's values as the real rows give them:
// numbers as their shortest text.
func stringsOf(row map[string]any) map[string]any {
	out := make(map[string]any, len(row))
	for k, v := range row {
		if f, ok := v.(float64); ok {
			v = strconv.FormatFloat(f, 'f', -1, 64)
		}
		out[k] = v
	}
	return out
}
