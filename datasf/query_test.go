package datasf_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

// queryOut is query_datasf's structured content (the dual response).
type queryOut struct {
	Summary  string           `json:"summary"`
	Results  []map[string]any `json:"results"`
	Resource struct {
		URI string `json:"uri"`
		URL string `json:"url"`
	} `json:"resource"`
	Metadata struct {
		DatasetID string `json:"dataset_id"`
		// Query is the $query of PortalURL (set by harness.query): the
		// answer states the query once, there.
		Query       string       `json:"query"`
		PortalURL   string       `json:"portal_url"`
		TotalCount  int64        `json:"total_count"`
		SampleCount int          `json:"sample_count"`
		Truncated   bool         `json:"truncated"`
		Columns     []string     `json:"columns"`
		Corrections []correction `json:"corrections"`
	} `json:"metadata"`
}

type correction struct {
	Original   string `json:"original"`
	Corrected  string `json:"corrected"`
	WasChanged bool   `json:"wasChanged"`
}

// query calls query_datasf, expects a dual response and checks its content:
// text first, then a resource_link to the same resource as the structured
// content.
func (h *harness) query(t *testing.T, args map[string]any) queryOut {
	t.Helper()
	res := h.call(t, "query_datasf", args)
	var out queryOut
	structured(t, "query_datasf", args, res, &out)
	var link *mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(mcp.ResourceLink); ok {
			link = &l
		}
	}
	if link == nil {
		t.Errorf("query_datasf(%v): content has no resource_link: %s", args, mustJSON(t, res.Content))
	} else if link.URI != out.Resource.URI {
		t.Errorf("query_datasf(%v): resource_link uri %q; structured resource.uri %q", args, link.URI, out.Resource.URI)
	}
	if !strings.HasPrefix(out.Resource.URI, "resource://") || !strings.HasPrefix(out.Resource.URL, "http://") {
		t.Errorf("query_datasf(%v): resource = %+v; want resource:// uri and http:// url", args, out.Resource)
	}
	if out.Metadata.SampleCount != len(out.Results) {
		t.Errorf("query_datasf(%v): sample_count %d but %d results", args, out.Metadata.SampleCount, len(out.Results))
	}
	if want := int64(out.Metadata.SampleCount) < out.Metadata.TotalCount; out.Metadata.Truncated != want {
		t.Errorf("query_datasf(%v): truncated = %t with %d of %d rows", args, out.Metadata.Truncated, out.Metadata.SampleCount, out.Metadata.TotalCount)
	}
	if out.Metadata.DatasetID != args["dataset_id"] {
		t.Errorf("query_datasf(%v): metadata.dataset_id = %q", args, out.Metadata.DatasetID)
	}
	if out.Metadata.Query != "" {
		t.Errorf("query_datasf(%v): metadata.query %q repeats portal_url's $query", args, out.Metadata.Query)
	}
	out.Metadata.Query = portalQuery(t, out.Metadata.PortalURL)
	return out
}

// portalQuery is the $query of a query_datasf answer's portal_url: the query
// it ran.
func portalQuery(t *testing.T, portalURL string) string {
	t.Helper()
	u, err := url.Parse(portalURL)
	if err != nil || u.Query().Get("$query") == "" {
		t.Errorf("metadata.portal_url %q has no $query", portalURL)
		return ""
	}
	return u.Query().Get("$query")
}

// page is a REST page of a stored result.
type page struct {
	Data          []map[string]any `json:"data"`
	TotalCount    int64            `json:"total_count"`
	ReturnedCount int              `json:"returned_count"`
	Offset        int64            `json:"offset"`
	HasNext       bool             `json:"has_next"`
	NextOffset    *int64           `json:"next_offset"`
}

