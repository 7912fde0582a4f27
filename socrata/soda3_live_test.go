package socrata_test

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// SODA3 as the live portals answer it (issue 52): pages of at most 5,000
// rows, a message object served with 200, display-name keys, missing
// fields; and SODA 2.1 answering that it is gone.

// soda3Requests counts the SODA3 requests in the server's log.
func soda3Requests(srv *socratatest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Endpoint == localportal.EndpointQuery {
			n++
		}
	}
	return n
}

// TestSODA3LivePages checks that a query with a LIMIT larger than a SODA3
// page is read as several pages, each within the portal's largest page
// (the fake answers a larger one HTTP 200 with a message object, as the
// live portal does), and gives the rows SODA 2.1 gives; and that the page
// size is configurable.
func TestSODA3LivePages(t *testing.T) {
	t.Parallel()
	srv := soda3Fake(t, 12_345)
	v2 := srv.SocrataClient(socrata.Options{})
	const q = "SELECT n, kind ORDER BY :id LIMIT 12000 OFFSET 100"
	want, err := v2.Query(t.Context(), "sod3-0002", q)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Rows) != 12000 {
		t.Fatalf("SODA 2.1 gave %d rows; want 12000", len(want.Rows))
	}
	for _, tt := range []struct {
		pageSize int64
		requests int
	}{{0, 3}, {1000, 12}, {4999, 3}} {
		before := soda3Requests(srv)
		c := srv.SocrataClient(socrata.Options{AppToken: "tok", SODA3PageSize: tt.pageSize})
		got, err := c.Query(t.Context(), "sod3-0002", q)
		if err != nil {
			t.Fatalf("SODA3PageSize %d: %v", tt.pageSize, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("SODA3PageSize %d: result differs from SODA 2.1's (-2.1 +3):\n%s", tt.pageSize, diff)
		}
		if n := soda3Requests(srv) - before; n != tt.requests {
			t.Errorf("SODA3PageSize %d: %d SODA3 requests; want %d", tt.pageSize, n, tt.requests)
		}
	}
}

// TestSODA3MessageObject checks that a 200 whose body is a message object,
// not rows, is an error in the portal's words, never an empty result.
func TestSODA3MessageObject(t *testing.T) {
	t.Parallel()
	srv := soda3Fake(t, 300)
	if err := srv.SetSODA3Live(socratatest.SODA3Live{MaxPageSize: 100}); err != nil {
		t.Fatal(err)
	}
	c := srv.SocrataClient(socrata.Options{AppToken: "tok", SODA3PageSize: 200, MaxRetries: -1})
	res, err := c.Query(t.Context(), "sod3-0002", "SELECT n ORDER BY :id LIMIT 150")
	var api *socrata.APIError
	if !errors.As(err, &api) {
		t.Fatalf("Query = %v, %v; want an *APIError", res, err)
	}
	if api.StatusCode != http.StatusOK || api.Message != "Page size 150 is too large; the largest page is 100 rows" {
		t.Errorf("err = %+v; want HTTP 200 with the portal's message", api)
	}
}

