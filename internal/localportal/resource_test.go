package localportal

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

func TestFixturesLoaded(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t)
	// Expected row counts come from reading the files directly.
	want := map[string]int{
		"rqzj-sfat": len(readResourceRows(t, "rqzj-sfat")),
		"wg3w-h783": len(readResourceRows(t, "wg3w-h783")),
	}
	for _, id := range []string{"yitu-d5am", "vw6y-z8j6"} {
		b, err := os.ReadFile(fixtureFile(t, id, ".rows.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Data []json.RawMessage }
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		want[id] = len(doc.Data)
	}
	got := map[string]int{}
	for _, id := range srv.Datasets() {
		if _, ok := want[id]; !ok {
			continue
		}
		rows := query(t, srv, id, "SELECT count(*)")
		n, _ := strconv.Atoi(rows[0]["count"].(string))
		got[id] = n
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("row counts (-files +server):\n%s", diff)
	}
	t.Logf("fixture datasets loaded: %v", got)
}

func TestCorpusQueries(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t)
	f, err := os.Open(fixtures.Path(t, "soql", "datasf-queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	withData := map[string]bool{}
	for _, id := range srv.Datasets() {
		withData[id] = true
	}
	placeholder := regexp.MustCompile(`\bstart_date\b`)
	type tally struct{ run, ok, rows int }
	var data, catalogOnly tally
	reasons := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var q struct{ Dataset, SoQL string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		if _, known := srv.Schema(q.Dataset); !known {
			reasons["dataset not in catalog"]++
			continue
		}
		// The bare placeholder becomes a timestamp literal; one already quoted
		// in the source ('start_date') keeps its quotes.
		text := strings.ReplaceAll(q.SoQL, "'start_date'", "start_date")
		text = placeholder.ReplaceAllString(text, "'2024-01-01T00:00:00'")
		tl := &catalogOnly
		if withData[q.Dataset] {
			tl = &data
		}
		tl.run++
		r := get(t, srv, "/resource/"+q.Dataset+".json", url.Values{"$query": {text}})
		if r.status == http.StatusOK {
			tl.ok++
			tl.rows += len(decodeRows(t, r.body))
			continue
		}
		body := decodeObject(t, r.body)
		code, _ := body["errorCode"].(string)
		if code == "" {
			code, _ = body["code"].(string)
		}
		msg := fmt.Sprint(body["message"])
		reason := code + ": " + shorten(msg, 110)
		reasons[reason]++
		if withData[q.Dataset] {
			t.Errorf("query on loaded dataset %s failed: %d %s\n%s", q.Dataset, r.status, r.body, text)
		}
	}
	t.Logf("datasf-queries on datasets with fixture data: %d run, %d ok, %d failed, %d rows returned", data.run, data.ok, data.run-data.ok, data.rows)
	t.Logf("datasf-queries on catalog-only datasets (the catalog schema, no rows): %d run, %d ok, %d failed", catalogOnly.run, catalogOnly.ok, catalogOnly.run-catalogOnly.ok)
	for _, k := range sortedKeys(reasons) {
		t.Logf("  %3d × %s", reasons[k], k)
	}
	if data.run == 0 {
		t.Error("no query of the corpus targets a loaded dataset")
	}
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// TestAggregatesAgainstScan checks grouped results against values computed
// by scanning the fixture JSON in the test.
func TestAggregatesAgainstScan(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t)
	food := readResourceRows(t, "rqzj-sfat")
	incidents := readResourceRows(t, "wg3w-h783")

	t.Run("count per facilitytype", func(t *testing.T) {
		t.Parallel()
		want := map[string]string{}
		counts := map[string]int{}
		for _, r := range food {
			k, _ := r["facilitytype"].(string)
			if k == "" {
				k = "<null>"
			}
			counts[k]++
		}
		for k, n := range counts {
			want[k] = strconv.Itoa(n)
		}
		got := map[string]string{}
		for _, r := range query(t, srv, "rqzj-sfat", "SELECT facilitytype, count(*) AS n GROUP BY facilitytype") {
			k, _ := r["facilitytype"].(string)
			if k == "" {
				k = "<null>"
			}
			got[k] = r["n"].(string)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("count per facilitytype (-scan +server):\n%s", diff)
		}
		t.Logf("rqzj-sfat count per facilitytype: %v", got)
	})

	t.Run("count per subcategory and district sums", func(t *testing.T) {
		t.Parallel()
		type agg struct {
			n        int
			sum      float64
			max      string
			distinct map[string]bool
		}
		want := map[string]*agg{}
		for _, r := range incidents {
			k := r["incident_subcategory"].(string)
			a := want[k]
			if a == nil {
				a = &agg{distinct: map[string]bool{}}
				want[k] = a
			}
			a.n++
			if d, ok := r["supervisor_district"].(string); ok {
				f, _ := strconv.ParseFloat(d, 64)
				a.sum += f
			}
			if ts := r["incident_datetime"].(string); ts > a.max {
				a.max = ts
			}
			if pd, ok := r["police_district"].(string); ok {
				a.distinct[pd] = true
			}
		}
		rows := query(t, srv, "wg3w-h783", "SELECT incident_subcategory, count(*) AS n, sum(supervisor_district) AS s, "+
			"max(incident_datetime) AS latest, count(DISTINCT police_district) AS districts GROUP BY incident_subcategory ORDER BY n DESC")
		if len(rows) != len(want) {
			t.Fatalf("got %d groups, want %d", len(rows), len(want))
		}
		prev := math.MaxInt
		for _, r := range rows {
			a := want[r["incident_subcategory"].(string)]
			if a == nil {
				t.Fatalf("unexpected group %v", r)
			}
			n, _ := strconv.Atoi(r["n"].(string))
			s, _ := strconv.ParseFloat(r["s"].(string), 64)
			d, _ := strconv.Atoi(r["districts"].(string))
			if n != a.n || math.Abs(s-a.sum) > 1e-9 || r["latest"] != a.max || d != len(a.distinct) {
				t.Errorf("group %v: got n=%d sum=%v max=%v districts=%d; want n=%d sum=%v max=%v districts=%d",
					r["incident_subcategory"], n, s, r["latest"], d, a.n, a.sum, a.max, len(a.distinct))
			}
			if n > prev {
				t.Errorf("ORDER BY n DESC: %d after %d", n, prev)
			}
			prev = n
		}
	})

	t.Run("timestamp literal and boolean filter", func(t *testing.T) {
		t.Parallel()
		wantSince, wantOnline := 0, 0
		for _, r := range food {
			if a, ok := r["approved"].(string); ok && a >= "2022-01-01T00:00:00.000" {
				wantSince++
			}
		}
		for _, r := range incidents {
			if b, ok := r["filed_online"].(bool); ok && b {
				wantOnline++
			}
		}
		got := query(t, srv, "rqzj-sfat", "SELECT count(*) AS n WHERE approved >= '2022-01-01'")[0]["n"]
		if got != strconv.Itoa(wantSince) {
			t.Errorf("approved >= '2022-01-01': got %v, want %d", got, wantSince)
		}
		got = query(t, srv, "wg3w-h783", "SELECT count(*) AS n WHERE filed_online = true")[0]["n"]
		if got != strconv.Itoa(wantOnline) {
			t.Errorf("filed_online = true: got %v, want %d", got, wantOnline)
		}
	})

	t.Run("LLM query with an early start date", func(t *testing.T) {
		t.Parallel()
		want := 0
		for _, r := range food {
			if a, ok := r["approved"].(string); ok && a >= "2022-09-01T00:00:00.000" {
				want++
			}
		}
		rows := query(t, srv, "rqzj-sfat", "SELECT Applicant AS Vendor, FacilityType AS Facility_Type, Status, date_trunc_y(Approved) AS year, "+
			"COUNT(*) AS item_count WHERE Approved >= '2022-09-01' GROUP BY Vendor, Facility_Type, Status, year LIMIT 5000")
		sum := 0
		for _, r := range rows {
			n, _ := strconv.Atoi(r["item_count"].(string))
			sum += n
			if y, ok := r["year"].(string); ok && !strings.HasSuffix(y, "-01-01T00:00:00.000") {
				t.Errorf("date_trunc_y gave %q", y)
			}
		}
		if sum != want {
			t.Errorf("sum of item_count = %d; want %d", sum, want)
		}
	})

	t.Run("within_circle", func(t *testing.T) {
		t.Parallel()
		const lat, lon, radius = 37.7749, -122.4194, 1000.0
		want := 0
		for _, r := range incidents {
			p, ok := r["point"].(map[string]any)
			if !ok {
				continue
			}
			c := p["coordinates"].([]any)
			if greatCircle(lat, lon, c[1].(float64), c[0].(float64)) <= radius {
				want++
			}
		}
		got := query(t, srv, "wg3w-h783", fmt.Sprintf("SELECT count(*) AS n WHERE within_circle(point, %v, %v, %v)", lat, lon, radius))[0]["n"]
		if got != strconv.Itoa(want) || want == 0 {
			t.Errorf("within_circle count = %v; want %d (> 0)", got, want)
		}
	})

	t.Run("chained query counts groups", func(t *testing.T) {
		t.Parallel()
		groups := map[string]bool{}
		for _, r := range incidents {
			groups[fmt.Sprint(r["police_district"], "|", r["resolution"])] = true
		}
		got := query(t, srv, "wg3w-h783", "SELECT police_district, resolution, count(*) AS n GROUP BY police_district, resolution |> SELECT count(*) AS groups")[0]["groups"]
		if got != strconv.Itoa(len(groups)) {
			t.Errorf("groups = %v; want %d", got, len(groups))
		}
	})
}

// greatCircle is the test's own spherical distance in meters (law of cosines).
func greatCircle(lat1, lon1, lat2, lon2 float64) float64 {
	r := math.Pi / 180
	c := math.Sin(lat1*r)*math.Sin(lat2*r) + math.Cos(lat1*r)*math.Cos(lat2*r)*math.Cos((lon2-lon1)*r)
	return 6371008.8 * math.Acos(math.Min(1, c))
}

func TestEncodingAndHeaders(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t)
	r := get(t, srv, "/resource/wg3w-h783.json", url.Values{
		"$select": {"incident_id, supervisor_district, filed_online, point, count(*) AS n"},
		"$group":  {"incident_id, supervisor_district, filed_online, point"},
		"$order":  {"incident_id"},
		"$limit":  {"5"},
	})
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	var fields, types []string
	json.Unmarshal([]byte(r.header.Get("X-SODA2-Fields")), &fields) //nolint:errcheck // compared below
	json.Unmarshal([]byte(r.header.Get("X-SODA2-Types")), &types)   //nolint:errcheck // compared below
	if diff := cmp.Diff([]string{"incident_id", "supervisor_district", "filed_online", "point", "n"}, fields); diff != "" {
		t.Errorf("X-SODA2-Fields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"text", "number", "boolean", "point", "number"}, types); diff != "" {
		t.Errorf("X-SODA2-Types (-want +got):\n%s", diff)
	}
	rows := decodeRows(t, r.body)
	if len(rows) != 5 {
		t.Fatalf("got %d rows, want 5", len(rows))
	}
	sawBool, sawNullOmitted := false, false
	for _, row := range rows {
		if _, ok := row["n"].(string); !ok {
			t.Errorf("count is %T, want a JSON string", row["n"])
		}
		if d, ok := row["supervisor_district"]; ok {
			if _, isStr := d.(string); !isStr {
				t.Errorf("number is %T, want a JSON string", d)
			}
		}
		if b, ok := row["filed_online"]; ok {
			if _, isBool := b.(bool); !isBool {
				t.Errorf("checkbox is %T, want a JSON boolean", b)
			}
			sawBool = true
		} else {
			sawNullOmitted = true
		}
		if p, ok := row["point"].(map[string]any); ok {
			if p["type"] != "Point" || len(p["coordinates"].([]any)) != 2 {
				t.Errorf("point = %v, want GeoJSON", p)
			}
		}
	}
	if !sawNullOmitted && !sawBool {
		t.Errorf("rows have neither a boolean nor an omitted null filed_online: %v", rows)
	}
}

func TestSeparateParamsMatchQuery(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t)
	sep := get(t, srv, "/resource/rqzj-sfat.json", url.Values{
		"$select": {"status, count(*) AS n"}, "$where": {"facilitytype = 'Truck'"},
		"$group": {"status"}, "$having": {"count(*) > 1"}, "$order": {"n DESC, status"}, "$limit": {"3"}, "$offset": {"1"},
	})
	if sep.status != http.StatusOK {
		t.Fatalf("status %d: %s", sep.status, sep.body)
	}
	want := query(t, srv, "rqzj-sfat", "SELECT status, count(*) AS n WHERE facilitytype = 'Truck' GROUP BY status HAVING count(*) > 1 ORDER BY n DESC, status LIMIT 3 OFFSET 1")
	if diff := cmp.Diff(want, decodeRows(t, sep.body)); diff != "" {
		t.Errorf("separate parameters vs $query (-query +params):\n%s", diff)
	}
	// A simple column filter and $q full-text search.
	simple := get(t, srv, "/resource/rqzj-sfat.json", url.Values{"facilitytype": {"Push Cart"}, "$select": {"count(*) AS n"}})
	all := readResourceRows(t, "rqzj-sfat")
	carts, tacos := 0, 0
	for _, r := range all {
		if r["facilitytype"] == "Push Cart" {
			carts++
		}
		for _, v := range r {
			if s, ok := v.(string); ok && strings.Contains(strings.ToLower(s), "tacos") {
				tacos++
				break
			}
		}
	}
	if got := decodeRows(t, simple.body); len(got) != 1 || got[0]["n"] != strconv.Itoa(carts) {
		t.Errorf("facilitytype=Push Cart: got %s, want n=%d", simple.body, carts)
	}
	search := get(t, srv, "/resource/rqzj-sfat.json", url.Values{"$q": {"TACOS"}, "$select": {"count(*) AS n"}})
	if got := decodeRows(t, search.body); len(got) != 1 || got[0]["n"] != strconv.Itoa(tacos) {
		t.Errorf("$q=TACOS: got %s, want n=%d", search.body, tacos)
	}
}

func TestDefaultLimit(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t)
	if n := len(decodeRows(t, get(t, srv, "/resource/yitu-d5am.json", nil).body)); n != 1000 {
		t.Errorf("no $limit: got %d rows, want Socrata's default 1000", n)
	}
	if n := len(query(t, srv, "yitu-d5am", "SELECT title LIMIT 1100")); n != 1100 {
		t.Errorf("LIMIT 1100: got %d rows", n)
	}
}

