package fuzzymatch_test

import (
	"testing"

	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
)

// A column asked for by its display name is corrected to its field name
// and reported like any correction; a display name two columns share, or
// one that is another column's field name, is not used.
func TestCorrectDisplayNames(t *testing.T) {
	t.Parallel()
	columns := []string{"service_name", "service_subtype", "status", "lat", "address", "long"}
	display := map[string]string{"Category": "service_name", "Request Type": "service_subtype", "Status": "status"}
	tests := []struct {
		query, want string
	}{
		{"SELECT category, count(*) GROUP BY category", "SELECT service_name, count(*) GROUP BY service_name"},
		{"SELECT `Request Type` WHERE CATEGORY = 'x'", "SELECT `service_subtype` WHERE service_name = 'x'"},
		{"SELECT request_type", "SELECT service_subtype"},
	}
	for _, tt := range tests {
		res, err := fuzzymatch.Correct(tt.query, columns, fuzzymatch.Options{DisplayNames: display})
		if err != nil {
			t.Fatal(err)
		}
		if res.Query != tt.want {
			t.Errorf("Correct(%q) = %q; want %q", tt.query, res.Query, tt.want)
		}
		if len(res.Corrections) == 0 || res.Corrections[0].Reason == "" {
			t.Errorf("Correct(%q): corrections %+v; want one with its reason", tt.query, res.Corrections)
		}
	}
	// Without display names, "category" is no typo of any column.
	res, _ := fuzzymatch.Correct("SELECT category", columns, fuzzymatch.Options{})
	if res.Query != "SELECT category" || len(res.Unknown) != 1 {
		t.Errorf("Correct without display names = %+v; want category left alone, unknown", res)
	}
	// Shared display names are not used.
	res, _ = fuzzymatch.Correct("SELECT kind", []string{"a_kind", "b_kind"}, fuzzymatch.Options{DisplayNames: map[string]string{"Kind": "a_kind", "kind": "b_kind"}})
	if res.Query != "SELECT kind" {
		t.Errorf("Correct with a shared display name = %q; want it left alone", res.Query)
	}
}
