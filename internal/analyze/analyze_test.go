package analyze_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo"
	"github.com/datasf-mcp/datasf-mcp/dualresp/spill"
	"github.com/datasf-mcp/datasf-mcp/internal/analyze"
)

var districtNames = []string{"BAYVIEW", "CENTRAL", "INGLESIDE", "MISSION", "NORTHERN", "PARK", "RICHMOND", "SOUTHERN", "TARAVAL", "TENDERLOIN"}

// incident i, in the string-encoded style of Socrata.
func incident(i int) map[string]any {
	return map[string]any{
		"incident_id": fmt.Sprint(i),
		"district":    districtNames[(i*7)%len(districtNames)],
		"amount":      fmt.Sprintf("%d.25", i%13),
		"zip":         fmt.Sprintf("%05d", 94000+i%50), // leading digits kept as numbers only when plain
		"code":        fmt.Sprintf("0%d", i%9),         // leading zero: stays text
		"resolved":    i%3 == 0,
		"tags":        []any{"t", i % 4},
	}
}

func district(i int) map[string]any {
	return map[string]any{"name": districtNames[i], "population": fmt.Sprint(10_000 + i*1000)}
}

// genExecutor serves the generated "incidents" and "districts" results
// (Query.Text), with Params["n"] rows.
type genExecutor struct{ pages atomic.Int64 }

func (g *genExecutor) rows(q dualresp.Query) ([]map[string]any, error) {
	var n int
	fmt.Sscan(q.Params["n"], &n)
	out := make([]map[string]any, n)
	for i := range out {
		switch q.Text {
		case "incidents":
			out[i] = incident(i)
		case "districts":
			out[i] = district(i)
		default:
			return nil, fmt.Errorf("unknown generated result %q", q.Text)
		}
	}
	return out, nil
}

func (g *genExecutor) Prepare(_ context.Context, q dualresp.Query) (dualresp.Plan, error) {
	return g.plan(q)
}

func (g *genExecutor) plan(q dualresp.Query) (*genPlan, error) {
	rows, err := g.rows(q)
	if err != nil {
		return nil, err
	}
	return &genPlan{g: g, rows: rows}, nil
}

// genPlan is a genExecutor's prepared query: its rows.
type genPlan struct {
	g    *genExecutor
	rows []map[string]any
}

func (p *genPlan) Count(context.Context) (int64, error) { return int64(len(p.rows)), nil }

