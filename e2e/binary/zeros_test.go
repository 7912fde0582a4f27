//go:build e2e

package binary

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
)

// zeroAnswer is what the zero tests read of a query answer.
type zeroAnswer struct {
	Summary  string `json:"summary"`
	Metadata struct {
		TotalCount int `json:"total_count"`
	} `json:"metadata"`
	Results []map[string]any `json:"results"`
	Hints   []struct {
		Kind   string `json:"kind"`
		Fix    string `json:"fix"`
		Extent *struct {
			MinLatitude  float64 `json:"min_latitude"`
			MaxLatitude  float64 `json:"max_latitude"`
			MinLongitude float64 `json:"min_longitude"`
			MaxLongitude float64 `json:"max_longitude"`
		} `json:"extent"`
		Message string `json:"message"`
	} `json:"hints"`
}

// zero is an answer with no row, or one row of aggregates all 0.
func (a zeroAnswer) zero() bool {
	if a.Metadata.TotalCount == 0 {
		return true
	}
	if a.Metadata.TotalCount != 1 || len(a.Results) != 1 {
		return false
	}
	for _, v := range a.Results[0] {
		if fmt.Sprint(v) != "0" {
			return false
		}
	}
	return true
}

func (a zeroAnswer) kinds() []string {
	var k []string
	for _, h := range a.Hints {
		k = append(k, h.Kind)
	}
	return k
}

// Every zero explained, through the built binary on the offline snapshot:
// a spatial filter with its coordinates swapped gets the call swapped
// (which then finds rows); one far from the data gets the data's extent;
// a value outside a column's range gets the range; OFFSET past the end,
// HAVING over every group, a later stage that keeps no row, a SEARCH that
// matches nothing and conditions that match only apart are said;
// an analysis of an empty result names the empty table.
func TestEveryZeroExplained(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary on the offline snapshot")
	}
	t.Parallel()
	// The food trucks (480 rows, a point column "location"): their hints
	// take a moment, however loaded the machine.
	query := func(t *testing.T, soql string) zeroAnswer {
		t.Helper()
		var a zeroAnswer
		offlineJSON(t, &a, "query", "rqzj-sfat", soql)
		return a
	}
	// The query, on the police incidents (250,000 rows): a
	// latitude of -122 needs no request to be seen as swapped.
	t.Run("the incidents, longitude first", func(t *testing.T) {
		t.Parallel()
		var a zeroAnswer
		offlineJSON(t, &a, "query", "wg3w-h783", "SELECT count(*) WHERE within_circle(point, -122.4075, 37.788, 500)")
		const fix = "within_circle(point, 37.788, -122.4075, 500)"
		if !a.zero() || len(a.Hints) != 1 || a.Hints[0].Kind != "spatial_swapped" || a.Hints[0].Fix != fix || !strings.Contains(a.Summary, "Swapped: "+fix) {
			t.Errorf("within_circle(point, -122.4075, 37.788, 500): summary %q, hints %v; want the fix %s", a.Summary, a.kinds(), fix)
		}
	})
	// A point inside the data: the extent's centre, from a hint.
	far := query(t, "SELECT count(*) WHERE within_circle(location, 40.7128, -74.0060, 500)")
	if !far.zero() || len(far.Hints) != 1 || far.Hints[0].Kind != "spatial_outside" || far.Hints[0].Extent == nil ||
		!strings.Contains(far.Summary, "the points of location lie at latitude") {
		t.Fatalf("within_circle around New York: summary %q, hints %v; want a spatial_outside hint with the extent", far.Summary, far.kinds())
	}
	e := far.Hints[0].Extent
	lat, lon := (e.MinLatitude+e.MaxLatitude)/2, (e.MinLongitude+e.MaxLongitude)/2

	for _, tc := range []struct{ name, soql string }{
		{"within_circle, longitude first", fmt.Sprintf("SELECT count(*) WHERE within_circle(location, %.4f, %.4f, 3000)", lon, lat)},
		{"within_box, longitude first", fmt.Sprintf("SELECT count(*) WHERE within_box(location, %.4f, %.4f, %.4f, %.4f)", lon-0.03, lat+0.03, lon+0.03, lat-0.03)},
		{"within_polygon, latitude first", fmt.Sprintf("SELECT count(*) WHERE within_polygon(location, 'MULTIPOLYGON (((%.4f %.4f, %.4f %.4f, %.4f %.4f, %.4f %.4f)))')",
			lat-0.03, lon-0.03, lat+0.03, lon-0.03, lat+0.03, lon+0.03, lat-0.03, lon-0.03)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := query(t, tc.soql)
			if !a.zero() || len(a.Hints) != 1 || a.Hints[0].Kind != "spatial_swapped" || a.Hints[0].Fix == "" ||
				!strings.Contains(a.Summary, "Swapped: "+a.Hints[0].Fix) {
				t.Fatalf("%s: summary %q, hints %v; want a spatial_swapped hint with the fix in the summary", tc.soql, a.Summary, a.kinds())
			}
			fixed := query(t, "SELECT count(*) WHERE "+a.Hints[0].Fix)
			if fixed.zero() {
				t.Errorf("the fix %s finds no row either: %q", a.Hints[0].Fix, fixed.Summary)
			}
		})
	}

	for _, tc := range []struct{ name, soql, kind, says string }{
		{"a number out of range", "SELECT applicant WHERE objectid = -1", "out_of_range", "objectid = -1 matches no row: objectid runs from"},
		{"a date out of range", "SELECT count(*) WHERE approved > '2090-01-01'", "out_of_range", "approved > '2090-01-01' matches no row: approved runs from"},
		{"OFFSET past the end", "SELECT applicant OFFSET 900000000", "offset_past_end", "OFFSET 900000000 is past the end: without it the query has"},
		{"HAVING over every group", "SELECT status, count(*) AS n GROUP BY status HAVING n > 900000000", "having_excludes_all", "excludes every group: without it the query has"},
		{"a later stage", "SELECT status, count(*) AS n GROUP BY status |> SELECT status, n WHERE n > 900000000", "later_stage_excludes_all", "its later stages (after |>) keep none of them"},
		// The first stage is what is empty: said as of a query of one stage.
		{"an empty first stage", "SELECT status, count(*) AS n GROUP BY status HAVING n > 900000000 |> SELECT status, n", "having_excludes_all", "excludes every group: without it the query has"},
		{"SEARCH", "SELECT applicant SEARCH 'zzzqqqxxx'", "search_matches_none", "SEARCH 'zzzqqqxxx' matches none of the query's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := query(t, tc.soql)
			if !a.zero() || len(a.Hints) != 1 || a.Hints[0].Kind != tc.kind || !strings.Contains(a.Summary, tc.says) {
				t.Errorf("%s: summary %q, hints %v; want one %s hint saying %q", tc.soql, a.Summary, a.kinds(), tc.kind, tc.says)
			}
		})
	}

	t.Run("conditions only apart", func(t *testing.T) {
		t.Parallel()
		// Two values of one column: each matches rows, never both.
		var schema struct {
			Columns []struct {
				FieldName string   `json:"fieldName"`
				Values    []string `json:"values"`
			} `json:"columns"`
		}
		offlineJSON(t, &schema, "schema", "rqzj-sfat")
		var col string
		var values []string
		for _, c := range schema.Columns {
			if len(c.Values) >= 2 {
				col, values = c.FieldName, c.Values
				break
			}
		}
		if col == "" {
			t.Fatal("no column of rqzj-sfat has two values listed")
		}
		quote := func(v string) string { return strings.ReplaceAll(v, "'", "''") } // "Natan's Catering"
		soql := fmt.Sprintf("SELECT applicant WHERE %[1]s = '%[2]s' AND %[1]s = '%[3]s'", col, quote(values[0]), quote(values[1]))
		a := query(t, soql)
		k := a.kinds()
		if !a.zero() || len(k) == 0 || k[len(k)-1] != "conditions_together" || !strings.Contains(a.Summary, "but no row meets them all together") {
			t.Errorf("%s: summary %q, hints %v; want a conditions_together hint last", soql, a.Summary, k)
		}
	})

	t.Run("analyze of an empty result", func(t *testing.T) {
		t.Parallel()
		var a struct{ Summary string }
		offlineJSON(t, &a, "analyze", "SELECT * FROM t", "--query", "t=rqzj-sfat:SELECT applicant WHERE status = 'NO SUCH STATUS'")
		if !strings.HasPrefix(a.Summary, "No rows: table t is empty") {
			t.Errorf("analyze of an empty table: summary %q; want it to say table t is empty", a.Summary)
		}
	})
}