func TestCaseSensitiveText(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t)
	tests := []struct {
		where string
		zero  bool
	}{
		{"facilitytype = 'Truck'", false},
		{"facilitytype = 'truck'", true},
		{"facilitytype = 'TRUCK'", true},
		{"upper(facilitytype) = 'TRUCK'", false},
		{"facilitytype like 'Tr%'", false},
		{"facilitytype like 'tr%'", true},
		{"starts_with(facilitytype, 'Tru')", false},
		{"starts_with(facilitytype, 'tru')", true},
		{"contains(applicant, 'Taco')", false},
		{"contains(applicant, 'tACO')", true},
		{"facilitytype > 'T'", false},
		{"facilitytype > 't'", true}, // 'T' < 't' in byte order
	}
	for _, tt := range tests {
		t.Run(tt.where, func(t *testing.T) {
			t.Parallel()
			n := query(t, srv, "rqzj-sfat", "SELECT count(*) AS n WHERE "+tt.where)[0]["n"]
			if (n == "0") != tt.zero {
				t.Errorf("WHERE %s: count %v, want zero=%v", tt.where, n, tt.zero)
			}
		})
	}
}

func TestErrorEnvelopes(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t)
	tests := []struct {
		name   string
		path   string
		params url.Values
		status int
		want   map[string]any // top-level fields that must match
	}{
		{"no such column", "/resource/rqzj-sfat.json", url.Values{"$query": {"SELECT applicant, nosuchcolumn"}}, 400,
			map[string]any{"errorCode": "query.soql.no-such-column",
				"message": "Query coordinator error: query.soql.no-such-column; No such column: nosuchcolumn",
				"data": map[string]any{"column": "nosuchcolumn", "dataset": "rqzj-sfat",
					"position": map[string]any{"row": 1.0, "column": 19.0, "line": "SELECT applicant, nosuchcolumn"}}}},
		{"malformed", "/resource/rqzj-sfat.json", url.Values{"$query": {"SELECT WHERE FROM"}}, 400,
			map[string]any{"code": "query.compiler.malformed", "error": true,
				"message": "Could not parse SoQL query 'SELECT WHERE FROM' at line 1 character 14: Expected an expression, but got `FROM'"}},
		{"no such function", "/resource/rqzj-sfat.json", url.Values{"$select": {"frobnicate(applicant)"}}, 400,
			map[string]any{"errorCode": "query.soql.no-such-function"}},
		{"dataset missing", "/resource/zzzz-zzzz.json", nil, 404,
			map[string]any{"code": "dataset.missing", "error": true, "message": "Not found", "data": map[string]any{"id": "zzzz-zzzz"}}},
		{"not a dataset id", "/resource/missing.json", nil, 404,
			map[string]any{"code": "not_found", "error": true, "message": "No service found for this URL."}},
		{"view missing", "/api/views/zzzz-zzzz.json", nil, 404,
			map[string]any{"code": "not_found", "error": true, "message": "Cannot find view with id zzzz-zzzz"}},
		{"$query with $limit", "/resource/rqzj-sfat.json", url.Values{"$query": {"SELECT applicant"}, "$limit": {"10"}}, 400,
			map[string]any{"error": true, "message": "If $query is used, all options - [$limit] should not be specified in $query."}},
		{"$query with $offset", "/resource/rqzj-sfat.json", url.Values{"$query": {"SELECT applicant"}, "$offset": {"10"}}, 400,
			map[string]any{"error": true, "message": "If $query is used, all options - [$offset] should not be specified in $query."}},
		{"unrecognized arguments", "/resource/rqzj-sfat.json", url.Values{"select": {"applicant"}, "group": {"x"}}, 400,
			map[string]any{"error": true, "message": "Unrecognized arguments [group, select]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := get(t, srv, tt.path, tt.params)
			if r.status != tt.status {
				t.Fatalf("status = %d; want %d (%s)", r.status, tt.status, r.body)
			}
			body := decodeObject(t, r.body)
			got := map[string]any{}
			for k := range tt.want {
				got[k] = body[k]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("envelope (-want +got):\n%s\nbody: %s", diff, r.body)
			}
		})
	}
}