// TestSODA3DisplayNameKeys checks that rows keyed by display names
// (POST_ID) come back keyed by field names, as SODA 2.1 keys them, with
// X-SODA2-Fields mapped too; and that fields missing from the rows are
// null (absent), as SODA 2.1 encodes null.
func TestSODA3DisplayNameKeys(t *testing.T) {
	t.Parallel()
	srv := socratatest.NewServer(t)
	schema := socratatest.Schema{ID: "post-0001", Name: "Posts", Columns: []socrata.Column{
		{Name: "POST_ID", FieldName: "post_id", DataType: "text"},
		{Name: "Street Name", FieldName: "street_name", DataType: "text"},
		{Name: "count", FieldName: "count", DataType: "number"},
	}}
	if err := srv.AddGenerated(t.Context(), schema, 7000, func(i int) map[string]any {
		return map[string]any{"post_id": "P" + strings.Repeat("0", i%3) + string(rune('a'+i%26)), "street_name": []string{"MARKET ST", "MISSION ST"}[i%2], "count": i}
	}); err != nil {
		t.Fatal(err)
	}
	if err := srv.SetSODA3Live(socratatest.SODA3Live{DisplayNameKeys: []string{"post-0001"}}); err != nil {
		t.Fatal(err)
	}
	v2 := srv.SocrataClient(socrata.Options{})
	v3 := srv.SocrataClient(socrata.Options{AppToken: "tok"})
	for _, q := range []string{
		"SELECT * ORDER BY :id LIMIT 6000",
		"SELECT street_name, count(*) AS n GROUP BY street_name ORDER BY street_name",
	} {
		want, err := v2.Query(t.Context(), "post-0001", q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := v3.Query(t.Context(), "post-0001", q)
		if err != nil {
			t.Fatalf("SODA3 %q: %v", q, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q: SODA3 result differs from SODA 2.1's (-2.1 +3):\n%.2000s", q, diff)
		}
	}

	if err := srv.SetSODA3Live(socratatest.SODA3Live{Missing: map[string][]string{"post-0001": {"street_name"}}}); err != nil {
		t.Fatal(err)
	}
	got, err := v3.Query(t.Context(), "post-0001", "SELECT post_id, street_name ORDER BY :id LIMIT 3")
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(got.Fields, []string{"post_id", "street_name"}) || len(got.Rows) != 3 {
		t.Fatalf("fields %v, %d rows; want post_id, street_name and 3 rows", got.Fields, len(got.Rows))
	}
	for _, r := range got.Rows {
		if v, ok := r["street_name"]; ok {
			t.Errorf("row %v has street_name %v; want it missing (null)", r, v)
		}
	}
}

// TestSODA2Gone checks a portal whose SODA 2.1 answers 410: a client
// without a token gets an error that says a token is needed and where to
// get one; a client with one that had fallen back to SODA 2.1 switches to
// SODA3, says so once, and answers.
func TestSODA2Gone(t *testing.T) {
	t.Parallel()
	srv := soda3Fake(t, 100)
	anon := srv.SocrataClient(socrata.Options{})
	if _, err := anon.Query(t.Context(), "sod3-0002", "SELECT n LIMIT 5"); err != nil {
		t.Fatal(err)
	}
	var log socratatest.LogBuffer
	tok := srv.SocrataClient(socrata.Options{AppToken: "tok", Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err := srv.SetSODA3(false); err != nil {
		t.Fatal(err)
	}
	if _, err := tok.Query(t.Context(), "sod3-0002", "SELECT n LIMIT 5"); err != nil || tok.UsesSODA3() {
		t.Fatalf("Query on a portal without SODA3 = %v, UsesSODA3 %v; want SODA 2.1's answer", err, tok.UsesSODA3())
	}
	if err := srv.SetSODA3(true); err != nil {
		t.Fatal(err)
	}
	if err := srv.SetSODA2Gone(true); err != nil {
		t.Fatal(err)
	}

	_, err := anon.Query(t.Context(), "sod3-0002", "SELECT n LIMIT 5")
	var need *socrata.TokenRequiredError
	if !errors.As(err, &need) {
		t.Fatalf("tokenless Query after SODA 2.1 went = %v; want a *TokenRequiredError", err)
	}
	for _, part := range []string{"app token", "https://" + srv.Domain() + "/profile/edit/developer_settings", "410", "deprecated"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}

	for i := range 3 {
		res, err := tok.Query(t.Context(), "sod3-0002", "SELECT n ORDER BY :id LIMIT 5")
		if err != nil || len(res.Rows) != 5 {
			t.Fatalf("query %d with a token after SODA 2.1 went = %v; want 5 rows from SODA3", i, err)
		}
	}
	if !tok.UsesSODA3() {
		t.Error("UsesSODA3() = false after SODA 2.1 went; want true")
	}
	if n := strings.Count(log.String(), "SODA 2.1 is gone"); n != 1 {
		t.Errorf("the switch to SODA3 was logged %d times; want once. Log:\n%s", n, log.String())
	}
}
