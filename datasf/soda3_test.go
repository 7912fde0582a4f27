package datasf_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/internal/fixtures/fixtureportal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// soda3Answer is the part of query_datasf's structured content these tests read.
type soda3Answer struct {
	Results  []map[string]any `json:"results"`
	Resource struct {
		URL string `json:"url"`
	} `json:"resource"`
	Metadata struct {
		PortalURL  string `json:"portal_url"` // its $query is the query run
		TotalCount int64  `json:"total_count"`
	} `json:"metadata"`
}

// longObjectIDQuery returns a query of at least 10,000 characters on the
// mobile food permits: objectid IN (every other objectid of the fixture,
// then numbers no permit has), and the rows it must return, from the
// fixture file.
func longObjectIDQuery(t *testing.T) (string, map[string]bool) {
	t.Helper()
	var b strings.Builder
	b.WriteString("SELECT objectid, applicant, status WHERE objectid IN (")
	want := map[string]bool{}
	for i, row := range resourceRows(t, "rqzj-sfat") {
		if i%2 == 0 {
			id := row["objectid"].(string)
			want[id] = true
			fmt.Fprintf(&b, "%s, ", id)
		}
	}
	for n := 9_000_000; b.Len() < 10_000; n++ {
		fmt.Fprintf(&b, "%d, ", n)
	}
	b.WriteString("1) ORDER BY objectid DESC")
	return b.String(), want
}