func TestNullOrdering(t *testing.T) {
	t.Parallel()
	srv := newPortal(t)
	vals := []any{"3", nil, "1", nil, "2"}
	err := srv.AddGenerated(t.Context(), Schema{ID: "null_test", Columns: []socrata.Column{{FieldName: "k", DataType: "number"}, {FieldName: "label", DataType: "text"}}},
		len(vals), func(i int) map[string]any { return map[string]any{"k": vals[i], "label": strconv.Itoa(i)} })
	if err == nil {
		t.Fatal("AddGenerated accepted the non-4x4 id \"null_test\"")
	}
	err = srv.AddGenerated(t.Context(), Schema{ID: "null-0001", Columns: []socrata.Column{{FieldName: "k", DataType: "number"}, {FieldName: "label", DataType: "text"}}},
		len(vals), func(i int) map[string]any { return map[string]any{"k": vals[i], "label": strconv.Itoa(i)} })
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		order string
		want  []string // k values, "-" for null
	}{
		{"k", []string{"1", "2", "3", "-", "-"}},
		{"k ASC", []string{"1", "2", "3", "-", "-"}},
		{"k DESC", []string{"-", "-", "3", "2", "1"}},
		{"k ASC NULLS FIRST", []string{"-", "-", "1", "2", "3"}},
		{"k DESC NULLS LAST", []string{"3", "2", "1", "-", "-"}},
	}
	for _, tt := range tests {
		rows := query(t, srv, "null-0001", "SELECT k, label ORDER BY "+tt.order+", :id")
		var got []string
		for _, r := range rows {
			if k, ok := r["k"].(string); ok {
				got = append(got, k)
			} else {
				got = append(got, "-")
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ORDER BY %s (-want +got):\n%s", tt.order, diff)
		}
	}
}