// fetchAll GETs every page of a result's REST endpoint over HTTP.
func fetchAll(t *testing.T, resourceURL string, limit int) (rows []map[string]any, pages int) {
	t.Helper()
	offset := int64(0)
	for range 10_000 {
		var p page
		getJSON(t, fmt.Sprintf("%s?offset=%d&limit=%d", resourceURL, offset, limit), &p)
		pages++
		if p.ReturnedCount != len(p.Data) || p.Offset != offset {
			t.Fatalf("page at %d: returned_count %d, %d rows, offset %d", offset, p.ReturnedCount, len(p.Data), p.Offset)
		}
		rows = append(rows, p.Data...)
		if !p.HasNext {
			return rows, pages
		}
		if p.NextOffset == nil || *p.NextOffset != offset+int64(len(p.Data)) {
			t.Fatalf("page at %d with %d rows: next_offset %v", offset, len(p.Data), p.NextOffset)
		}
		offset = *p.NextOffset
	}
	t.Fatalf("more than 10,000 pages at %s", resourceURL)
	return nil, 0
}

// str renders a JSON value as Socrata's text form ("" for a missing value).
func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// keys returns the values of column col, checking none is repeated.
func keys(t *testing.T, rows []map[string]any, col string) []string {
	t.Helper()
	seen := map[string]int{}
	var out []string
	for i, r := range rows {
		k := str(r[col])
		if k == "" {
			t.Errorf("row %d has no %s: %v", i, col, r)
		}
		if j, dup := seen[k]; dup {
			t.Errorf("row %d repeats %s %s of row %d", i, col, k, j)
		}
		seen[k] = i
		out = append(out, k)
	}
	return out
}

// foodTrucks returns the rows of the rqzj-sfat fixture whose keep is true.
func foodTrucks(t *testing.T, keep func(map[string]any) bool) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range resourceRows(t, "rqzj-sfat") {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func all(map[string]any) bool { return true }

func sortedObjectIDs(rows []map[string]any) []string {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = str(r["objectid"])
	}
	slices.Sort(ids)
	return ids
}