// soda3Env starts the product over portal; token "" means none.
func soda3Env(t *testing.T, portal *socratatest.Server, token string) *datasftest.Env {
	t.Helper()
	env, err := datasftest.Start(t.Context(), datasftest.Options{PortalURL: portal.URL(),
		Config: datasf.Config{Socrata: socrata.Options{AppToken: token}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() }) //nolint:errcheck // closing at the end of the test
	return env
}

// soda3Query calls query_datasf through env's MCP session and returns its
// answer and the complete result read back from its REST link.
func soda3Query(t *testing.T, env *datasftest.Env, datasetID, soqlText string) (soda3Answer, []map[string]any) {
	t.Helper()
	args := map[string]any{"dataset_id": datasetID, "soql": soqlText, "sample_size": 5}
	res, err := env.Call(t.Context(), "query_datasf", args)
	if err != nil {
		t.Fatalf("query_datasf: %v", err)
	}
	var a soda3Answer
	structured(t, "query_datasf", datasetID, res, &a)
	var page struct {
		Data []map[string]any `json:"data"`
	}
	u, err := url.Parse(a.Resource.URL)
	if err != nil || a.Resource.URL == "" {
		t.Fatalf("resource.url %q: %v", a.Resource.URL, err)
	}
	u.RawQuery = url.Values{"offset": {"0"}, "limit": {"1000"}}.Encode()
	getJSON(t, u.String(), &page)
	return a, page.Data
}

// TestQuerySODA3 runs a 10 KB SoQL through MCP sessions of the product
// with an app token (so SODA3) and without (so SODA 2.1) against one fake
// portal: the totals, samples and complete results are identical and
// match the fixture, and the portal's request log shows which API each
// product used.
func TestQuerySODA3(t *testing.T) {
	t.Parallel()
	portal := fixtureportal.New(t)
	const tok = "tok-mcp-soda3"
	long, want := longObjectIDQuery(t)
	if len(long) < 10_000 || len(long) > datasf.MaxSoQL {
		t.Fatalf("the query has %d characters; want 10,000 to %d", len(long), datasf.MaxSoQL)
	}
	type run struct {
		answer   soda3Answer
		rows     []map[string]any
		query    int // SODA3 requests the call made
		resource int // SODA 2.1 requests the call made
	}
	do := func(token string) run {
		env := soda3Env(t, portal, token)
		q0, r0 := portal.RequestCount("query"), portal.RequestCount("resource")
		a, rows := soda3Query(t, env, "rqzj-sfat", long)
		return run{a, rows, portal.RequestCount("query") - q0, portal.RequestCount("resource") - r0}
	}
	// One after the other: the request counts are the portal's.
	v3 := do(tok)
	v2 := do("")

	if v3.query == 0 || v3.resource != 0 {
		t.Errorf("with a token: %d SODA3 and %d SODA 2.1 requests; want some and none", v3.query, v3.resource)
	}
	if v2.query != 0 || v2.resource == 0 {
		t.Errorf("without a token: %d SODA3 and %d SODA 2.1 requests; want none and some", v2.query, v2.resource)
	}
	if v3.answer.Metadata.TotalCount != int64(len(want)) || v2.answer.Metadata.TotalCount != int64(len(want)) {
		t.Errorf("total_count: SODA3 %d, SODA 2.1 %d; the fixture has %d matching rows",
			v3.answer.Metadata.TotalCount, v2.answer.Metadata.TotalCount, len(want))
	}
	if len(v3.rows) != len(want) {
		t.Errorf("the complete SODA3 result has %d rows; want %d", len(v3.rows), len(want))
	}
	for _, r := range v3.rows {
		if !want[fmt.Sprint(r["objectid"])] {
			t.Errorf("row objectid %v is not in the query's list", r["objectid"])
		}
	}
	if diff := cmp.Diff(v2.rows, v3.rows); diff != "" {
		t.Errorf("complete results differ (-2.1 +SODA3):\n%s", diff)
	}
	if diff := cmp.Diff(v2.answer.Results, v3.answer.Results); diff != "" {
		t.Errorf("samples differ (-2.1 +SODA3):\n%s", diff)
	}
	if q3, q2 := portalQuery(t, v3.answer.Metadata.PortalURL), portalQuery(t, v2.answer.Metadata.PortalURL); q3 != q2 {
		t.Errorf("stored queries differ:\n SODA3 %.200s\n 2.1   %.200s", q3, q2)
	}
	for _, r := range portal.Requests() {
		if r.Endpoint == "query" && (r.Method != "POST" || !r.AppTokenSent) {
			t.Errorf("SODA3 request %s %s, token sent %v; want a POST with X-App-Token", r.Method, r.Path, r.AppTokenSent)
		}
	}
	t.Logf("%d-character SoQL: %d rows (total_count %d) via SODA3 in %d requests and via SODA 2.1 in %d requests, identical",
		len(long), len(v3.rows), v3.answer.Metadata.TotalCount, v3.query, v2.resource)
}

// TestQuerySODA3Fallback runs query_datasf with a token against a portal
// without SODA3: the answer is right, the first portal query tried SODA3
// once, and every later one (the rest of the call, a second call, the
// result's REST page) went to SODA 2.1.
func TestQuerySODA3Fallback(t *testing.T) {
	t.Parallel()
	// A portal of its own, whose SODA3 it turns off: the one dataset it
	// queries, without the shared fixtures.
	portal := socratatest.NewServer(t)
	if err := portal.LoadFiles(t.Context(), "rqzj-sfat="+fixtureFile(t, "rqzj-sfat", ".json")); err != nil {
		t.Fatal(err)
	}
	if err := portal.SetSODA3(false); err != nil {
		t.Fatal(err)
	}
	env := soda3Env(t, portal, "tok")
	const q = "SELECT facilitytype, count(*) AS n GROUP BY facilitytype ORDER BY facilitytype"
	first, rows := soda3Query(t, env, "rqzj-sfat", q)
	if first.Metadata.TotalCount == 0 || len(rows) != int(first.Metadata.TotalCount) {
		t.Fatalf("total_count %d, %d rows in the complete result; want the same, above 0", first.Metadata.TotalCount, len(rows))
	}
	second, _ := soda3Query(t, env, "rqzj-sfat", "SELECT applicant WHERE status = 'APPROVED'")
	if second.Metadata.TotalCount == 0 {
		t.Error("the second query counted no rows")
	}
	if n := portal.RequestCount("query"); n != 1 {
		t.Errorf("%d SODA3 requests; want 1 (the first query's, answered 404)", n)
	}
	if n := portal.RequestCount("resource"); n < 4 {
		t.Errorf("%d SODA 2.1 requests; want every query (at least a count and a sample per call)", n)
	}
	want := map[string]int{}
	for _, r := range resourceRows(t, "rqzj-sfat") {
		want[fmt.Sprint(r["facilitytype"])]++
	}
	for _, r := range rows {
		k := fmt.Sprint(r["facilitytype"])
		if k == "<nil>" {
			continue
		}
		if fmt.Sprint(want[k]) != fmt.Sprint(r["n"]) {
			t.Errorf("facilitytype %q: n = %v; the fixture has %d", k, r["n"], want[k])
		}
	}
}
