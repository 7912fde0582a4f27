package datasf_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestQueryOtherDatasets runs queries on the datasets loaded from other
// export formats and checks the totals and full results against counts the
// test makes from the fixture files.
func TestQueryOtherDatasets(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	countWhere := func(rows []map[string]any, keep func(map[string]any) bool) int64 {
		var n int64
		for _, r := range rows {
			if keep(r) {
				n++
			}
		}
		return n
	}
	films := rowsJSON(t, "yitu-d5am")
	incidents := resourceRows(t, "wg3w-h783")
	cases311 := rowsJSON(t, "vw6y-z8j6")
	tests := []struct {
		id, soql string
		want     int64
	}{
		{"yitu-d5am", "SELECT title, release_year WHERE release_year > 2010", countWhere(films, func(r map[string]any) bool {
			y, err := strconv.ParseFloat(str(r["release_year"]), 64)
			return err == nil && y > 2010
		})},
		{"yitu-d5am", "SELECT title, locations", int64(len(films))},
		{"wg3w-h783", "SELECT incident_id, incident_datetime WHERE filed_online = true", countWhere(incidents, func(r map[string]any) bool { return r["filed_online"] == true })},
		{"wg3w-h783", "SELECT incident_id", int64(len(incidents))},
		{"vw6y-z8j6", "SELECT service_request_id", int64(len(cases311))},
	}
	for _, tt := range tests {
		t.Run(tt.id+" "+tt.soql, func(t *testing.T) {
			t.Parallel()
			out := h.query(t, map[string]any{"dataset_id": tt.id, "soql": tt.soql, "sample_size": 5})
			if out.Metadata.TotalCount != tt.want {
				t.Errorf("query_datasf(%s, %q).total_count = %d; want %d (counted in the fixture)", tt.id, tt.soql, out.Metadata.TotalCount, tt.want)
			}
			rows, pages := fetchAll(t, out.Resource.URL, 250)
			if int64(len(rows)) != tt.want {
				t.Errorf("REST pages of %q hold %d rows; want %d", tt.soql, len(rows), tt.want)
			}
			t.Logf("query_datasf(%s, %q): total_count %d (fixture %d), %d rows in %d pages", tt.id, tt.soql, out.Metadata.TotalCount, tt.want, len(rows), pages)
		})
	}
}

// TestQueryUserOffset checks a user LIMIT with OFFSET: the total and the
// rows are the window the user asked for.
func TestQueryUserOffset(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	var ids []int64
	for _, r := range resourceRows(t, "rqzj-sfat") {
		n, err := strconv.ParseInt(str(r["objectid"]), 10, 64)
		if err != nil {
			t.Fatalf("fixture objectid %v: %v", r["objectid"], err)
		}
		ids = append(ids, n)
	}
	slices.Sort(ids)
	tests := []struct {
		soql string
		want []int64
	}{
		{"SELECT objectid ORDER BY objectid LIMIT 5 OFFSET 3", ids[3:8]},
		{"SELECT objectid ORDER BY objectid DESC LIMIT 4 OFFSET 480", reversed(ids)[480:484]},
		{"SELECT objectid ORDER BY objectid LIMIT 10 OFFSET 484", ids[484:]},
		{"SELECT objectid ORDER BY objectid OFFSET 480", ids[480:]},
	}
	for _, tt := range tests {
		t.Run(tt.soql, func(t *testing.T) {
			t.Parallel()
			out := h.query(t, map[string]any{"dataset_id": "rqzj-sfat", "soql": tt.soql, "sample_size": 2})
			if out.Metadata.TotalCount != int64(len(tt.want)) {
				t.Errorf("query_datasf(%q).total_count = %d; want %d", tt.soql, out.Metadata.TotalCount, len(tt.want))
			}
			rows, _ := fetchAll(t, out.Resource.URL, 3)
			var got []int64
			for _, r := range rows {
				n, _ := strconv.ParseInt(str(r["objectid"]), 10, 64)
				got = append(got, n)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("REST result of %q (-want +got):\n%s", tt.soql, diff)
			}
		})
	}
}