// TestQueryRows runs ungrouped queries over the food truck permits and
// checks the total, the sample and the full result paged over HTTP against
// what the test computes from the fixture file.
func TestQueryRows(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	byObjectID := func(rows []map[string]any) []map[string]any {
		rows = slices.Clone(rows)
		slices.SortFunc(rows, func(a, b map[string]any) int {
			x, _ := strconv.ParseInt(str(a["objectid"]), 10, 64)
			y, _ := strconv.ParseInt(str(b["objectid"]), 10, 64)
			return int(x - y)
		})
		return rows
	}
	tests := []struct {
		name        string
		soql        string
		sampleSize  int // 0: not given
		want        []map[string]any
		wantSample  int
		exactIDs    bool // the full result's ids must equal want's (else only the count and uniqueness)
		wantColumns []string
	}{
		{
			name: "plain select, default sample", soql: "SELECT objectid, facilitytype, status",
			want: foodTrucks(t, all), wantSample: 15, exactIDs: true,
			wantColumns: []string{"objectid", "facilitytype", "status"},
		},
		{
			// Above the default, within the byte budget (5,500 bytes: 40
			// rows of three columns do not fit since issue 52).
			name: "sample_size 30", soql: "SELECT objectid, applicant, status", sampleSize: 30,
			want: foodTrucks(t, all), wantSample: 30, exactIDs: true,
			wantColumns: []string{"objectid", "applicant", "status"},
		},
		{
			name: "where", soql: "SELECT objectid, applicant WHERE status = 'APPROVED'",
			want:       foodTrucks(t, func(r map[string]any) bool { return r["status"] == "APPROVED" }),
			wantSample: 15, exactIDs: true, wantColumns: []string{"objectid", "applicant"},
		},
		{
			name: "where, whole result in the sample", soql: "SELECT objectid, status WHERE status = 'ISSUED' OR status = 'SUSPEND'", sampleSize: 100,
			want:       foodTrucks(t, func(r map[string]any) bool { return r["status"] == "ISSUED" || r["status"] == "SUSPEND" }),
			wantSample: -1, exactIDs: true, wantColumns: []string{"objectid", "status"},
		},
		{
			name: "user LIMIT 7", soql: "SELECT objectid, facilitytype LIMIT 7",
			want: foodTrucks(t, all)[:7], wantSample: 7, wantColumns: []string{"objectid", "facilitytype"},
		},
		{
			name: "user LIMIT 7 with ORDER BY", soql: "SELECT objectid ORDER BY objectid LIMIT 7", sampleSize: 3,
			want: byObjectID(foodTrucks(t, all))[:7], wantSample: 3, exactIDs: true, wantColumns: []string{"objectid"},
		},
		{
			name: "user LIMIT beyond the rows", soql: "SELECT objectid WHERE status = 'ISSUED' LIMIT 50",
			want:       foodTrucks(t, func(r map[string]any) bool { return r["status"] == "ISSUED" }),
			wantSample: -1, exactIDs: true, wantColumns: []string{"objectid"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := map[string]any{"dataset_id": "rqzj-sfat", "soql": tt.soql}
			if tt.sampleSize != 0 {
				args["sample_size"] = tt.sampleSize
			}
			out := h.query(t, args)
			m := out.Metadata
			wantTotal := int64(len(tt.want))
			if m.TotalCount != wantTotal {
				t.Errorf("query_datasf(%q).total_count = %d; want %d (counted in the fixture)", tt.soql, m.TotalCount, wantTotal)
			}
			wantSample := tt.wantSample
			if wantSample < 0 {
				wantSample = len(tt.want)
			}
			if len(out.Results) != wantSample {
				t.Errorf("query_datasf(%q): %d sample rows; want %d", tt.soql, len(out.Results), wantSample)
			}
			if wantTrunc := int64(wantSample) < wantTotal; m.Truncated != wantTrunc {
				t.Errorf("query_datasf(%q).truncated = %t; want %t", tt.soql, m.Truncated, wantTrunc)
			}
			if diff := cmp.Diff(tt.wantColumns, m.Columns); diff != "" {
				t.Errorf("query_datasf(%q) columns (-want +got):\n%s", tt.soql, diff)
			}
			if !strings.Contains(m.Query, "ORDER BY") || !strings.Contains(m.Query, ":id") {
				t.Errorf("stored query %q has no stable ORDER BY … :id", m.Query)
			}
			if len(m.Corrections) != 0 {
				t.Errorf("query_datasf(%q): corrections %v; want none", tt.soql, m.Corrections)
			}

			// The full result, paged over HTTP (pages smaller than the result).
			rows, pages := fetchAll(t, out.Resource.URL, 100)
			if int64(len(rows)) != m.TotalCount {
				t.Errorf("REST pages of %q hold %d rows; total_count %d", tt.soql, len(rows), m.TotalCount)
			}
			got := keys(t, rows, "objectid")
			if tt.exactIDs {
				gotSorted := slices.Sorted(slices.Values(got))
				if diff := cmp.Diff(sortedObjectIDs(tt.want), gotSorted); diff != "" {
					t.Errorf("REST result of %q: objectids vs the fixture (-want +got):\n%s", tt.soql, diff)
				}
			} else {
				all := sortedObjectIDs(foodTrucks(t, all))
				for _, id := range got {
					if _, ok := slices.BinarySearch(all, id); !ok {
						t.Errorf("REST result of %q has objectid %s, not in the fixture", tt.soql, id)
					}
				}
			}
			if strings.Contains(tt.soql, "ORDER BY objectid") {
				var want []string // tt.want is in numeric objectid order
				for _, r := range tt.want {
					want = append(want, str(r["objectid"]))
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("REST result of %q is not in objectid order (-want +got):\n%s", tt.soql, diff)
				}
			}
			// The sample is the first rows of the full result.
			if n := len(out.Results); n <= len(rows) {
				if diff := cmp.Diff(rows[:n], out.Results); diff != "" {
					t.Errorf("sample of %q is not the start of the full result (-rest +sample):\n%s", tt.soql, diff)
				}
			}
			// Every row has exactly the selected columns (nulls omitted).
			for _, r := range rows {
				for k := range r {
					if !slices.Contains(tt.wantColumns, k) {
						t.Errorf("row %v has column %q not selected", r, k)
						break
					}
				}
			}
			t.Logf("query_datasf(%q): total_count %d, sample %d, truncated %t, %d rows in %d REST pages", tt.soql, m.TotalCount, len(out.Results), m.Truncated, len(rows), pages)
		})
	}
}

