package socrata

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
)

// TestQueryRecordedExchanges serves Resource API answers in the shape real
// portals give (facts stated here, values our own: the X-SODA2-Fields and
// X-SODA2-Types headers as JSON arrays, every scalar but booleans as a JSON
// string, locations, URLs and documents as objects; see
// https://dev.socrata.com/docs/datatypes/) and checks Query returns the
// same rows, fields and types.
func TestQueryRecordedExchanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		fields, types string // the headers, as sent
		body          string
	}{
		{
			name:   "every column type",
			fields: `["plain_text_column","formatted_text_column","number_column","money_column","percent_column","date_time_column","date_time_with_timezone_column","location_column","website_url_column","email_column","checkbox_column","flag_column","star_column","phone_column","multiple_choice","photo_column","document"]`,
			types:  `["text","text","number","number","number","floating_timestamp","fixed_timestamp","location","url","text","boolean","text","number","text","text","photo","document"]`,
			body: `[{"plain_text_column":"Ferry Building","formatted_text_column":"<p>Open <em>daily</em></p>","number_column":"17","money_column":"2500.75",` +
				`"percent_column":"12.5","date_time_column":"2024-03-01T08:30:00.000","date_time_with_timezone_column":"2024-03-01T16:30:00.000Z",` +
				`"location_column":{"latitude":"37.7955","longitude":"-122.3937","human_address":"{\"address\": \"1 Ferry Building\", \"city\": \"San Francisco\", \"state\": \"CA\", \"zip\": \"94111\"}"},` +
				`"website_url_column":{"url":"https://datasf.org","description":"DataSF"},"email_column":"info@example.org","checkbox_column":true,` +
				`"flag_column":"red","star_column":"4","phone_column":"415-555-0100","multiple_choice":"Yes","photo_column":"a1B2c3D4e5F6",` +
				`"document":{"file_id":"f-123","content_type":"text/plain","filename":"notes.txt"}},` +
				`{"plain_text_column":"Coit Tower","number_column":"-3","checkbox_column":false}]`,
		},
		{
			name:   "no rows",
			fields: `["applicant","status"]`,
			types:  `["text","text"]`,
			body:   `[]`,
		},
		{
			name:   "aliases and an aggregate",
			fields: `["district","n"]`,
			types:  `["text","number"]`,
			body:   `[{"district":"MISSION","n":"120"},{"district":"BAYVIEW","n":"87"},{"n":"3"}]`,
		},
		{
			name:   "spaces in the headers",
			fields: `[ "year", "avg_passengers" ]`,
			types:  `[ "floating_timestamp", "number" ]`,
			body:   `[{"year":"2019-01-01T00:00:00.000","avg_passengers":"18234.5"}]`,
		},
		{
			name:   "system fields",
			fields: `[":id",":created_at","title"]`,
			types:  `["row_identifier","fixed_timestamp","text"]`,
			body:   `[{":id":"row-abcd_efgh.ijkl",":created_at":"2024-05-01T00:00:00.000Z","title":"Vertigo"}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var wantRows []map[string]any
			var wantFields, wantTypes []string
			for _, x := range []struct {
				in  string
				out any
			}{{tt.body, &wantRows}, {tt.fields, &wantFields}, {tt.types, &wantTypes}} {
				if err := json.Unmarshal([]byte(x.in), x.out); err != nil {
					t.Fatalf("test data %s: %v", x.in, err)
				}
			}
			h := func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.Header().Set("X-SODA2-Fields", tt.fields)
				w.Header().Set("X-SODA2-Types", tt.types)
				w.Write([]byte(tt.body))
			}
			c, _, _ := newTestClient(t, http.HandlerFunc(h), Options{})
			res, err := c.Query(t.Context(), "2asz-g9qq", "SELECT *")
			if err != nil {
				t.Fatalf("Query: %v", err)
			}
			if diff := cmp.Diff(wantFields, res.Fields); diff != "" {
				t.Errorf("Fields (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantTypes, res.Types); diff != "" {
				t.Errorf("Types (-want +got):\n%s", diff)
			}
			if len(wantRows) == 0 {
				wantRows = []map[string]any{}
			}
			got := make([]map[string]any, len(res.Rows))
			copy(got, res.Rows)
			if diff := cmp.Diff(wantRows, got); diff != "" {
				t.Errorf("Rows (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQueryRequest checks the request: one $query parameter holding the
// SoQL (LIMIT/OFFSET inside), the path, and the headers.
func TestQueryRequest(t *testing.T) {
	t.Parallel()
	tests := []struct{ id, soql string }{
		{"rqzj-sfat", "SELECT applicant, status WHERE status = 'APPROVED' ORDER BY :id LIMIT 50 OFFSET 100"},
		{"wg3w-h783", "SELECT count(*) WHERE incident_category = 'Larceny Theft' |> SELECT count(*)"},
		{"yitu-d5am", `SELECT * WHERE title like '%25 & ? # + é%' LIMIT 1`},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			var got *http.Request
			h := func(w http.ResponseWriter, r *http.Request) {
				got = r.Clone(r.Context())
				w.Write([]byte("[]"))
			}
			c, _, _ := newTestClient(t, http.HandlerFunc(h), Options{UserAgent: "ua-test/1"})
			if _, err := c.Query(t.Context(), tt.id, tt.soql); err != nil {
				t.Fatal(err)
			}
			if got.URL.Path != "/resource/"+tt.id+".json" {
				t.Errorf("path = %q", got.URL.Path)
			}
			q := got.URL.Query()
			if len(q) != 1 || len(q["$query"]) != 1 || q.Get("$query") != tt.soql {
				t.Errorf("query parameters = %v; want exactly $query=%q", q, tt.soql)
			}
			if got.Header.Get("Accept") != "application/json" || got.Header.Get("User-Agent") != "ua-test/1" {
				t.Errorf("headers = %v", got.Header)
			}
			if _, ok := got.Header["X-App-Token"]; ok {
				t.Errorf("X-App-Token sent without a token")
			}
		})
	}
}

// TestQueryStreamFixture streams the whole rqzj-sfat fixture (487 rows) and
// compares each row, raw and decoded, with the file.
func TestQueryStreamFixture(t *testing.T) {
	t.Parallel()
	body := readFile(t, fixtures.Path(t, "datasets", "rqzj-sfat__mobile-food-facility-permit__2022-03.json"))
	var want []json.RawMessage
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatal(err)
	}
	h := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-SODA2-Fields", `["objectid","applicant"]`)
		w.Header().Set("X-SODA2-Types", `["number","text"]`)
		w.Write(body)
	}
	c, _, _ := newTestClient(t, http.HandlerFunc(h), Options{})
	s, err := c.QueryStream(t.Context(), "rqzj-sfat", "SELECT *")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if diff := cmp.Diff([]string{"objectid", "applicant"}, s.Fields); diff != "" {
		t.Errorf("Fields before the first row (-want +got):\n%s", diff)
	}
	n := 0
	for i := 0; ; i++ {
		var raw json.RawMessage
		var row Row
		if i%2 == 0 {
			raw, err = s.NextRaw()
		} else {
			row, err = s.Next()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		var wantRow, gotRow map[string]any
		json.Unmarshal(want[i], &wantRow)
		if raw != nil {
			if err := json.Unmarshal(raw, &gotRow); err != nil {
				t.Fatalf("row %d raw: %v", i, err)
			}
		} else {
			gotRow = row
		}
		if diff := cmp.Diff(wantRow, gotRow); diff != "" {
			t.Fatalf("row %d (-want +got):\n%s", i, diff)
		}
		n++
	}
	if n != len(want) {
		t.Errorf("streamed %d rows; want %d", n, len(want))
	}
	if _, err := s.Next(); err != io.EOF {
		t.Errorf("Next after the end = %v; want io.EOF", err)
	}
	t.Logf("rqzj-sfat streamed row by row: %d rows", n)
}

// TestQueryStreamIsIncremental: the first row is returned while the server
// still holds back the rest of the body.
func TestQueryStreamIsIncremental(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	h := func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"a":"1"},`))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Write([]byte(`{"a":"2"}]`))
	}
	c, _, _ := newTestClient(t, http.HandlerFunc(h), Options{})
	s, err := c.QueryStream(t.Context(), "abcd-1234", "SELECT a")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := make(chan Row, 1)
	go func() {
		row, _ := s.Next()
		got <- row
	}()
	select {
	case row := <-got:
		if row["a"] != "1" {
			t.Errorf("first row = %v", row)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("the first row did not arrive before the rest of the body was sent")
	}
	close(release)
	var rows []Row
	for row, err := range s.All() {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	if len(rows) != 1 || rows[0]["a"] != "2" {
		t.Errorf("rest = %v; want [{a:2}]", rows)
	}
}

// TestQueryStreamCut: a body cut off mid-stream is a truncated_response error
// from Next, after the rows that did arrive.
func TestQueryStreamCut(t *testing.T) {
	t.Parallel()
	h := func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"a":"1"},{"a":"2"},{"a":`))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drop the connection
	}
	c, _, _ := newTestClient(t, http.HandlerFunc(h), Options{})
	s, err := c.QueryStream(t.Context(), "abcd-1234", "SELECT a")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	for _, err = range s.All() {
		if err != nil {
			break
		}
		n++
	}
	var api *APIError
	if !errors.As(err, &api) || api.Code != "truncated_response" {
		t.Fatalf("error = %#v; want truncated_response", err)
	}
	if n != 2 {
		t.Errorf("rows before the cut = %d; want 2", n)
	}
	if _, again := s.Next(); again != err {
		t.Errorf("Next after the error = %v; want the same error", again)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestBadInputMakesNoRequest(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	c, _, _ := newTestClient(t, scripted([]step{{status: 200}}, &n), Options{})
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"empty id", func() error { _, err := c.Query(t.Context(), "", "SELECT 1"); return err }, "datasetID is empty"},
		{"id with a slash", func() error { _, err := c.Query(t.Context(), "../views/x", "SELECT 1"); return err }, `datasetID "../views/x" has the character '/'`},
		{"id with a query", func() error { _, err := c.Schema(t.Context(), "abcd-1234?x=1"); return err }, `character '?'`},
		{"empty soql", func() error { _, err := c.QueryStream(t.Context(), "abcd-1234", "  "); return err }, "soql is empty"},
		{"empty search", func() error { _, err := c.Search(t.Context(), " ", 5); return err }, "query is empty"},
		{"negative limit", func() error { _, err := c.List(t.Context(), "", -1); return err }, "limit is -1"},
	}
	for _, tt := range tests {
		err := tt.call()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error = %v; want it to contain %q", tt.name, err, tt.want)
		}
	}
	if n.Load() != 0 {
		t.Errorf("bad input made %d requests; want 0", n.Load())
	}
}
