package datasf_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// hintsOut is the structured content of a zero-result answer, with hints.
type hintsOut struct {
	Summary  string `json:"summary"`
	Metadata struct {
		DatasetID  string `json:"dataset_id"`
		TotalCount int64  `json:"total_count"`
	} `json:"metadata"`
	Hints []struct {
		Column   string `json:"column"`
		Operator string `json:"operator"`
		Literal  string `json:"literal"`
		Matches  []struct {
			Value string `json:"value"`
			Count int64  `json:"count"`
		} `json:"case_insensitive_matches"`
		Closest []struct {
			Value string `json:"value"`
			Count int64  `json:"count"`
		} `json:"closest_values"`
		Message string `json:"message"`
	} `json:"hints"`
}

// TestQueryZeroResultHints runs, through an MCP session against the fake
// portal, queries whose text literals match nothing as written: the answer
// carries hints with the values that match ignoring case (and their row
// counts from the fixture), or the closest values; at most two extra
// upstream requests for them, and none when rows match.
func TestQueryZeroResultHints(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{}) // its own: the test counts requests
	rows := resourceRows(t, "wg3w-h783")
	count := func(col, v string) int64 {
		var n int64
		for _, r := range rows {
			if str(r[col]) == v {
				n++
			}
		}
		return n
	}
	call := func(t *testing.T, soql string) (hintsOut, int) {
		t.Helper()
		before := h.fake.RequestCount("resource")
		args := map[string]any{"dataset_id": "wg3w-h783", "soql": soql}
		var out hintsOut
		structured(t, "query_datasf", args, h.call(t, "query_datasf", args), &out)
		return out, h.fake.RequestCount("resource") - before
	}
	// Read the schema once (it costs a count request), then measure the
	// requests of an answer without hints: the count and the sample.
	h.call(t, "get_schema", map[string]any{"dataset_id": "wg3w-h783"})
	found, base := call(t, "SELECT incident_id WHERE police_district = 'Mission'")
	if found.Metadata.TotalCount != count("police_district", "Mission") || len(found.Hints) != 0 {
		t.Fatalf("police_district = 'Mission': total %d, hints %v; want %d rows and no hints", found.Metadata.TotalCount, found.Hints, count("police_district", "Mission"))
	}

	t.Run("case", func(t *testing.T) {
		out, n := call(t, "SELECT incident_id WHERE police_district = 'MISSION'")
		if out.Metadata.TotalCount != 0 || len(out.Hints) != 1 {
			t.Fatalf("total %d, hints %+v; want 0 rows and one hint", out.Metadata.TotalCount, out.Hints)
		}
		hnt := out.Hints[0]
		if hnt.Column != "police_district" || hnt.Operator != "=" || hnt.Literal != "MISSION" ||
			len(hnt.Matches) != 1 || hnt.Matches[0].Value != "Mission" || hnt.Matches[0].Count != count("police_district", "Mission") {
			t.Errorf("hint = %+v; want police_district = 'MISSION' matching 'Mission' with %d rows", hnt, count("police_district", "Mission"))
		}
		if !strings.Contains(out.Summary, "'Mission' (84 rows)") {
			t.Errorf("summary %q does not give the hint", out.Summary)
		}
		if extra := n - base; extra != 1 {
			t.Errorf("%d extra upstream requests; want 1 (one column)", extra)
		}
		t.Logf("hints: %s", mustJSON(t, out.Hints))
	})
	t.Run("two columns, IN and LIKE", func(t *testing.T) {
		out, n := call(t, "SELECT incident_id WHERE police_district IN ('TENDERLOIN', 'central') AND incident_category LIKE 'larceny%' AND resolution = 'x'")
		if out.Metadata.TotalCount != 0 {
			t.Fatalf("total %d; want 0", out.Metadata.TotalCount)
		}
		got := map[string]string{}
		for _, hnt := range out.Hints {
			if len(hnt.Matches) > 0 {
				got[hnt.Literal] = hnt.Matches[0].Value
			}
		}
		want := map[string]string{"TENDERLOIN": "Tenderloin", "central": "Central", "larceny%": "Larceny Theft"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("hint for %q = %q; want %q (hints %+v)", k, got[k], v, out.Hints)
			}
		}
		if extra := n - base; extra > 2 {
			t.Errorf("%d extra upstream requests; want at most 2", extra)
		}
		for _, hnt := range out.Hints {
			if hnt.Column == "resolution" {
				t.Errorf("a third column got a hint (%+v): at most two columns are looked up", hnt)
			}
		}
	})
	t.Run("closest values", func(t *testing.T) {
		out, _ := call(t, "SELECT incident_id WHERE police_district = 'Misson'")
		if len(out.Hints) != 1 || len(out.Hints[0].Matches) != 0 || len(out.Hints[0].Closest) == 0 || out.Hints[0].Closest[0].Value != "Mission" {
			t.Fatalf("hints = %+v; want no case-insensitive match and 'Mission' closest", out.Hints)
		}
	})
	t.Run("starts_with and another condition", func(t *testing.T) {
		out, _ := call(t, "SELECT incident_id WHERE starts_with(police_district, 'tender') AND supervisor_district = -1")
		// The text literal, and the number out of the column's range.
		if len(out.Hints) != 2 || len(out.Hints[0].Matches) != 1 || out.Hints[0].Matches[0].Value != "Tenderloin" ||
			!strings.HasPrefix(out.Hints[1].Message, "supervisor_district = -1 matches no row: supervisor_district runs from") {
			t.Fatalf("hints = %+v; want starts_with 'tender' matching Tenderloin, then supervisor_district's range", out.Hints)
		}
	})
	t.Run("no text literal", func(t *testing.T) {
		// A number out of the column's range: one request, for its range.
		out, n := call(t, "SELECT incident_id WHERE supervisor_district = -1")
		if out.Metadata.TotalCount != 0 || len(out.Hints) != 1 || !strings.Contains(out.Hints[0].Message, "supervisor_district runs from") || n != base+1 {
			t.Errorf("total %d, hints %+v, %d requests; want 0 rows, the column's range, %d requests", out.Metadata.TotalCount, out.Hints, n, base+1)
		}
	})
	t.Run("rows match", func(t *testing.T) {
		out, n := call(t, "SELECT incident_id WHERE supervisor_district = 3")
		if out.Metadata.TotalCount == 0 || out.Hints != nil || n != base {
			t.Errorf("total %d, hints %+v, %d requests; want rows, no hints, %d requests", out.Metadata.TotalCount, out.Hints, n, base)
		}
	})
}