// groupCounts counts the fixture rows per value of the columns (missing
// values as "").
func groupCounts(rows []map[string]any, cols ...string) map[string]int64 {
	out := map[string]int64{}
	for _, r := range rows {
		var k []string
		for _, c := range cols {
			k = append(k, str(r[c]))
		}
		out[strings.Join(k, "|")]++
	}
	return out
}

// resultCounts reads the n column of grouped result rows, keyed like groupCounts.
func resultCounts(t *testing.T, rows []map[string]any, cols ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, r := range rows {
		var k []string
		for _, c := range cols {
			k = append(k, str(r[c]))
		}
		n, err := strconv.ParseInt(str(r["n"]), 10, 64)
		if err != nil {
			t.Errorf("row %v: n is not an integer: %v", r, err)
		}
		key := strings.Join(k, "|")
		if _, dup := out[key]; dup {
			t.Errorf("group %q appears twice", key)
		}
		out[key] = n
	}
	return out
}

// TestQueryGrouped checks grouped queries: the total is the number of
// groups, and each group's count equals the one computed from the fixture.
func TestQueryGrouped(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	rows := resourceRows(t, "rqzj-sfat")
	tests := []struct {
		name string
		args map[string]any
		cols []string
		want map[string]int64
	}{
		{
			name: "by facilitytype",
			args: map[string]any{"soql": "SELECT facilitytype, count(*) AS n GROUP BY facilitytype"},
			cols: []string{"facilitytype"}, want: groupCounts(rows, "facilitytype"),
		},
		{
			name: "by facilitytype and status, sample smaller than the groups",
			args: map[string]any{"soql": "SELECT facilitytype, status, count(*) AS n GROUP BY facilitytype, status", "sample_size": 2},
			cols: []string{"facilitytype", "status"}, want: groupCounts(rows, "facilitytype", "status"),
		},
		{
			name: "having",
			args: map[string]any{"soql": "SELECT status, count(*) AS n GROUP BY status HAVING count(*) > 100"},
			cols: []string{"status"},
			want: func() map[string]int64 {
				m := groupCounts(rows, "status")
				maps.DeleteFunc(m, func(_ string, n int64) bool { return n <= 100 })
				return m
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.args["dataset_id"] = "rqzj-sfat"
			out := h.query(t, tt.args)
			if out.Metadata.TotalCount != int64(len(tt.want)) {
				t.Errorf("query_datasf(%v).total_count = %d; want %d groups", tt.args, out.Metadata.TotalCount, len(tt.want))
			}
			full, _ := fetchAll(t, out.Resource.URL, 2)
			if diff := cmp.Diff(tt.want, resultCounts(t, full, tt.cols...)); diff != "" {
				t.Errorf("query_datasf(%v) full result counts (-fixture +got):\n%s", tt.args, diff)
			}
			sample := resultCounts(t, out.Results, tt.cols...)
			for k, n := range sample {
				if tt.want[k] != n {
					t.Errorf("sample group %q = %d; want %d", k, n, tt.want[k])
				}
			}
			if strings.Contains(out.Metadata.Query, ":id") {
				t.Errorf("grouped query stored as %q; want ordered by its group keys, not :id", out.Metadata.Query)
			}
			t.Logf("query_datasf(%v): %d groups, counts %v", tt.args["soql"], out.Metadata.TotalCount, tt.want)
		})
	}
}