func reversed(s []int64) []int64 {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

// TestRESTSortAndExport exercises the portal.Executor behind the REST endpoint:
// pages sorted by a result column (POST) and the streamed export.
func TestRESTSortAndExport(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	rows := resourceRows(t, "rqzj-sfat")

	t.Run("sort grouped result by count", func(t *testing.T) {
		t.Parallel()
		out := h.query(t, map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT status, count(*) AS n GROUP BY status"})
		want := groupCounts(rows, "status")
		var p page
		postJSON(t, out.Resource.URL, `{"offset":0,"limit":100,"sort":{"field":"n","order":"desc"}}`, &p)
		var got []int64
		for _, r := range p.Data {
			n, _ := strconv.ParseInt(str(r["n"]), 10, 64)
			got = append(got, n)
		}
		if !slices.IsSortedFunc(got, func(a, b int64) int { return int(b - a) }) || len(got) != len(want) {
			t.Errorf("groups sorted by n desc = %v; want %d counts in descending order", got, len(want))
		}
		if diff := cmp.Diff(want, resultCounts(t, p.Data, "status")); diff != "" {
			t.Errorf("sorted page counts (-fixture +got):\n%s", diff)
		}
	})
	t.Run("sort rows by a text column, paged", func(t *testing.T) {
		t.Parallel()
		out := h.query(t, map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT objectid, status"})
		var all []map[string]any
		for offset := 0; offset < len(rows); offset += 100 {
			var p page
			postJSON(t, out.Resource.URL, `{"offset":`+strconv.Itoa(offset)+`,"limit":100,"sort":{"field":"status","order":"asc"}}`, &p)
			all = append(all, p.Data...)
		}
		if len(all) != len(rows) {
			t.Fatalf("sorted pages hold %d rows; want %d", len(all), len(rows))
		}
		keys(t, all, "objectid") // no row twice
		for i := 1; i < len(all); i++ {
			if str(all[i]["status"]) < str(all[i-1]["status"]) {
				t.Fatalf("row %d status %q after %q; want ascending", i, all[i]["status"], all[i-1]["status"])
			}
		}
	})
	t.Run("sort by a field that is not a column", func(t *testing.T) {
		t.Parallel()
		out := h.query(t, map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT objectid, status"})
		resp := post(t, out.Resource.URL, `{"offset":0,"limit":10,"sort":{"field":"applicant; DROP","order":"asc"}}`)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("sort by a non-column: HTTP %d; want 400", resp.StatusCode)
		}
	})
	t.Run("ndjson export", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			soql string
			want int
		}{
			{"SELECT objectid, facilitytype", len(rows)},
			{"SELECT objectid LIMIT 7", 7},
			{"SELECT objectid WHERE status = 'APPROVED'", int(countStatus(rows, "APPROVED"))},
		} {
			out := h.query(t, map[string]any{"dataset_id": "rqzj-sfat", "soql": tc.soql})
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, out.Resource.URL+"/export?format=ndjson", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var got []map[string]any
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if strings.TrimSpace(sc.Text()) == "" {
					continue
				}
				var r map[string]any
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatalf("export line %q: %v", sc.Text(), err)
				}
				got = append(got, r)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || len(got) != tc.want {
				t.Errorf("export of %q: HTTP %d, %d rows; want 200 and %d", tc.soql, resp.StatusCode, len(got), tc.want)
			}
			keys(t, got, "objectid")
		}
	})
}

func countStatus(rows []map[string]any, status string) int64 {
	var n int64
	for _, r := range rows {
		if r["status"] == status {
			n++
		}
	}
	return n
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func postJSON(t *testing.T, url, body string, v any) {
	t.Helper()
	resp := post(t, url, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s %s: HTTP %d", url, body, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
}
