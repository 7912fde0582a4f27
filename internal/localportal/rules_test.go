package localportal

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// The forms Socrata answers, which a stricter checker would refuse, are
// answered, with Socrata's meaning: a partial ISO timestamp is its first
// instant ('2023' is 2023-01-01T00:00:00) on floating and fixed
// timestamps; '1' and '0' are booleans; a timestamp ± an ISO period moves
// it (F TimeStampPlus, TimeStampMinus).
func TestFalseRefusalFormsAnswered(t *testing.T) {
	t.Parallel()
	p := newPortal(t)
	schema := Schema{ID: "form-0001", Name: "Forms", Columns: []socrata.Column{
		{FieldName: "d", DataType: "calendar_date"}, {FieldName: "f", DataType: "date"}, {FieldName: "b", DataType: "checkbox"}}}
	days := []string{"2022-12-31T23:00:00", "2023-01-01T00:00:00", "2023-01-01T10:30:00", "2023-01-15T00:00:00", "2024-02-01T00:00:00"}
	if err := p.AddGenerated(t.Context(), schema, len(days), func(i int) map[string]any {
		return map[string]any{"d": days[i], "f": days[i] + "Z", "b": i%2 == 0}
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		soql string
		want []map[string]any
	}{
		{"SELECT count(*) AS c WHERE d >= '2023'", one("c", "4")},
		{"SELECT count(*) AS c WHERE d > '2023-01'", one("c", "3")},
		{"SELECT count(*) AS c WHERE d > '2023-01-01T11'", one("c", "2")},
		{"SELECT count(*) AS c WHERE d BETWEEN '2023' AND '2024'", one("c", "3")},
		{"SELECT count(*) AS c WHERE '2023' <= d", one("c", "4")},
		{"SELECT count(*) AS c WHERE date_trunc_ym(d) = '2023-01'", one("c", "3")},
		{"SELECT count(*) AS c WHERE f >= '2023'", one("c", "4")},
		{"SELECT count(*) AS c WHERE f BETWEEN '2023-01' AND '2023-02'", one("c", "3")},
		{"SELECT count(*) AS c WHERE :updated_at > '2024'", one("c", "5")},
		{"SELECT count(*) AS c WHERE b = '1'", one("c", "3")},
		{"SELECT count(*) AS c WHERE b = '0'", one("c", "2")},
		{"SELECT count(*) AS c WHERE b = 'TRUE' OR b = 'False'", one("c", "5")},
		{"SELECT d + 'P1D' AS x ORDER BY :id LIMIT 1", one("x", "2023-01-01T23:00:00.000")},
		{"SELECT date_trunc_ym(d) - 'P1M' AS x ORDER BY :id LIMIT 1", one("x", "2022-11-01T00:00:00.000")},
		{"SELECT f + 'PT1H' AS x ORDER BY :id LIMIT 1", one("x", "2023-01-01T00:00:00.000Z")},
		{"SELECT count(*) AS c WHERE d + 'P1D' >= '2023-01-16'", one("c", "2")},
		{"SELECT date_trunc_ym(f, 'America/Los_Angeles') AS x ORDER BY :id LIMIT 1", one("x", "2022-12-01T00:00:00.000")},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, query(t, p, "form-0001", tt.soql)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.soql, diff)
		}
	}
}