// TestQueryCorrection checks fuzzy column correction: a typo is fixed and
// reported; with auto_correct false, Socrata's no-such-column error comes
// back with the closest columns.
func TestQueryCorrection(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	typo := "SELECT facilitytyp, count(*) AS n GROUP BY facilitytyp"
	want := groupCounts(resourceRows(t, "rqzj-sfat"), "facilitytype")

	t.Run("corrected", func(t *testing.T) {
		t.Parallel()
		for _, ac := range []any{nil, true} {
			args := map[string]any{"dataset_id": "rqzj-sfat", "soql": typo}
			if ac != nil {
				args["auto_correct"] = ac
			}
			out := h.query(t, args)
			wantCorr := correction{Original: "facilitytyp", Corrected: "facilitytype", WasChanged: true}
			if !slices.Contains(out.Metadata.Corrections, wantCorr) {
				t.Errorf("query_datasf(%v).corrections = %+v; want %+v among them", args, out.Metadata.Corrections, wantCorr)
			}
			if strings.Contains(out.Metadata.Query, "facilitytyp ") || strings.Contains(out.Metadata.Query, "facilitytyp,") {
				t.Errorf("stored query %q still has the typo", out.Metadata.Query)
			}
			if diff := cmp.Diff(want, resultCounts(t, out.Results, "facilitytype")); diff != "" {
				t.Errorf("corrected query's counts (-fixture +got):\n%s", diff)
			}
		}
	})
	t.Run("auto_correct false", func(t *testing.T) {
		t.Parallel()
		args := map[string]any{"dataset_id": "rqzj-sfat", "soql": typo, "auto_correct": false}
		e := errorOf(t, "query_datasf", args, h.call(t, "query_datasf", args))
		if e.ErrorType != "validation" {
			t.Errorf("error_type = %q; want validation", e.ErrorType)
		}
		closest, _ := e.Details["closest_columns"].([]any)
		if len(closest) == 0 || closest[0] != "facilitytype" {
			t.Errorf("details.closest_columns = %v; want facilitytype first", e.Details["closest_columns"])
		}
		if !strings.Contains(e.Error, "facilitytyp") || !strings.Contains(str(e.Details["socrata_message"]), "no-such-column") {
			t.Errorf("error %q / details %v do not carry Socrata's no-such-column message", e.Error, e.Details)
		}
	})
	t.Run("no column close enough", func(t *testing.T) {
		t.Parallel()
		args := map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT zzzzzz"}
		e := errorOf(t, "query_datasf", args, h.call(t, "query_datasf", args))
		if e.ErrorType != "validation" || e.Details["column"] != "zzzzzz" {
			t.Errorf("query_datasf(%v) = %s %v; want validation naming column zzzzzz", args, e.ErrorType, e.Details)
		}
		if closest, ok := e.Details["closest_columns"].([]any); !ok || len(closest) != 0 {
			t.Errorf("details.closest_columns = %#v; want an empty list (not null)", e.Details["closest_columns"])
		}
	})
	t.Run("several typos", func(t *testing.T) {
		t.Parallel()
		args := map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT objectid, aplicant WHERE satus = 'APPROVED' ORDER BY objectd DESC", "sample_size": 3}
		out := h.query(t, args)
		for _, want := range []correction{{"aplicant", "applicant", true}, {"satus", "status", true}, {"objectd", "objectid", true}} {
			if !slices.Contains(out.Metadata.Corrections, want) {
				t.Errorf("corrections %+v lack %+v", out.Metadata.Corrections, want)
			}
		}
		if want := countStatus(resourceRows(t, "rqzj-sfat"), "APPROVED"); out.Metadata.TotalCount != want {
			t.Errorf("corrected query total_count = %d; want %d", out.Metadata.TotalCount, want)
		}
	})
	t.Run("alias in ORDER BY untouched", func(t *testing.T) {
		t.Parallel()
		args := map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT facilitytype, count(*) AS total GROUP BY facilitytype ORDER BY total DESC"}
		out := h.query(t, args)
		for _, c := range out.Metadata.Corrections {
			if c.WasChanged {
				t.Errorf("alias query reported correction %+v", c)
			}
		}
		var got []int64
		for _, r := range out.Results {
			n, _ := strconv.ParseInt(str(r["total"]), 10, 64)
			got = append(got, n)
		}
		if !slices.IsSortedFunc(got, func(a, b int64) int { return int(b - a) }) {
			t.Errorf("ORDER BY total DESC gave %v", got)
		}
	})
	t.Run("correct names untouched", func(t *testing.T) {
		t.Parallel()
		args := map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT facilitytype, count(*) AS n WHERE applicant = 'facilitytyp' GROUP BY facilitytype"}
		out := h.query(t, args)
		for _, c := range out.Metadata.Corrections {
			if c.WasChanged {
				t.Errorf("query with correct names reported correction %+v", c)
			}
		}
		if !strings.Contains(out.Metadata.Query, "'facilitytyp'") {
			t.Errorf("stored query %q changed a string literal", out.Metadata.Query)
		}
	})
}

