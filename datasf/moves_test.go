package datasf_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// A portal that moves while the server runs: every read after a tool's
// first one (the stored result's pages and export, the null group's
// count, the hints) goes through the registry, which follows the move
// once, logs it once and sends the rest to the new host. The fake plays
// the old host as the evidence describes a moved portal (evidence
// moves-301: a 301 to the same path on the new host); the product has
// an app token for both hosts, so its queries are SODA3 POSTs, which
// the old host answers with that 301.
const (
	movedFrom = "data.oldcity.example"
	movedTo   = "data.newcity.example"
	movedID   = "abcd-1234"
	// movedRows are the dataset's rows on both hosts, the first
	// movedNulls of them without a status (and all in ward 1).
	movedRows  = 30
	movedNulls = 10
)

// movesEnv is the product over a fake that serves movedID on both hosts,
// not moved yet.
type movesEnv struct {
	fake *socratatest.Server
	env  *datasftest.Env
	logs *socratatest.LogBuffer
	wire *moveWire
}

// moveWire is the product's transport: it records the hosts it sends to,
// and moves the portal (fake.SetMoved) just before the first request
// whose URL or body holds trigger, so that the move is answered to that
// request and to every later one.
type moveWire struct {
	next    http.RoundTripper
	fake    *socratatest.Server
	mu      sync.Mutex
	trigger string
	moved   bool
	movedAt int         // the requests sent before the move
	sent    [][2]string // each request's host and path
	// noStats leaves cachedContents out of Views documents, as a portal
	// that has not computed its column statistics yet does: get_schema
	// then asks for them with queries.
	noStats bool
}

func (w *moveWire) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	w.mu.Lock()
	if !w.moved && w.trigger != "" && strings.Contains(req.URL.String()+string(body), w.trigger) {
		w.moved, w.movedAt = true, len(w.sent)
		if err := w.fake.SetMoved(movedFrom, movedTo); err != nil {
			w.mu.Unlock()
			return nil, err
		}
	}
	w.sent = append(w.sent, [2]string{req.Host, req.URL.Path})
	noStats := w.noStats
	w.mu.Unlock()
	resp, err := w.next.RoundTrip(req)
	if err != nil || !noStats || resp.StatusCode != http.StatusOK || !strings.HasPrefix(req.URL.Path, "/api/views/") {
		return resp, err
	}
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var view map[string]any
	if err := json.Unmarshal(body, &view); err != nil {
		return nil, err
	}
	cols, _ := view["columns"].([]any)
	for _, c := range cols {
		if m, ok := c.(map[string]any); ok {
			delete(m, "cachedContents")
		}
	}
	if body, err = json.Marshal(view); err != nil {
		return nil, err
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// moveOn sets what request moves the portal ("" moves it now).
func (w *moveWire) moveOn(t *testing.T, trigger string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if trigger == "" {
		w.moved, w.movedAt = true, len(w.sent)
		if err := w.fake.SetMoved(movedFrom, movedTo); err != nil {
			t.Fatal(err)
		}
		return
	}
	w.trigger = trigger
}

// sinceMove returns how many requests whose path starts with prefix went
// to each host since the move.
func (w *moveWire) sinceMove(prefix string) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	by := map[string]int{}
	if w.moved {
		for _, r := range w.sent[w.movedAt:] {
			if strings.HasPrefix(r[1], prefix) {
				by[r[0]]++
			}
		}
	}
	return by
}

func newMovesEnv(t *testing.T) *movesEnv {
	t.Helper()
	fake := socratatest.NewServer(t, socratatest.WithDomain("api.us.socrata.com"))
	for _, d := range []string{movedFrom, movedTo} {
		if err := fake.AddDomain(d); err != nil {
			t.Fatal(err)
		}
		schema := socratatest.Schema{ID: movedID, Name: "311 Cases", Domain: d,
			Columns: []socrata.Column{{Name: "Status", FieldName: "status", DataType: "text"}, {Name: "Ward", FieldName: "ward", DataType: "number"}}}
		if err := fake.AddGenerated(t.Context(), schema, movedRows, func(i int) map[string]any {
			if i < movedNulls {
				return map[string]any{"ward": 1}
			}
			return map[string]any{"status": []string{"Open", "Closed", "Duplicate"}[i%3], "ward": i % 7}
		}); err != nil {
			t.Fatal(err)
		}
	}
	w := &moveWire{next: fake.Client().Transport, fake: fake}
	if w.next == nil {
		w.next = http.DefaultTransport
	}
	logs := &socratatest.LogBuffer{}
	cfg := datasf.Config{
		AppTokens: map[string]string{movedFrom: "old-host-token", movedTo: "new-host-token"},
		LookupIP: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("52.206.140.205")}, nil
		},
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	}
	cfg.Socrata.HTTPClient = &http.Client{Transport: w}
	cfg.Socrata.MaxRetries = -1
	env, err := datasftest.Start(t.Context(), datasftest.Options{PortalURL: fake.URL(), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Close() })
	return &movesEnv{fake: fake, env: env, logs: logs, wire: w}
}

