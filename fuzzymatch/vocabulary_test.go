package fuzzymatch_test

import (
	"testing"

	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
)

// Names invented in the portal's own vocabulary are the column they say:
// corrected, with the reason; names near several such columns are not.
func TestVocabularyCorrections(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query   string
		columns []string
		want    string // the corrected column; "" when left alone
	}{
		{"SELECT max(date_as_of) AS latest", []string{"incident_datetime", "data_as_of", "data_loaded_at"}, "data_as_of"},
		{"SELECT dispatch_dttm, count(*) AS n GROUP BY dispatch_dttm", []string{"received_datetime", "dispatch_datetime", "onscene_datetime"}, "dispatch_datetime"},
		{"SELECT count(*) WHERE received_timestamp > '2024-01-01'", []string{"call_number", "received_dttm", "entry_dttm"}, "received_dttm"},
		{"SELECT received_timestamp", []string{"received_dttm", "received_datetime"}, ""}, // two columns say it
		{"SELECT employee_as_of", []string{"data_as_of"}, ""},                             // another word entirely
	}
	for _, tt := range tests {
		res, err := fuzzymatch.Correct(tt.query, tt.columns, fuzzymatch.Options{})
		if err != nil {
			t.Fatalf("Correct(%q) = %v", tt.query, err)
		}
		got := ""
		for _, c := range res.Corrections {
			got = c.Corrected
			if c.Reason == "" {
				t.Errorf("Correct(%q): correction %s without a reason", tt.query, c.Corrected)
			}
		}
		if got != tt.want {
			t.Errorf("Correct(%q) corrected to %q; want %q (result %+v)", tt.query, got, tt.want, res)
		}
	}
}