// TestQuerySyntaxError checks that SoQL syntax errors are answered locally,
// with their position, before any request to the portal.
func TestQuerySyntaxError(t *testing.T) {
	t.Parallel()
	h := newStubHarness(t) // a portal without data: no call may reach it
	tests := []struct {
		soql      string
		line, col int // 0: not checked
	}{
		{"SELECT objectid WHERE", 1, 22},
		{"SELECT objectid\nWHERE status =", 2, 15},
		{"SELEC objectid", 1, 1},
		{"SELECT objectid WHERE status = 'APPROVED", 1, 32},
		{"SELECT count(* GROUP BY facilitytype", 1, 0},
		{"SELECT objectid LIMIT ten", 1, 0},
		{"SELECT objectid FROM rqzj-sfat", 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.soql, func(t *testing.T) {
			t.Parallel()
			args := map[string]any{"dataset_id": "rqzj-sfat", "soql": tt.soql}
			e := errorOf(t, "query_datasf", args, h.call(t, "query_datasf", args))
			if e.ErrorType != "validation" {
				t.Errorf("query_datasf(%q).error_type = %q; want validation", tt.soql, e.ErrorType)
			}
			line, _ := e.Details["line"].(float64)
			col, _ := e.Details["column"].(float64)
			if line < 1 || col < 1 {
				t.Errorf("query_datasf(%q): details %v lack line and column", tt.soql, e.Details)
			}
			if tt.line != 0 && int(line) != tt.line {
				t.Errorf("query_datasf(%q): line %v; want %d", tt.soql, line, tt.line)
			}
			if tt.col != 0 && int(col) != tt.col {
				t.Errorf("query_datasf(%q): column %v; want %d", tt.soql, col, tt.col)
			}
			if !strings.Contains(e.Error, fmt.Sprintf("line %d, column %d", int(line), int(col))) {
				t.Errorf("error %q does not say line %d, column %d", e.Error, int(line), int(col))
			}
		})
	}
}