// With --catalog, a dataset the catalog describes and no data serves has
// no rows offline: the query, schema and search answers say so, through
// the built binary (its count of 0 is not the live dataset's).
func TestNoRowsOfflineSaid(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary on the offline snapshot")
	}
	t.Parallel()
	root, err := fixtures.Root()
	if err != nil {
		t.Fatal(err)
	}
	catalog := filepath.Join(root, "catalog", "datasf-catalog-630-with-signals.jsonl.gz")
	const trees = "tkzw-k3nq" // in the catalog, not in the built-in snapshot
	var a zeroAnswer
	offlineJSON(t, &a, "query", trees, "SELECT count(*)", "--catalog", catalog)
	if !a.zero() || len(a.Hints) != 1 || a.Hints[0].Kind != "no_data_offline" || !strings.Contains(a.Summary, "Offline, "+trees+" has no rows") {
		t.Errorf("query of %s with --catalog: summary %q, hints %v; want a no_data_offline hint", trees, a.Summary, a.kinds())
	}
	var sc struct{ Summary string }
	offlineJSON(t, &sc, "schema", trees, "--catalog", catalog)
	if !strings.Contains(sc.Summary, "Offline, "+trees+" has no rows") {
		t.Errorf("schema of %s with --catalog: summary %q; want it to say it has no rows offline", trees, sc.Summary)
	}
	var found struct {
		Summary string
		Results []struct {
			ID       string `json:"id"`
			RowCount *int64 `json:"row_count"`
		}
	}
	offlineJSON(t, &found, "search", "street tree list", "--catalog", catalog)
	seen := false
	for _, r := range found.Results {
		if r.ID == trees {
			seen = true
			if r.RowCount != nil {
				t.Errorf("search with --catalog: %s has row_count %d; want none (no data is loaded for it)", trees, *r.RowCount)
			}
			if !strings.Contains(found.Summary, trees) || !strings.Contains(found.Summary, "no rows (only the catalog describes") {
				t.Errorf("search with --catalog: summary %q; want it to say %s has no rows offline", found.Summary, trees)
			}
		}
	}
	if !seen {
		t.Errorf("search \"street tree list\" with --catalog did not find %s: %+v", trees, found.Results)
	}
}