// query calls query_datasf on the old host; the call must succeed.
func (e *movesEnv) query(t *testing.T, soql string) map[string]any {
	t.Helper()
	args := map[string]any{"dataset_id": movedID, "soql": soql, "domain": movedFrom}
	res, err := e.env.Call(t.Context(), "query_datasf", args)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if res.IsError {
		t.Fatalf("query_datasf(%v) = error %s; want success", args, mustJSON(t, res.Content))
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkFollowed checks that the move was logged once and that, since the
// move, of the requests whose path starts with prefix, one to most went
// to the old host (those answered with the move: requests sent at once
// each learn it) and the rest to the new one.
func (e *movesEnv) checkFollowed(t *testing.T, prefix string, most int) {
	t.Helper()
	by := e.wire.sinceMove(prefix)
	if by[movedFrom] < 1 || by[movedFrom] > most || by[movedTo] < by[movedFrom] {
		t.Errorf("requests since the move: %v; want 1 (at most %d) to %s, answered with the move, the rest to %s", by, most, movedFrom, movedTo)
	}
	if n := strings.Count(e.logs.String(), "domain="+movedFrom+" moved_to="+movedTo); n != 1 {
		t.Errorf("the move was logged %d times; want once:\n%s", n, e.logs.String())
	}
}

const movedLine = movedFrom + " has moved to " + movedTo + "; this ran there."

// A result stored while the portal was at its old host: once the portal
// has moved, its pages and its export still come, from the new host.
func TestStoredResultFollowsMove(t *testing.T) {
	t.Parallel()
	e := newMovesEnv(t)
	out := e.query(t, "SELECT status, ward")
	url := out["resource"].(map[string]any)["url"].(string)
	e.wire.moveOn(t, "")

	var p struct {
		Data       []map[string]any `json:"data"`
		TotalCount int64            `json:"total_count"`
	}
	getJSON(t, url+"?offset=20&limit=50", &p)
	if len(p.Data) != movedRows-20 || p.TotalCount != movedRows {
		t.Errorf("page 20+ of the stored result after the move: %d rows of %d; want %d of %d", len(p.Data), p.TotalCount, movedRows-20, movedRows)
	}
	rows, err := csv.NewReader(strings.NewReader(getText(t, url+"/export?format=csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows)-1 != movedRows {
		t.Errorf("export of the stored result after the move: %d rows; want %d", len(rows)-1, movedRows)
	}
	e.checkFollowed(t, "", 1)
}

// The portal answers the move to the null group's count (the schema, the
// count and the sample were read before it moved): the count is asked
// again on the new host, and the answer says the portal moved.
func TestNullGroupCountFollowsMove(t *testing.T) {
	t.Parallel()
	e := newMovesEnv(t)
	e.wire.moveOn(t, "IS NULL")
	out := e.query(t, "SELECT status, ward, count(*) AS n GROUP BY status, ward ORDER BY n DESC, ward")
	summary, _ := out["summary"].(string)
	if want := "The top group is null: 10 rows have no status."; !strings.Contains(summary, want) {
		t.Errorf("summary %q; want %q", summary, want)
	}
	if !strings.Contains(summary, movedLine) {
		t.Errorf("summary %q; want it to say %q", summary, movedLine)
	}
	e.checkFollowed(t, "", 1)
}

// The portal answers the move to the hints' requests (the query matched
// nothing before it moved): the hints come from the new host, and the
// answer says the portal moved.
func TestHintsFollowMove(t *testing.T) {
	t.Parallel()
	e := newMovesEnv(t)
	e.wire.moveOn(t, "hint_value")
	out := e.query(t, "SELECT status, ward WHERE status = 'open'")
	hints, _ := json.Marshal(out["hints"])
	if !strings.Contains(string(hints), `'Open'`) {
		t.Errorf("hints %s; want the value 'Open' that matches 'open' ignoring case", hints)
	}
	if summary, _ := out["summary"].(string); !strings.Contains(summary, movedLine) {
		t.Errorf("summary %q; want it to say %q", summary, movedLine)
	}
	e.checkFollowed(t, "", 1)
}

// The portal answers the move to get_schema's statistics queries (its
// Views document, read before it moved, has no statistics): they are
// asked again on the new host, and the answer says the portal moved.
func TestSchemaStatsFollowMove(t *testing.T) {
	t.Parallel()
	e := newMovesEnv(t)
	e.wire.mu.Lock()
	e.wire.noStats = true
	e.wire.mu.Unlock()
	e.wire.moveOn(t, "AS c0")
	args := map[string]any{"dataset_id": movedID, "domain": movedFrom}
	res, err := e.env.Call(t.Context(), "get_schema", args)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("get_schema(%v) = error %s; want success", args, mustJSON(t, res.Content))
	}
	var out struct {
		Summary string `json:"summary"`
		Domain  string `json:"domain"`
		Columns []struct {
			FieldName string   `json:"fieldName"`
			Values    []string `json:"values"`
		} `json:"columns"`
	}
	if err := json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), &out); err != nil {
		t.Fatal(err)
	}
	var status []string
	for _, c := range out.Columns {
		if c.FieldName == "status" {
			status = c.Values
		}
	}
	if len(status) != 3 || !slices.Contains(status, "Open") {
		t.Errorf("get_schema status values %q; want Open, Closed and Duplicate, from the new host's statistics", status)
	}
	if !strings.Contains(out.Summary, movedFrom+" has moved to "+movedTo) || out.Domain != movedTo {
		t.Errorf("get_schema summary %q, domain %q; want the move said and domain %s", out.Summary, out.Domain, movedTo)
	}
	e.checkFollowed(t, "", 1)
}

// The portal answers the move to the reads of search_datasf's row counts
// (its catalog, from the Discovery API, found the hits before it moved):
// the counts come from the new host, and the answer says the portal
// moved.
func TestSearchRowCountsFollowMove(t *testing.T) {
	t.Parallel()
	e := newMovesEnv(t)
	e.wire.moveOn(t, "/api/views/")
	args := map[string]any{"query": "311 cases", "domain": movedFrom}
	res, err := e.env.Call(t.Context(), "search_datasf", args)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("search_datasf(%v) = error %s; want success", args, mustJSON(t, res.Content))
	}
	var out struct {
		Summary string `json:"summary"`
		Results []struct {
			ID       string `json:"id"`
			RowCount *int64 `json:"row_count"`
			Domain   string `json:"domain"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 1 || out.Results[0].RowCount == nil || *out.Results[0].RowCount != movedRows {
		t.Fatalf("search_datasf results %s; want %s with its row count, %d", mustJSON(t, out.Results), movedID, movedRows)
	}
	if !strings.Contains(out.Summary, movedFrom+" has moved to "+movedTo) || out.Results[0].Domain != movedTo {
		t.Errorf("search_datasf summary %q, hit domain %q; want the move said and domain %s", out.Summary, out.Results[0].Domain, movedTo)
	}
	// A schema's row count is asked beside its Views document, so it
	// reaches the old host before or after the move: only the reads of
	// the Views API (the first of which moves the portal) are counted.
	e.checkFollowed(t, "/api/views/", 1)
}

// The portal moves after query_datasf read its schema (kept in the
// cache, so the next call reads nothing before its count and sample):
// the count and the sample follow the move, and the answer says so.
func TestQueryCountAndSampleFollowMove(t *testing.T) {
	t.Parallel()
	e := newMovesEnv(t)
	e.query(t, "SELECT count(*) AS n")
	e.wire.moveOn(t, "")
	out := e.query(t, "SELECT status, ward WHERE ward = 1")
	md, _ := out["metadata"].(map[string]any)
	if n, _ := md["total_count"].(float64); n != movedNulls+3 {
		t.Errorf("total_count %v after the move; want %d", md["total_count"], movedNulls+3)
	}
	if summary, _ := out["summary"].(string); !strings.Contains(summary, movedLine) {
		t.Errorf("summary %q; want it to say %q", summary, movedLine)
	}
	// The count and the sample are sent at once: each learns the move.
	e.checkFollowed(t, "", 2)
}