// TestQueryArguments checks that unknown arguments and wrong JSON types are
// validation errors naming the argument, answered before any request.
func TestQueryArguments(t *testing.T) {
	t.Parallel()
	const prefix = "SELECT objectid WHERE applicant = '"
	tooLong := prefix + strings.Repeat("x", datasf.MaxSoQL+1-len(prefix)-1) + "'"
	if n := len([]rune(tooLong)); n != datasf.MaxSoQL+1 {
		t.Fatalf("test bug: the long soql has %d characters", n)
	}
	ok := func(kv ...any) map[string]any {
		m := map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT objectid"}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	tests := []struct {
		name string
		args any
		arg  string // "" for errors about the arguments as a whole
	}{
		{"unknown argument", ok("limit", 10), "limit"},
		{"unknown argument (typo)", ok("sample", 10), "sample"},
		{"soql as number", ok("soql", 42), "soql"},
		{"soql as array", ok("soql", []any{"SELECT objectid"}), "soql"},
		{"dataset_id as number", ok("dataset_id", 7), "dataset_id"},
		{"auto_correct as text", ok("auto_correct", "yes"), "auto_correct"},
		{"auto_correct as number", ok("auto_correct", 1), "auto_correct"},
		{"sample_size as text", ok("sample_size", "ten"), "sample_size"},
		{"sample_size fractional", ok("sample_size", 1.5), "sample_size"},
		{"sample_size 101", ok("sample_size", 101), "sample_size"},
		{"sample_size negative", ok("sample_size", -3), "sample_size"},
		{"sample_size 0 is not unset", ok("sample_size", 0), "sample_size"},
		{"format unknown", ok("format", "csv"), "format"},
		{"missing soql", ok("soql", nil), "soql"},
		{"empty soql", ok("soql", ""), "soql"},
		{"blank soql", ok("soql", " \n\t "), "soql"},
		{"soql of MaxSoQL+1 characters", ok("soql", tooLong), "soql"},
		{"missing dataset_id", ok("dataset_id", nil), "dataset_id"},
		{"bad dataset_id", ok("dataset_id", "rqzj-sfat-x"), "dataset_id"},
		{"arguments not an object", []any{"rqzj-sfat", "SELECT objectid"}, ""},
	}
	t.Run("soql of MaxSoQL characters accepted", func(t *testing.T) {
		t.Parallel()
		args := map[string]any{"dataset_id": "rqzj-sfat", "soql": tooLong[:len(tooLong)-2] + "'"}
		if out := sharedHarness(t).query(t, args); out.Metadata.TotalCount != 0 {
			t.Errorf("applicant = 'xxx…' matched %d rows; want 0", out.Metadata.TotalCount)
		}
	})
	// The refusals need no data, and no call may reach the portal.
	h := newStubHarness(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := errorOf(t, "query_datasf", tt.args, h.call(t, "query_datasf", tt.args))
			if tt.arg != "" {
				namesArgument(t, e, tt.arg)
			} else if e.ErrorType != "validation" {
				t.Errorf("error_type = %q; want validation", e.ErrorType)
			}
		})
	}
}

// TestQueryJSONFormat checks format=json: the text content is the
// structured content as JSON.
func TestQueryJSONFormat(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	args := map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT status, count(*) AS n GROUP BY status", "format": "json"}
	res := h.call(t, "query_datasf", args)
	var out queryOut
	structured(t, "query_datasf", args, res, &out)
	tc, _ := mcp.AsTextContent(res.Content[0])
	var fromText, fromStructured any
	if err := json.Unmarshal([]byte(tc.Text), &fromText); err != nil {
		t.Fatalf("format=json text is not JSON: %v\n%s", err, tc.Text)
	}
	_ = json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), &fromStructured)
	if diff := cmp.Diff(fromStructured, fromText); diff != "" {
		t.Errorf("format=json text differs from structuredContent (-structured +text):\n%s", diff)
	}
}

