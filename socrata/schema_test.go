package socrata

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
)

// viewsServer serves a Views document and answers the count query with
// count; it records the SoQL it was sent.
func viewsServer(t *testing.T, id string, view []byte, count string, soql *atomic.Value) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/views/"+id+".json", serveJSON(200, view))
	mux.HandleFunc("/resource/"+id+".json", func(w http.ResponseWriter, r *http.Request) {
		soql.Store(r.URL.Query().Get("$query"))
		w.Header().Set("X-SODA2-Fields", `["count"]`)
		w.Header().Set("X-SODA2-Types", `["number"]`)
		w.Write([]byte(count))
	})
	return mux
}

func TestSchemaFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id, dir, view string
		rows          string // fixture whose rows are counted, in dir ("" for a count file)
		countFile     string
	}{
		{id: "yitu-d5am", dir: "datasets", view: "yitu-d5am__film-locations__2015-08.view.json", rows: "yitu-d5am__film-locations__2015-08.rows.json"},
		{id: "vw6y-z8j6", dir: "datasets", view: "vw6y-z8j6__311-cases-filtered-view__2020-03.view.json", rows: "vw6y-z8j6__311-cases-filtered-view__2020-03.rows.json"},
		{id: "3k2p-39jp", dir: "shape-refs", view: "koop-socrata__seattle__crimes-views.json", countFile: "koop-socrata__seattle__crimes-count.json"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			viewPath := fixtures.Path(t, tt.dir, tt.view)
			var view struct {
				Name, Description, Category string
				RowsUpdatedAt               int64
				Columns                     []struct {
					Name, FieldName, DataTypeName, Description string
					Position                                   int
				}
			}
			readJSON(t, viewPath, &view)
			var wantCount int64
			var countBody []byte
			if tt.rows != "" {
				var rows struct{ Data [][]any }
				readJSON(t, fixtures.Path(t, tt.dir, tt.rows), &rows)
				wantCount = int64(len(rows.Data))
				countBody = fmt.Appendf(nil, `[{"count":"%d"}]`, wantCount)
			} else {
				countBody = readFile(t, fixtures.Path(t, tt.dir, tt.countFile))
				var n []struct{ Count string }
				readJSON(t, fixtures.Path(t, tt.dir, tt.countFile), &n)
				fmt.Sscan(n[0].Count, &wantCount)
			}
			var soql atomic.Value
			c, _, _ := newTestClient(t, viewsServer(t, tt.id, readFile(t, viewPath), string(countBody), &soql), Options{})
			s, err := c.Schema(t.Context(), tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if got := soql.Load(); got != "SELECT count(*) AS count" {
				t.Errorf("count query = %q", got)
			}
			var wantCols []Column
			cols := slices.Clone(view.Columns)
			slices.SortStableFunc(cols, func(a, b struct {
				Name, FieldName, DataTypeName, Description string
				Position                                   int
			}) int {
				return cmp.Compare(a.Position, b.Position)
			})
			for _, c := range cols {
				if !strings.HasPrefix(c.FieldName, ":") {
					wantCols = append(wantCols, Column{Name: c.Name, FieldName: c.FieldName, DataType: c.DataTypeName, Description: c.Description})
				}
			}
			// Stats (cachedContents) have a test of their own.
			if diff := gocmp.Diff(wantCols, s.Columns, cmpopts.IgnoreFields(Column{}, "Stats")); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if s.ID != tt.id || s.Name != view.Name || s.Description != view.Description || s.Category != view.Category {
				t.Errorf("schema = {%q %q %q}; want {%q %q %q}", s.ID, s.Name, s.Category, tt.id, view.Name, view.Category)
			}
			if s.RowCount != wantCount || s.RowCount == view.RowsUpdatedAt {
				t.Errorf("RowCount = %d; want %d (rowsUpdatedAt is %d)", s.RowCount, wantCount, view.RowsUpdatedAt)
			}
			if s.UpdatedAt.Unix() != view.RowsUpdatedAt {
				t.Errorf("UpdatedAt = %v; want unix %d", s.UpdatedAt, view.RowsUpdatedAt)
			}
			t.Logf("%s: %d columns (of %d in the view), row count %d", tt.id, len(s.Columns), len(view.Columns), s.RowCount)
		})
	}
}

func TestSchemaErrors(t *testing.T) {
	t.Parallel()
	view := []byte(`{"id":"abcd-1234","name":"x","columns":[{"fieldName":"a","dataTypeName":"text","position":1}]}`)
	tests := []struct {
		name         string
		viewStatus   int
		viewBody     []byte
		countStatus  int
		countBody    string
		wantNotFound bool
		wantCode     string
	}{
		{"views 404", 404, []byte(`{"code":"not_found","error":true,"message":"Cannot find view with id abcd-1234"}`), 200, `[{"count":"1"}]`, true, "not_found"},
		{"count dataset.missing", 200, view, 404, `{"code":"dataset.missing","error":true,"message":"Not found","data":{"id":"abcd-1234"}}`, true, "dataset.missing"},
		{"count without a count", 200, view, 200, `[{"n":"1"}]`, false, "invalid_response"},
		{"count not a number", 200, view, 200, `[{"count":"many"}]`, false, "invalid_response"},
		{"count two rows", 200, view, 200, `[{"count":"1"},{"count":"2"}]`, false, "invalid_response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mux := http.NewServeMux()
			mux.HandleFunc("/api/views/abcd-1234.json", serveJSON(tt.viewStatus, tt.viewBody))
			mux.HandleFunc("/resource/abcd-1234.json", serveJSON(tt.countStatus, []byte(tt.countBody)))
			c, _, _ := newTestClient(t, mux, Options{})
			s, err := c.Schema(t.Context(), "abcd-1234")
			var api *APIError
			if !errors.As(err, &api) || api.Code != tt.wantCode {
				t.Fatalf("Schema = %v, %v; want an APIError with code %q", s, err, tt.wantCode)
			}
			if errors.Is(err, ErrNotFound) != tt.wantNotFound {
				t.Errorf("errors.Is(err, ErrNotFound) = %v; want %v", !tt.wantNotFound, tt.wantNotFound)
			}
		})
	}
}

