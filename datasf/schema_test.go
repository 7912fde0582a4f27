package datasf_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// schemaOut is get_schema's structured content.
type schemaOut struct {
	Summary   string `json:"summary"`
	DatasetID string `json:"dataset_id"`
	Name      string `json:"name"`
	Category  string `json:"category"`
	RowCount  int64  `json:"row_count"`
	Cached    bool   `json:"cached"`
	Columns   []struct {
		Name        string `json:"name"`
		FieldName   string `json:"fieldName"`
		DataType    string `json:"dataType"`
		Description string `json:"description"`
	} `json:"columns"`
}

type wantColumn struct{ Name, FieldName, DataType, Description string }

// TestSchema checks get_schema against the fixtures read by the test: the
// columns of the catalog line (Resource API JSON datasets) or of the Views
// document (rows.json datasets), and the number of rows in the data file.
func TestSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id     string
		source string // "catalog" or "view"
		rows   func(t *testing.T) int
	}{
		{"rqzj-sfat", "catalog", func(t *testing.T) int { return len(resourceRows(t, "rqzj-sfat")) }},
		{"wg3w-h783", "catalog", func(t *testing.T) int { return len(resourceRows(t, "wg3w-h783")) }},
		{"yitu-d5am", "view", func(t *testing.T) int { return rowsJSONCount(t, "yitu-d5am") }},
		{"vw6y-z8j6", "view", func(t *testing.T) int { return rowsJSONCount(t, "vw6y-z8j6") }},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			// A harness of its own: the schema cache must start empty.
			h := newHarness(t, harnessOptions{})

			var name string
			var cols []fixtureColumn
			if tt.source == "view" {
				name, cols = viewColumns(t, tt.id)
			} else {
				e := catalogEntryFor(t, tt.id)
				name = e.Title
				for _, c := range e.Columns {
					if !strings.HasPrefix(c.FieldName, ":") {
						cols = append(cols, c)
					}
				}
				slices.SortStableFunc(cols, func(a, b fixtureColumn) int { return a.Position - b.Position })
			}
			want := make([]wantColumn, len(cols))
			for i, c := range cols {
				want[i] = wantColumn{c.Name, c.FieldName, c.DataType, columnDescription(c.Description)}
			}
			wantRows := tt.rows(t)

			args := map[string]any{"dataset_id": tt.id}
			for i, wantCached := range []bool{false, true} {
				var out schemaOut
				structured(t, "get_schema", args, h.call(t, "get_schema", args), &out)
				if out.Cached != wantCached {
					t.Errorf("call %d: get_schema(%s).cached = %t; want %t", i+1, tt.id, out.Cached, wantCached)
				}
				if out.RowCount != int64(wantRows) {
					t.Errorf("call %d: get_schema(%s).row_count = %d; want %d (rows in the fixture file)", i+1, tt.id, out.RowCount, wantRows)
				}
				if out.DatasetID != tt.id || out.Name != name {
					t.Errorf("call %d: get_schema(%s) = id %q name %q; want %q %q", i+1, tt.id, out.DatasetID, out.Name, tt.id, name)
				}
				got := make([]wantColumn, len(out.Columns))
				for i, c := range out.Columns {
					got[i] = wantColumn{c.Name, c.FieldName, c.DataType, c.Description}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("call %d: get_schema(%s) columns vs the %s fixture (-want +got):\n%s", i+1, tt.id, tt.source, diff)
				}
			}
			if n := h.fake.RequestCount("views"); n != 1 {
				t.Errorf("two get_schema calls made %d Views API requests; want 1 (the second is cached)", n)
			}
			t.Logf("get_schema(%s): %d columns, row_count %d (fixture file: %d rows)", tt.id, len(want), wantRows, wantRows)
		})
	}
}

// columnDescription is a column's description as get_schema gives it: on
// one line, and at most 80 characters, the cut marked.
func columnDescription(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		return strings.TrimSpace(string(r[:79])) + "…"
	}
	return s
}

func TestSchemaErrors(t *testing.T) {
	t.Parallel()
	// The refusals of the arguments need no data, and no call may reach
	// the portal; the unknown dataset is asked of the fixtures.
	refuse, fixtures := newStubHarness(t), sharedHarness(t)

	// An id in the 4x4 form that the catalog does not have.
	unknown := "zzzz-9999"
	for _, e := range catalog(t) {
		if e.Endpoint == unknown {
			t.Fatalf("test assumption broken: %s is in the catalog", unknown)
		}
	}

	tests := []struct {
		name     string
		args     any
		wantType string
		arg      string // argument a validation error must name
	}{
		{"not a 4x4", map[string]any{"dataset_id": "not-an-id"}, "validation", "dataset_id"},
		{"upper case with a typo", map[string]any{"dataset_id": "RQZJ-SFA"}, "validation", "dataset_id"}, // upper case alone is read as the id (TestDatasetIDForms)
		{"underscore", map[string]any{"dataset_id": "rqzj_sfat"}, "validation", "dataset_id"},
		{"path injection", map[string]any{"dataset_id": "../../x"}, "validation", "dataset_id"},
		{"missing", map[string]any{}, "validation", "dataset_id"},
		{"number", map[string]any{"dataset_id": 1234}, "validation", "dataset_id"},
		{"unknown argument", map[string]any{"dataset_id": "rqzj-sfat", "columns": true}, "validation", "columns"},
		{"unknown dataset", map[string]any{"dataset_id": unknown}, "not_found", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := refuse
			if tt.wantType != "validation" {
				h = fixtures
			}
			e := errorOf(t, "get_schema", tt.args, h.call(t, "get_schema", tt.args))
			if e.ErrorType != tt.wantType {
				t.Errorf("get_schema(%v).error_type = %q; want %q (error %q)", tt.args, e.ErrorType, tt.wantType, e.Error)
			}
			if tt.arg != "" {
				namesArgument(t, e, tt.arg)
			}
			if tt.wantType == "not_found" && !strings.Contains(e.Error, unknown) {
				t.Errorf("not_found error %q does not name the dataset %s", e.Error, unknown)
			}
		})
	}
}