func TestViewsDocument(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t)
	r := get(t, srv, "/api/views/rqzj-sfat.json", nil)
	if r.status != http.StatusOK {
		t.Fatalf("status %d", r.status)
	}
	var doc struct {
		ID, Name, Category string
		RowsUpdatedAt      int64
		Columns            []struct{ Name, FieldName, DataTypeName string }
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.ID != "rqzj-sfat" || doc.Name != "Mobile Food Facility Permit" || doc.Category != "Economy and Community" || doc.RowsUpdatedAt == 0 {
		t.Errorf("view = %+v", doc)
	}
	fields := map[string]string{}
	for _, c := range doc.Columns {
		fields[c.FieldName] = c.DataTypeName
	}
	for f, typ := range map[string]string{"applicant": "text", "objectid": "number", "approved": "calendar_date", "location": "location"} {
		if fields[f] != typ {
			t.Errorf("column %s has type %q, want %q", f, fields[f], typ)
		}
	}
}

func TestDiscovery(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t)
	type result struct {
		Resource struct {
			ID, Name, Type   string
			ColumnsFieldName []string `json:"columns_field_name"`
		}
		Classification struct {
			DomainCategory string `json:"domain_category"`
		}
		Metadata  struct{ Domain string }
		Permalink string
	}
	search := func(params url.Values) ([]result, int) {
		r := get(t, srv, "/api/catalog/v1", params)
		if r.status != http.StatusOK {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		var body struct {
			Results       []result
			ResultSetSize int
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		return body.Results, body.ResultSetSize
	}
	res, total := search(url.Values{"q": {"mobile food facility"}, "domains": {"data.sf.gov"}, "search_context": {"data.sf.gov"}, "only": {"dataset"}, "limit": {"5"}})
	if len(res) == 0 || res[0].Resource.ID != "rqzj-sfat" {
		t.Errorf("search 'mobile food facility': first result %v, want rqzj-sfat", res)
	} else if res[0].Resource.Type != "dataset" || res[0].Metadata.Domain != "data.sf.gov" || res[0].Permalink != "https://data.sf.gov/d/rqzj-sfat" ||
		!contains(res[0].Resource.ColumnsFieldName, "facilitytype") {
		t.Errorf("result shape: %+v", res[0])
	}
	if total < len(res) {
		t.Errorf("resultSetSize %d < %d results", total, len(res))
	}
	// Paging: offset pages together equal one big page.
	all, n := search(url.Values{"categories": {"Public Safety"}, "order": {"updatedAt"}, "limit": {"1000"}})
	if n == 0 || n != len(all) {
		t.Fatalf("Public Safety: %d results, resultSetSize %d", len(all), n)
	}
	var paged []string
	for off := 0; off < n; off += 7 {
		page, _ := search(url.Values{"categories": {"Public Safety"}, "order": {"updatedAt"}, "limit": {"7"}, "offset": {strconv.Itoa(off)}})
		for _, p := range page {
			if p.Classification.DomainCategory != "Public Safety" {
				t.Errorf("category filter let through %s (%s)", p.Resource.ID, p.Classification.DomainCategory)
			}
			paged = append(paged, p.Resource.ID)
		}
	}
	var ids []string
	for _, a := range all {
		ids = append(ids, a.Resource.ID)
	}
	if diff := cmp.Diff(ids, paged); diff != "" {
		t.Errorf("paged results differ from one page (-one +paged):\n%s", diff)
	}
	if other, n := search(url.Values{"q": {"food"}, "domains": {"data.cityofchicago.org"}}); len(other) != 0 || n != 0 {
		t.Errorf("another domain returned %d results", n)
	}
	t.Logf("discovery: 'mobile food facility' → %d results; Public Safety → %d datasets", total, n)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
