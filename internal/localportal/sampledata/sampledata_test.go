package sampledata

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	idPattern = regexp.MustCompile(`^[a-z0-9]{4}-[a-z0-9]{4}$`)
	tsPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000$`)
)

func TestDatasetsAreDeterministicAndMatchTheirColumns(t *testing.T) {
	t.Parallel()
	for _, d := range Datasets(Options{Scale: 0.01}) {
		t.Run(d.ID, func(t *testing.T) {
			t.Parallel()
			if !idPattern.MatchString(d.ID) {
				t.Errorf("id %q is not a 4x4", d.ID)
			}
			if d.Name == "" || d.Category == "" || d.Rows < 1 || len(d.Columns) == 0 {
				t.Fatalf("dataset %+v is incomplete", d.ID)
			}
			types := map[string]string{}
			for _, c := range d.Columns {
				types[c.FieldName] = c.DataType
			}
			for i := range d.Rows {
				row := d.Row(i)
				if diff := cmp.Diff(row, d.Row(i)); diff != "" {
					t.Fatalf("Row(%d) differs between calls (-first +second):\n%s", i, diff)
				}
				for k, v := range row {
					typ, ok := types[k]
					if !ok {
						t.Fatalf("Row(%d) has key %q that is not a column", i, k)
					}
					if !valueFits(typ, v) {
						t.Fatalf("Row(%d)[%q] = %#v does not fit type %s", i, k, v, typ)
					}
				}
			}
			if cmp.Equal(d.Row(0), d.Row(1)) && d.Rows > 1 {
				t.Errorf("rows 0 and 1 are identical; the generator is not varying rows")
			}
		})
	}
}

func valueFits(typ string, v any) bool {
	switch typ {
	case "text":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "checkbox":
		_, ok := v.(bool)
		return ok
	case "calendar_date":
		s, ok := v.(string)
		return ok && tsPattern.MatchString(s)
	case "point":
		m, ok := v.(map[string]any)
		if !ok || m["type"] != "Point" {
			return false
		}
		c, ok := m["coordinates"].([]any)
		return ok && len(c) == 2
	}
	return false
}

func TestDefaultScaleHasALargeDataset(t *testing.T) {
	t.Parallel()
	largest := 0
	for _, d := range Datasets(Options{}) {
		largest = max(largest, d.Rows)
	}
	if largest < 200_000 {
		t.Errorf("largest sample dataset has %d rows; want at least 200,000 so paging is real", largest)
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