func (p *genPlan) Page(ctx context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	p.g.pages.Add(1)
	var out []json.RawMessage
	for i := req.Offset; i < min(req.Offset+req.Limit, int64(len(p.rows))); i++ {
		b, _ := json.Marshal(p.rows[i])
		out = append(out, b)
	}
	return dualresp.PageResult{Rows: out}, ctx.Err()
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type env struct {
	results   *dualresp.Server
	blobs     *spill.Store
	exec      *genExecutor
	clock     *clock
	incidents string // resource ids
	districts string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{exec: &genExecutor{}, blobs: spill.NewStore(spill.StoreOptions{}), clock: &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}}
	srv, err := dualresp.New(dualresp.Options{BaseURL: "http://127.0.0.1:1", CleanupInterval: -1, Now: e.clock.Now,
		Executors: map[string]dualresp.Executor{"gen": e.exec, spill.Kind: e.blobs}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	e.results = srv
	e.incidents = e.create(t, "incidents", 5000, []string{"incident_id", "district", "amount", "zip", "code", "resolved", "tags"})
	e.districts = e.create(t, "districts", 10, []string{"name", "population"})
	return e
}

func (e *env) create(t *testing.T, text string, n int, cols []string) string {
	t.Helper()
	var cs []dualresp.Column
	for _, c := range cols {
		cs = append(cs, dualresp.Column{Name: c})
	}
	resp, err := e.results.CreateResponse(t.Context(), dualresp.Spec{
		Name: text, Query: dualresp.Query{Kind: "gen", Text: text, Params: map[string]string{"n": fmt.Sprint(n)}}, Columns: cs,
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp.ID()
}

func TestJoinAggregates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := analyze.New(e.results, analyze.Options{})
	var calls [][2]int64
	res, err := a.Run(t.Context(), analyze.Request{
		SQL: `-- incidents per district with population
			SELECT d.name AS district, d.population, count(*) AS n, sum(i.amount) AS total,
			       round(1000.0 * count(*) / d.population, 3) AS per_1000
			FROM incidents i JOIN districts d ON i.district = d.name
			WHERE i.resolved = 1
			GROUP BY d.name ORDER BY d.name;`,
		Results: map[string]string{"incidents": "resource://" + e.incidents, "districts": e.districts},
	}, func(done, total int64, msg string) { calls = append(calls, [2]int64{done, total}) })
	if err != nil {
		t.Fatal(err)
	}
	// The same aggregates, computed here.
	type agg struct {
		n     int64
		total float64
	}
	want := map[string]*agg{}
	for i := range 5000 {
		if i%3 != 0 {
			continue
		}
		d := districtNames[(i*7)%10]
		if want[d] == nil {
			want[d] = &agg{}
		}
		want[d].n++
		want[d].total += float64(i%13) + 0.25
	}
	var wantRows []map[string]any
	names := append([]string(nil), districtNames...)
	sort.Strings(names)
	for _, d := range names {
		pop := int64(10_000 + indexOf(districtNames, d)*1000)
		wantRows = append(wantRows, map[string]any{
			"district": d, "population": pop, "n": want[d].n, "total": want[d].total,
			"per_1000": float64(int64(1000.0*float64(want[d].n)/float64(pop)*1000+0.5)) / 1000,
		})
	}
	if diff := cmp.Diff(wantRows, res.Rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"district", "population", "n", "total", "per_1000"}, res.Columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if res.RowCount != 10 || res.Truncated {
		t.Errorf("RowCount %d, Truncated %v; want 10, false", res.RowCount, res.Truncated)
	}
	wantTables := []analyze.TableInfo{
		{Name: "districts", ResourceID: e.districts, Rows: 10, Columns: []string{"name", "population"}},
		{Name: "incidents", ResourceID: e.incidents, Rows: 5000, Columns: []string{"incident_id", "district", "amount", "zip", "code", "resolved", "tags"}},
	}
	if diff := cmp.Diff(wantTables, res.Tables); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][2]int64{{10, 5010}, {5010, 5010}}, calls); diff != "" {
		t.Errorf("progress calls (-want +got):\n%s", diff)
	}
	t.Logf("join over 5,000 + 10 rows: %d result rows; first %v", res.RowCount, res.Rows[0])
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

func TestValueTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := analyze.New(e.results, analyze.Options{})
	res, err := a.Run(t.Context(), analyze.Request{
		SQL: `SELECT typeof(incident_id) AS id_t, typeof(amount) AS amount_t, typeof(code) AS code_t, code,
			typeof(resolved) AS resolved_t, resolved, json_extract(tags, '$[1]') AS tag1, typeof(zip) AS zip_t
			FROM incidents WHERE incident_id = 6`,
		Results: map[string]string{"incidents": e.incidents},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{
		"id_t": "integer", "amount_t": "real", "code_t": "text", "code": "06",
		"resolved_t": "integer", "resolved": int64(1), "tag1": int64(2), "zip_t": "integer",
	}}
	if diff := cmp.Diff(want, res.Rows); diff != "" {
		t.Errorf("value types (-want +got):\n%s", diff)
	}
}

func TestRejectsWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := analyze.New(e.results, analyze.Options{})
	before := e.exec.pages.Load() // the samples of CreateResponse
	bad := []string{
		"INSERT INTO districts VALUES ('X', 1)",
		"SELECT 1; DROP TABLE districts",
		"SELECT 1;; SELECT 2",
		"PRAGMA query_only = OFF",
		"ATTACH DATABASE '/tmp/x.db' AS x",
		"WITH x AS (SELECT 1) DELETE FROM districts",
		"WITH x AS (SELECT 1) INSERT INTO districts SELECT * FROM districts",
		"SELECT * FROM districts /* hidden */ ; UPDATE districts SET name = 'x'",
		"REPLACE INTO districts VALUES ('X', 1)",
		"CREATE TABLE y AS SELECT 1",
		"VACUUM",
		"SELECT load_extension('x')",
		"SELECT 'unterminated",
		"/* only a comment */",
		"EXPLAIN SELECT 1",
	}
	for _, q := range bad {
		_, err := a.Run(t.Context(), analyze.Request{SQL: q, Results: map[string]string{"districts": e.districts}}, nil)
		if !errors.Is(err, analyze.ErrNotReadOnly) || !errors.Is(err, analyze.ErrInvalid) {
			t.Errorf("Run(%q) error = %v; want ErrNotReadOnly", q, err)
		}
	}
	if got := e.exec.pages.Load() - before; got != 0 {
		t.Errorf("rejected queries loaded %d pages; want none", got)
	}
	good := []string{
		"SELECT replace(name, 'A', 'a') AS r FROM districts",
		"SELECT name FROM districts WHERE name <> 'DELETE; DROP TABLE x' -- ; DROP",
		`SELECT "name" AS "update" FROM districts;`,
		"WITH big AS (SELECT * FROM districts WHERE population > 15000) SELECT count(*) AS n FROM big",
		"select name from districts where population > 1e4",
	}
	for _, q := range good {
		if _, err := a.Run(t.Context(), analyze.Request{SQL: q, Results: map[string]string{"districts": e.districts}}, nil); err != nil {
			t.Errorf("Run(%q) error = %v; want none", q, err)
		}
	}
}

func TestCheckSQLMessages(t *testing.T) {
	t.Parallel()
	tests := []struct{ sql, want string }{
		{"SELECT 1; DROP TABLE x", "only one statement"},
		{"INSERT INTO t VALUES (1)", "start with SELECT or WITH"},
		{"WITH a AS (SELECT 1) DELETE FROM t", "DELETE is not allowed"},
		{"SELECT * FROM t /* x", "unterminated"},
	}
	for _, tt := range tests {
		err := analyze.CheckSQL(tt.sql)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckSQL(%q) = %v; want an error containing %q", tt.sql, err, tt.want)
		}
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := analyze.New(e.results, analyze.Options{Timeout: 50 * time.Millisecond})
	_, err := a.Run(t.Context(), analyze.Request{
		SQL:     "SELECT count(*) FROM incidents a, incidents b, incidents c",
		Results: map[string]string{"incidents": e.incidents},
	}, nil)
	if !errors.Is(err, analyze.ErrTimeout) {
		t.Errorf("Run(cross join) error = %v; want ErrTimeout", err)
	}
}

func TestCallerCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := analyze.New(e.results, analyze.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	_, err := a.Run(ctx, analyze.Request{
		SQL:     "SELECT count(*) FROM incidents a, incidents b, incidents c",
		Results: map[string]string{"incidents": e.incidents},
	}, func(done, total int64, _ string) {
		if done == total {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run after cancel error = %v; want context.Canceled", err)
	}
}

func TestRowLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		sql       string
		max       int
		wantRows  int
		truncated bool
	}{
		{"SELECT * FROM incidents", 100, 100, true},
		{"SELECT * FROM districts", 10, 10, false},
		{"SELECT * FROM districts", 9, 9, true},
		{"SELECT * FROM incidents", 0, analyze.DefaultMaxResultRows, true},
		{"SELECT * FROM districts WHERE 0", 5, 0, false},
	}
	for _, tt := range tests {
		a := analyze.New(e.results, analyze.Options{MaxResultRows: tt.max})
		results := map[string]string{"districts": e.districts}
		if strings.Contains(tt.sql, "incidents") {
			results = map[string]string{"incidents": e.incidents}
		}
		res, err := a.Run(t.Context(), analyze.Request{SQL: tt.sql, Results: results}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.RowCount != tt.wantRows || len(res.Rows) != tt.wantRows || res.Truncated != tt.truncated {
			t.Errorf("Run(%q, max %d) = %d rows, truncated %v; want %d, %v", tt.sql, tt.max, res.RowCount, res.Truncated, tt.wantRows, tt.truncated)
		}
	}
}

func TestProgressIsMonotonic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := analyze.New(e.results, analyze.Options{PageSize: 700})
	var dones []int64
	var totals []int64
	_, err := a.Run(t.Context(), analyze.Request{SQL: "SELECT count(*) AS n FROM incidents",
		Results: map[string]string{"incidents": e.incidents, "districts": e.districts}},
		func(done, total int64, msg string) {
			dones = append(dones, done)
			totals = append(totals, total)
		})
	if err != nil {
		t.Fatal(err)
	}
	// districts: one page of 10; incidents: ceil(5000/700) = 8 pages.
	if len(dones) != 9 {
		t.Errorf("%d progress calls; want 9: %v", len(dones), dones)
	}
	for i := range dones {
		if totals[i] != 5010 {
			t.Errorf("call %d total = %d; want 5010", i, totals[i])
		}
		if i > 0 && dones[i] <= dones[i-1] {
			t.Errorf("progress not increasing: %v", dones)
		}
	}
	if dones[len(dones)-1] != 5010 {
		t.Errorf("last done = %d; want 5010", dones[len(dones)-1])
	}
	t.Logf("progress with pages of 700: %v", dones)
}

func TestResourceErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	expired := e.create(t, "districts", 10, []string{"name"})
	// Expire every record, then create fresh ones.
	e.clock.Advance(dualresp.DefaultExpiration + time.Second)
	fresh := e.create(t, "districts", 10, []string{"name", "population"})
	a := analyze.New(e.results, analyze.Options{})
	tests := []struct {
		name    string
		results map[string]string
		want    error
		text    string
	}{
		{"unknown id", map[string]string{"t": strings.Repeat("ab", 16)}, dualresp.ErrNotFound, "table t"},
		{"expired id", map[string]string{"t": expired}, dualresp.ErrExpired, "expired"},
		{"bad table name", map[string]string{"1t": fresh}, analyze.ErrInvalid, `bad table name "1t"`},
		{"table name with space", map[string]string{"a b": fresh}, analyze.ErrInvalid, "bad table name"},
		{"reserved table name", map[string]string{"sqlite_x": fresh}, analyze.ErrInvalid, "reserved"},
		{"case twins", map[string]string{"T": fresh, "t": fresh}, analyze.ErrInvalid, "differ only in case"},
		{"bad ref", map[string]string{"t": "rqzj-sfat"}, analyze.ErrInvalid, "not a resource id"},
		{"no results", map[string]string{}, analyze.ErrInvalid, "results is empty"},
	}
	for _, tt := range tests {
		_, err := a.Run(t.Context(), analyze.Request{SQL: "SELECT 1", Results: tt.results}, nil)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%s: error = %v; want %v containing %q", tt.name, err, tt.want, tt.text)
		}
	}
	// The three reference forms all work.
	for _, ref := range []string{fresh, "resource://" + fresh, "http://127.0.0.1:1/resources/" + fresh, "http://127.0.0.1:1/resources/" + fresh + "/export?format=csv"} {
		res, err := a.Run(t.Context(), analyze.Request{SQL: "SELECT count(*) AS n FROM d", Results: map[string]string{"d": ref}}, nil)
		if err != nil || res.Rows[0]["n"] != int64(10) {
			t.Errorf("ref %q: %v, %v; want n = 10", ref, res, err)
		}
	}
	var sqlErr *analyze.SQLError
	_, err := a.Run(t.Context(), analyze.Request{SQL: "SELECT nosuch FROM d", Results: map[string]string{"d": fresh}}, nil)
	if !errors.As(err, &sqlErr) || !strings.Contains(err.Error(), "no such column: nosuch") {
		t.Errorf("bad column: error = %v; want a SQLError with SQLite's text", err)
	}
}

