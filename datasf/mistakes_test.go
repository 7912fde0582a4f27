package datasf_test

import (
	"strings"
	"testing"
)

// Mistakes are answered with the fix, through an MCP session against the
// fake portal loaded with the real fixtures.
func TestQueryMistakesAnsweredWithTheFix(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)

	// A zero-row filter whose value is the data's words written otherwise
	// (spacing, punctuation, plural) names the value as the data writes it.
	t.Run("spacing and plural", func(t *testing.T) {
		for _, lit := range []string{"Larceny  Thefts", "larceny-theft"} {
			args := map[string]any{"dataset_id": "wg3w-h783", "soql": "SELECT incident_id WHERE incident_category = '" + lit + "'"}
			var out struct {
				Summary string `json:"summary"`
				Hints   []struct {
					Literal   string `json:"literal"`
					WrittenAs []struct {
						Value string `json:"value"`
					} `json:"written_as"`
					Matches []struct {
						Value string `json:"value"`
					} `json:"case_insensitive_matches"`
				} `json:"hints"`
			}
			structured(t, "query_datasf", args, h.call(t, "query_datasf", args), &out)
			if len(out.Hints) != 1 || len(out.Hints[0].WrittenAs) != 1 || out.Hints[0].WrittenAs[0].Value != "Larceny Theft" {
				t.Errorf("incident_category = '%s': hints %+v; want 'Larceny Theft' as the written form", lit, out.Hints)
			}
			if !strings.Contains(out.Summary, "'Larceny Theft'") {
				t.Errorf("incident_category = '%s': summary %q does not name 'Larceny Theft'", lit, out.Summary)
			}
		}
	})

	// 311 Cases shows service_name as "Category": GROUP BY category is
	// corrected to service_name and reported as a correction.
	t.Run("display name", func(t *testing.T) {
		args := map[string]any{"dataset_id": "vw6y-z8j6", "soql": "SELECT Category, count(*) AS n GROUP BY Category ORDER BY n DESC"}
		res := h.call(t, "query_datasf", args)
		if res.IsError {
			t.Fatalf("query_datasf(%v) = error %s; want the query run on service_name", args, textOf(t, res))
		}
		var out struct {
			Results  []map[string]any `json:"results"`
			Metadata struct {
				Query       string `json:"query"`
				Corrections []struct {
					Original, Corrected, Reason string
				} `json:"corrections"`
			} `json:"metadata"`
		}
		structured(t, "query_datasf", args, res, &out)
		c := out.Metadata.Corrections
		if len(c) != 1 || c[0].Original != "Category" || c[0].Corrected != "service_name" || !strings.Contains(c[0].Reason, "display name") {
			t.Errorf("corrections = %+v; want Category -> service_name, the display name", c)
		}
		if len(out.Results) == 0 || out.Results[0]["service_name"] == nil {
			t.Errorf("results %v; want rows grouped by service_name", out.Results)
		}
	})

	// An unquoted text value is answered with "quote it", not "no such
	// column", and no request for rows is made.
	t.Run("unquoted value", func(t *testing.T) {
		for _, soql := range []string{
			"SELECT incident_id WHERE police_district = Mission",
			"SELECT incident_id WHERE police_district IN (Mission, 'Central')",
		} {
			args := map[string]any{"dataset_id": "wg3w-h783", "soql": soql}
			e := errorOf(t, "query_datasf", args, h.call(t, "query_datasf", args))
			if e.ErrorType != "validation" || !strings.Contains(e.Error, "Quote it:") || !strings.Contains(e.Error, "'Mission'") || strings.Contains(e.Error, "No such column") {
				t.Errorf("query_datasf(%q) error %q (%s); want \"Quote it: … 'Mission'\", not no such column", soql, e.Error, e.ErrorType)
			}
		}
		if !strings.Contains(errorOf(t, "query_datasf", map[string]any{"dataset_id": "wg3w-h783", "soql": "SELECT incident_id WHERE police_district = Mission"},
			h.call(t, "query_datasf", map[string]any{"dataset_id": "wg3w-h783", "soql": "SELECT incident_id WHERE police_district = Mission"})).Error, "= 'Mission'") {
			t.Error("the fix does not read = 'Mission'")
		}
	})
}
