package sampledata

import (
	"regexp"
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
