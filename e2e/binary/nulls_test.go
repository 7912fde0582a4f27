//go:build e2e

package binary

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Nulls named, through the built binary on the offline snapshot: a
// grouped query's null group is null in the text's table, not an empty
// label, and when it is the top group the summary (text and structured)
// says how many rows lack the value: from the group's count(*), or,
// without one, from a count of the rows without it.
func TestNullGroupNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary on the offline snapshot")
	}
	t.Parallel()
	// A text column with rows that lack a value, and how many.
	var schema struct {
		Columns []struct {
			FieldName string   `json:"fieldName"`
			DataType  string   `json:"dataType"`
			NullShare *float64 `json:"null_share"`
		} `json:"columns"`
	}
	offlineJSON(t, &schema, "schema", "wg3w-h783")
	col := ""
	for _, c := range schema.Columns {
		if c.DataType == "text" && c.NullShare != nil && *c.NullShare > 0 {
			col = c.FieldName
			break
		}
	}
	if col == "" {
		t.Fatal("no text column of wg3w-h783 lacks a value in some rows")
	}
	var counted struct {
		Results []struct {
			N string `json:"n"`
		} `json:"results"`
	}
	offlineJSON(t, &counted, "query", "wg3w-h783", fmt.Sprintf("SELECT count(*) AS n WHERE %s IS NULL", col))
	lacking, err := strconv.Atoi(counted.Results[0].N)
	if err != nil || lacking == 0 {
		t.Fatalf("count of rows without %s: %+v (%v)", col, counted, err)
	}
	want := fmt.Sprintf("The top group is null: %s rows have no %s.", withCommas(lacking), col)

	for _, soql := range []string{
		fmt.Sprintf("SELECT %s, count(*) AS n GROUP BY %[1]s ORDER BY %[1]s NULLS FIRST", col),
		// No count(*): the number comes from a count of its own.
		fmt.Sprintf("SELECT %s, police_district GROUP BY %[1]s, police_district ORDER BY %[1]s NULLS FIRST, police_district", col),
	} {
		stdout, stderr, code := runBinary(t, "query", "wg3w-h783", soql, "--offline", "--format", "markdown", "--sample-size", "3", "--log-level", "warn")
		if code != 0 {
			t.Fatalf("query %q: exit %d\n%s", soql, code, stderr)
		}
		first := regexp.MustCompile(`(?m)^\|-[-|]*\n(\|[^\n]*)`).FindStringSubmatch(stdout)
		if first == nil || !strings.HasPrefix(first[1], "| null |") {
			t.Errorf("query %q: the table's first row is %q; want its null key written null\n%s", soql, first, stdout)
		}
		if !strings.Contains(stdout, want) {
			t.Errorf("query %q: the text does not say %q\n%s", soql, want, stdout)
		}
		var a struct{ Summary string }
		offlineJSON(t, &a, "query", "wg3w-h783", soql, "--sample-size", "3")
		if !strings.Contains(a.Summary, want) {
			t.Errorf("query %q: the structured summary %q does not say %q", soql, a.Summary, want)
		}
	}
}

// withCommas writes n with comma separators: 12,489.
func withCommas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