// TestQueryLocalChecks: names that are not surely typos, undefined aliases,
// duplicate aliases and type errors are answered before any request for
// rows, in the portal's words.
func TestQueryLocalChecks(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})                               // its own: the test counts requests
	h.call(t, "get_schema", map[string]any{"dataset_id": "wg3w-h783"}) // cached from here on
	tests := []struct {
		soql    string
		code    string
		column  string   // details.column or details.name
		closest []string // the first closest columns, in order
		aliases []string
		text    []string // in the error
	}{
		{soql: "SELECT incident_id ORDER BY call_datetime", code: "no_such_column", column: "call_datetime",
			text: []string{`No such column "call_datetime"`, "ORDER BY, line 1, column 29"}},
		{soql: "SELECT district, count(*) AS n GROUP BY district", code: "no_such_column", column: "district",
			closest: []string{"police_district", "supervisor_district"}},
		{soql: "SELECT date_trunc_y(incident_datetime) AS year, count(*) AS n GROUP BY incident_year_added", code: "no_such_column",
			column: "incident_year_added", aliases: []string{"year", "n"}, text: []string{"aliases: year, n"}},
		{soql: "SELECT incident_datetime AS d ORDER BY year_datetime", code: "no_such_column", column: "year_datetime",
			text: []string{"It was not corrected", "whole word"}},
		{soql: "SELECT sum(incident_number)", code: "type_mismatch", column: "incident_number",
			text: []string{"incident_number is text", "sum needs a number", "incident_number::number"}},
		{soql: "SELECT count(*) AS n WHERE incident_date > 2023-01-01", code: "type_mismatch", column: "incident_date",
			text: []string{"incident_date is floating_timestamp and 2023 - 01 - 01 is number", "Quote the date: incident_date > '2023-01-01'"}},
		{soql: "SELECT count(*) AS n WHERE supervisor_district = 'three'", code: "type_mismatch", column: "supervisor_district",
			text: []string{"'three' is not a number"}},
		{soql: "SELECT count(*) AS n WHERE police_district = 3", code: "type_mismatch", column: "police_district",
			text: []string{"Quote the value: police_district = '3'"}},
		{soql: "SELECT date_trunc_ym(supervisor_district) AS m", code: "type_mismatch", column: "supervisor_district",
			text: []string{"date_trunc_ym needs a timestamp", "supervisor_district is number"}},
		{soql: "SELECT police_district + 1 AS x", code: "type_mismatch", column: "police_district",
			text: []string{"police_district is text", "police_district::number"}},
		{soql: "SELECT police_district, incident_category, count(*) GROUP BY police_district", code: "query.soql.column-not-in-group-bys",
			column: "incident_category", text: []string{"Column 'incident_category' is not in group by"}},
		{soql: "SELECT police_district AS d, incident_category AS d", code: "query.soql.duplicate-alias", column: "d"},
	}
	for _, tt := range tests {
		t.Run(tt.soql, func(t *testing.T) {
			before := h.fake.RequestCount("resource")
			args := map[string]any{"dataset_id": "wg3w-h783", "soql": tt.soql}
			res := h.call(t, "query_datasf", args)
			e := errorOf(t, "query_datasf", args, res)
			var body struct {
				Code string `json:"code"`
			}
			if tc, ok := mcp.AsTextContent(res.Content[0]); ok {
				_ = json.Unmarshal([]byte(tc.Text), &body)
			}
			if e.ErrorType != "validation" || body.Code != tt.code {
				t.Errorf("query_datasf(%q) = %s/%s %q; want validation/%s", tt.soql, e.ErrorType, body.Code, e.Error, tt.code)
			}
			name := str(e.Details["column"])
			if name == "" {
				name = str(e.Details["name"])
			}
			if name != tt.column {
				t.Errorf("query_datasf(%q) names %q; want %q (details %v)", tt.soql, name, tt.column, e.Details)
			}
			closest, _ := e.Details["closest_columns"].([]any)
			for i, c := range tt.closest {
				if i >= len(closest) || closest[i] != c {
					t.Errorf("query_datasf(%q) closest_columns = %v; want %v first", tt.soql, closest, tt.closest)
					break
				}
			}
			if tt.aliases != nil {
				var got []string
				for _, a := range e.Details["aliases"].([]any) {
					got = append(got, str(a))
				}
				if !slices.Equal(got, tt.aliases) {
					t.Errorf("query_datasf(%q) aliases = %v; want %v", tt.soql, got, tt.aliases)
				}
			}
			for _, s := range tt.text {
				if !strings.Contains(e.Error, s) {
					t.Errorf("query_datasf(%q) error %q lacks %q", tt.soql, e.Error, s)
				}
			}
			if !strings.HasPrefix(str(e.Details["socrata_message"]), "Query coordinator error: query.soql.") {
				t.Errorf("details.socrata_message = %q; want the portal's wording", e.Details["socrata_message"])
			}
			if after := h.fake.RequestCount("resource"); after != before {
				t.Errorf("query_datasf(%q) made %d requests for rows; want none", tt.soql, after-before)
			}
			t.Logf("%s", e.Error)
		})
	}
}

// TestDatasetIDForms: ids as models write them are read as the id.
func TestDatasetIDForms(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	for _, id := range []string{"RQZJ-SFAT", "  rqzj-sfat\n", "https://data.sfgov.org/Economy-and-Community/Mobile-Food-Facility-Permit/rqzj-sfat", "https://data.sfgov.org/resource/rqzj-sfat.json"} {
		args := map[string]any{"dataset_id": id, "soql": "SELECT count(*) AS n"}
		var out hintsOut
		structured(t, "query_datasf", args, h.call(t, "query_datasf", args), &out)
		if out.Metadata.DatasetID != "rqzj-sfat" {
			t.Errorf("query_datasf(dataset_id %q).metadata.dataset_id = %q; want rqzj-sfat", id, out.Metadata.DatasetID)
		}
		var sc struct {
			DatasetID string `json:"dataset_id"`
		}
		sargs := map[string]any{"dataset_id": id}
		structured(t, "get_schema", sargs, h.call(t, "get_schema", sargs), &sc)
		if sc.DatasetID != "rqzj-sfat" {
			t.Errorf("get_schema(%q).dataset_id = %q; want rqzj-sfat", id, sc.DatasetID)
		}
	}
}