func TestColumnType(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"text": "text", "number": "number", "double": "double", "money": "number",
		"calendar_date": "floating_timestamp", "date": "fixed_timestamp", "checkbox": "boolean",
		"point": "point", "location": "location", "url": "url",
		"multipolygon": "multipolygon", "polygon": "polygon", "line": "line", "multiline": "multiline", "multipoint": "multipoint",
		"photo": "photo", "document": "document", "html": "text", "email": "text", "phone": "text", "blob": "blob", "json": "json",
		"percent": "number", "stars": "number", "Calendar_Date": "floating_timestamp", "": "text", "meta_data": "text",
	}
	for in, want := range tests {
		if got := ColumnType(in); got != want {
			t.Errorf("ColumnType(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestColumnTypeAgainstRecordedHeaders: the Views API dataTypeName of each
// column of soda.demo.socrata.com's "All OBE Column Types" dataset
// (2asz-g9qq) and the X-SODA2-Types name its Resource API answers gave for
// the same column, as observed in 2025 (facts stated here; see
// https://dev.socrata.com/docs/datatypes/). ColumnType must map the first
// to the second.
func TestColumnTypeAgainstRecordedHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct{ field, viewType, sodaType string }{
		{":@computed_region_k83t_ady5", "number", "number"},
		{"checkbox_column", "checkbox", "boolean"},
		{"date_time_column", "calendar_date", "floating_timestamp"},
		{"date_time_with_timezone_column", "date", "fixed_timestamp"},
		{"document", "document", "document"},
		{"email_column", "text", "text"},
		{"flag_column", "text", "text"},
		{"formatted_text_column", "text", "text"},
		{"location_column", "location", "location"},
		{"money_column", "number", "number"},
		{"multiple_choice", "text", "text"},
		{"number_column", "number", "number"},
		{"percent_column", "number", "number"},
		{"phone_column", "text", "text"},
		{"photo_column", "photo", "photo"},
		{"plain_text_column", "text", "text"},
		{"star_column", "number", "number"},
		{"website_url_column", "url", "url"},
	}
	for _, tt := range tests {
		if got := ColumnType(tt.viewType); got != tt.sodaType {
			t.Errorf("ColumnType(%q) = %q; the portal's header says %q for column %s", tt.viewType, got, tt.sodaType, tt.field)
		}
	}
}

// Schema reads each column's cachedContents: the real Film Locations view
// document has them (numbers as JSON numbers); older portals write them
// as strings.
func TestSchemaColumnStats(t *testing.T) {
	t.Parallel()
	view := readFile(t, fixtures.Path(t, "datasets", "yitu-d5am__film-locations__2015-08.view.json"))
	var soql atomic.Value
	c, _, _ := newTestClient(t, viewsServer(t, "yitu-d5am", view, `[{"count":"1151"}]`, &soql), Options{})
	s, err := c.Schema(t.Context(), "yitu-d5am")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*ColumnStats{}
	for _, col := range s.Columns {
		byName[col.FieldName] = col.Stats
	}
	title, locations := byName["title"], byName["locations"]
	if title == nil || title.NonNull != 1151 || title.Null != 0 || len(title.Top) != 20 || title.Top[0] != (TopValue{"Blue Jasmine", 20}) {
		t.Errorf("title stats = %+v; want 1151 non-null, 0 null, 20 top values, Blue Jasmine (20) first", title)
	}
	if locations == nil || locations.Null != 54 || locations.NonNull != 1097 {
		t.Errorf("locations stats = %+v; want 54 null, 1097 non-null", locations)
	}
	if title.TopIsComplete() {
		t.Error("title: TopIsComplete with 20 top values; want false (the portal keeps 20)")
	}

	strs := `{"id":"abcd-1234","name":"x","columns":[{"name":"Kind","fieldName":"kind","dataTypeName":"text","position":1,
		"cachedContents":{"non_null":"3","null":"1","top":[{"item":"A","count":"2"},{"item":"B","count":"1"}]}}]}`
	c2, _, _ := newTestClient(t, viewsServer(t, "abcd-1234", []byte(strs), `[{"count":"4"}]`, &soql), Options{})
	s2, err := c2.Schema(t.Context(), "abcd-1234")
	if err != nil {
		t.Fatal(err)
	}
	want := &ColumnStats{NonNull: 3, Null: 1, Top: []TopValue{{"A", 2}, {"B", 1}}}
	if diff := gocmp.Diff(want, s2.Columns[0].Stats); diff != "" {
		t.Errorf("stats written as strings (-want +got):\n%s", diff)
	}
	if !s2.Columns[0].Stats.TopIsComplete() {
		t.Error("2 top values: TopIsComplete false; want true")
	}
}