// TestQueryUpstreamFaults makes the fake portal fail and checks the
// error_type the model gets. Each case has its own harness (the faults are
// global to a fake server) with a client that does not retry and times out
// quickly, unless the case says otherwise.
func TestQueryUpstreamFaults(t *testing.T) {
	t.Parallel()
	const soql = "SELECT facilitytype, count(*) AS n GROUP BY facilitytype"
	tests := []struct {
		name     string
		opts     harnessOptions
		tool     string
		args     map[string]any
		fault    func(h *harness)
		wantType string
		check    func(t *testing.T, e toolError)
	}{
		{
			name: "429 without retries", opts: harnessOptions{maxRetries: -1, timeout: 5 * time.Second},
			tool: "query_datasf", args: map[string]any{"dataset_id": "rqzj-sfat", "soql": soql},
			fault:    func(h *harness) { h.fake.FailNext(2, 429, 7*time.Second) },
			wantType: "rate_limit",
			check: func(t *testing.T, e toolError) {
				if e.Details["retry_after_seconds"] != float64(7) {
					t.Errorf("details.retry_after_seconds = %v; want 7", e.Details["retry_after_seconds"])
				}
			},
		},
		{
			// The default client retries, but a Retry-After beyond its total
			// retry wait ends the retries at once.
			name: "429 beyond the default retries", opts: harnessOptions{},
			tool: "query_datasf", args: map[string]any{"dataset_id": "rqzj-sfat", "soql": soql},
			fault:    func(h *harness) { h.fake.FailNext(10, 429, 120*time.Second) },
			wantType: "rate_limit",
			check: func(t *testing.T, e toolError) {
				if e.Details["retry_after_seconds"] != float64(120) {
					t.Errorf("details.retry_after_seconds = %v; want 120", e.Details["retry_after_seconds"])
				}
			},
		},
		{
			name: "500", opts: harnessOptions{maxRetries: -1, timeout: 5 * time.Second},
			tool: "query_datasf", args: map[string]any{"dataset_id": "rqzj-sfat", "soql": soql},
			fault:    func(h *harness) { h.fake.FailNext(2, 500, 0) },
			wantType: "api_error",
			check: func(t *testing.T, e toolError) {
				if e.Details["status"] != float64(500) {
					t.Errorf("details.status = %v; want 500", e.Details["status"])
				}
			},
		},
		{
			// The timeout leaves the warming get_schema time on a busy
			// machine; the latency is far beyond it.
			name: "latency beyond the timeout", opts: harnessOptions{maxRetries: -1, timeout: 2 * time.Second},
			tool: "query_datasf", args: map[string]any{"dataset_id": "rqzj-sfat", "soql": soql},
			fault:    func(h *harness) { h.fake.SetLatency(30 * time.Second) },
			wantType: "timeout",
		},
		{
			name: "get_schema 429", opts: harnessOptions{maxRetries: -1, timeout: 5 * time.Second},
			tool: "get_schema", args: map[string]any{"dataset_id": "wg3w-h783"},
			fault:    func(h *harness) { h.fake.FailNext(1, 429, 3*time.Second) },
			wantType: "rate_limit",
		},
		{
			name: "search 503 without retries", opts: harnessOptions{maxRetries: -1, timeout: 5 * time.Second},
			tool: "search_datasf", args: map[string]any{"query": "food"},
			// Two: reading the whole catalog, then Discovery's own search,
			// the fallback when the catalog cannot be read.
			fault:    func(h *harness) { h.fake.FailNext(2, 503, 0) },
			wantType: "api_error",
		},
		{
			name: "list timeout", opts: harnessOptions{maxRetries: -1, timeout: 200 * time.Millisecond},
			tool: "list_datasf", args: map[string]any{},
			fault:    func(h *harness) { h.fake.SetLatency(30 * time.Second) },
			wantType: "timeout",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, tt.opts)
			if tt.tool == "query_datasf" {
				// Warm the schema cache so the fault hits the query itself.
				var s schemaOut
				args := map[string]any{"dataset_id": tt.args["dataset_id"]}
				structured(t, "get_schema", args, h.call(t, "get_schema", args), &s)
			}
			before := h.fake.RequestCount("resource")
			tt.fault(h)
			e := errorOf(t, tt.tool, tt.args, h.call(t, tt.tool, tt.args))
			h.fake.Reset() // release delayed requests before the harness closes
			if e.ErrorType != tt.wantType {
				t.Errorf("%s(%v) under %s: error_type %q; want %q (error %q)", tt.tool, tt.args, tt.name, e.ErrorType, tt.wantType, e.Error)
			}
			if tt.check != nil {
				tt.check(t, e)
			}
			if tt.tool == "query_datasf" && h.fake.RequestCount("resource") == before && tt.wantType != "timeout" {
				t.Errorf("the fault did not reach the resource endpoint")
			}
			t.Logf("%s: %s: %s", tt.name, e.ErrorType, e.Error)
		})
	}
}

// TestQueryUnknownDataset checks an unknown dataset id.
func TestQueryUnknownDataset(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	args := map[string]any{"dataset_id": "zzzz-9999", "soql": "SELECT *"}
	e := errorOf(t, "query_datasf", args, h.call(t, "query_datasf", args))
	if e.ErrorType != "not_found" || !strings.Contains(e.Error, "zzzz-9999") {
		t.Errorf("query_datasf on an unknown dataset = %s %q; want not_found naming the id", e.ErrorType, e.Error)
	}
}