func TestTooLarge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := analyze.New(e.results, analyze.Options{MaxRowsPerResult: 1000})
	_, err := a.Run(t.Context(), analyze.Request{SQL: "SELECT 1", Results: map[string]string{"i": e.incidents}}, nil)
	var re *analyze.ResourceError
	if !errors.Is(err, analyze.ErrTooLarge) || !errors.As(err, &re) || re.Table != "i" {
		t.Errorf("error = %v; want a ResourceError for table i wrapping ErrTooLarge", err)
	}
}

func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := analyze.New(e.results, analyze.Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			res, err := a.Run(context.Background(), analyze.Request{
				SQL:     "SELECT count(*) AS n FROM incidents i JOIN districts d ON d.name = i.district",
				Results: map[string]string{"incidents": e.incidents, "districts": e.districts},
			}, nil)
			if err == nil && res.Rows[0]["n"] != int64(5000) {
				err = fmt.Errorf("n = %v; want 5000", res.Rows[0]["n"])
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A spilled tool result is analyzable: the Server reads it through the
// executor of its kind, the spill.Store.
func TestAnalyzeSpilledResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := mcpgo.NewSpiller(e.results, e.blobs, spill.Options{Tools: map[string]spill.ToolOptions{"list": {Always: true}}})
	var items []any
	for i := range 300 {
		items = append(items, map[string]any{"name": districtNames[i%10], "score": i})
	}
	res := sp.Spill(t.Context(), "list", &mcp.CallToolResult{StructuredContent: map[string]any{"results": items}})
	uri := res.Meta.AdditionalFields[spill.MetaKey].(map[string]any)["uri"].(string)
	a := analyze.New(e.results, analyze.Options{})
	out, err := a.Run(t.Context(), analyze.Request{
		SQL:     "SELECT sum(s.score) AS total, count(DISTINCT d.name) AS n FROM spilled s JOIN districts d ON d.name = s.name",
		Results: map[string]string{"spilled": uri, "districts": e.districts},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]map[string]any{{"total": int64(299 * 300 / 2), "n": int64(10)}}, out.Rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}
