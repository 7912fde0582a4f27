package socrata

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
)

// exchange is one recorded HTTP exchange with a real Socrata server.
type exchange struct {
	URL     string            `json:"url_decoded"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body_json"`
}

// TestQueryRecordedExchanges replays every recorded Resource API answer that
// carries X-SODA2-Fields (real headers, real bodies) and checks Query returns
// the same rows, fields and types.
func TestQueryRecordedExchanges(t *testing.T) {
	t.Parallel()
	var all []exchange
	readJSON(t, fixtures.Path(t, "shape-refs", "socratadata__recorded-http-exchanges__soda-demo-chicago__2025-08.json"), &all)
	var replayed, rows int
	for i, ex := range all {
		if ex.Headers["X-SODA2-Fields"] == "" || ex.Status != 200 {
			continue
		}
		var wantRows []map[string]any
		if err := json.Unmarshal(ex.Body, &wantRows); err != nil {
			continue // not a row array (a SODA3 document)
		}
		var wantFields, wantTypes []string
		if err := json.Unmarshal([]byte(ex.Headers["X-SODA2-Fields"]), &wantFields); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(ex.Headers["X-SODA2-Types"]), &wantTypes); err != nil {
			t.Fatal(err)
		}
		replayed++
		rows += len(wantRows)
		t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
			t.Parallel()
			h := func(w http.ResponseWriter, r *http.Request) {
				for k, v := range ex.Headers {
					switch strings.ToLower(k) {
					case "content-encoding", "transfer-encoding", "content-length", "connection":
						continue
					}
					w.Header().Set(k, v)
				}
				w.Write(ex.Body)
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
	if replayed < 50 {
		t.Errorf("replayed %d exchanges; want the 50+ with X-SODA2-Fields", replayed)
	}
	t.Logf("recorded exchanges replayed through Query: %d (%d rows)", replayed, rows)
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
