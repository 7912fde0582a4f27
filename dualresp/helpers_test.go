package dualresp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// genExecutor serves a generated result of Total rows; row i is genRow(i).
// It sorts by "i" (asc or desc) only. Query.Params["total"], when set,
// replaces Total, so one executor can serve several results.
type genExecutor struct {
	Total    int64
	CountErr error
	PageErr  error
	prepares atomic.Int64
	pages    atomic.Int64
	counts   atomic.Int64
}

var genColumns = []dualresp.Column{
	{Name: "i", Type: "number"}, {Name: "name", Type: "text"},
	{Name: "even", Type: "checkbox"}, {Name: "tags", Type: "json"},
}

func genRow(i int64) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"i":%d,"name":"row-%d","even":%t,"tags":["a",%d]}`, i, i, i%2 == 0, i%7))
}

func (g *genExecutor) Prepare(_ context.Context, q dualresp.Query) (dualresp.Plan, error) {
	return g.plan(q), nil
}

func (g *genExecutor) plan(q dualresp.Query) *genPlan {
	g.prepares.Add(1)
	return &genPlan{g: g, q: q}
}

// genPlan is a genExecutor's prepared query. It reads g's fields as it
// runs, so a test may change them after a result was created.
type genPlan struct {
	g *genExecutor
	q dualresp.Query
}

func (p *genPlan) total() int64 {
	if s, ok := p.q.Params["total"]; ok {
		n, _ := strconv.ParseInt(s, 10, 64)
		return n
	}
	return p.g.Total
}

func (p *genPlan) Count(ctx context.Context) (int64, error) {
	p.g.counts.Add(1)
	if p.g.CountErr != nil {
		return 0, p.g.CountErr
	}
	return p.total(), ctx.Err()
}

func (p *genPlan) Page(ctx context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	p.g.pages.Add(1)
	if p.g.PageErr != nil {
		return dualresp.PageResult{}, p.g.PageErr
	}
	if err := ctx.Err(); err != nil {
		return dualresp.PageResult{}, err
	}
	desc := false
	for _, s := range req.Sort {
		if s.Field != "i" {
			return dualresp.PageResult{}, fmt.Errorf("genExecutor cannot sort by %q", s.Field)
		}
		desc = s.Desc
	}
	total := p.total()
	var rows []json.RawMessage
	for k := req.Offset; k < total && k < req.Offset+req.Limit; k++ {
		i := k
		if desc {
			i = total - 1 - k
		}
		rows = append(rows, genRow(i))
	}
	return dualresp.PageResult{Rows: rows}, nil
}

// streamExecutor is a genExecutor whose plans also stream.
type streamExecutor struct {
	*genExecutor
	streams atomic.Int64
}

func (s *streamExecutor) Prepare(_ context.Context, q dualresp.Query) (dualresp.Plan, error) {
	return s.plan(q), nil
}

func (s *streamExecutor) plan(q dualresp.Query) streamPlan {
	return streamPlan{s.genExecutor.plan(q), s}
}

// streamPlan is a streamExecutor's prepared query.
type streamPlan struct {
	*genPlan
	s *streamExecutor
}

func (p streamPlan) Stream(ctx context.Context, req dualresp.PageRequest, fn func(json.RawMessage) error) error {
	p.s.streams.Add(1)
	total := p.total()
	if req.Limit > 0 {
		total = min(total, req.Offset+req.Limit)
	}
	buf := make([]byte, 0, 128)
	for i := req.Offset; i < total; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		buf = fmt.Appendf(buf[:0], `{"i":%d,"name":"row-%d","even":%t,"tags":["a",%d]}`, i, i, i%2 == 0, i%7)
		if err := fn(buf); err != nil {
			return err
		}
	}
	return nil
}

// newServer returns a Server over exec with a fake clock and no cleanup
// loop, closed when the test ends.
func newServer(t *testing.T, exec dualresp.Executor, opts dualresp.Options) (*dualresp.Server, *fakeClock) {
	t.Helper()
	clock := newClock()
	if opts.BaseURL == "" {
		opts.BaseURL = "http://example.test"
	}
	if exec != nil {
		opts.Executors = map[string]dualresp.Executor{"gen": exec}
	}
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	if opts.CleanupInterval == 0 {
		opts.CleanupInterval = -1
	}
	srv, err := dualresp.New(opts)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, clock
}

// startServer serves srv's handler on a loopback httptest server whose URL
// is the server's BaseURL. wrap, when not nil, wraps the handler.
func startServer(t *testing.T, exec dualresp.Executor, opts dualresp.Options, wrap func(http.Handler) http.Handler) (*dualresp.Server, *fakeClock, *httptest.Server) {
	t.Helper()
	outer := http.NewServeMux() // the handler is added once the server's URL is known
	ts := httptest.NewServer(outer)
	t.Cleanup(ts.Close)
	opts.BaseURL = ts.URL
	srv, clock := newServer(t, exec, opts)
	mux := http.NewServeMux()
	mux.Handle("/resources/", srv.Handler())
	var h http.Handler = mux
	if wrap != nil {
		h = wrap(mux)
	}
	outer.Handle("/", h)
	return srv, clock, ts
}

func create(t *testing.T, srv *dualresp.Server, spec dualresp.Spec) *dualresp.Response {
	t.Helper()
	if spec.Columns == nil {
		spec.Columns = genColumns
	}
	if spec.Query.Kind == "" {
		spec.Query = dualresp.Query{Kind: "gen", Text: "all rows"}
	}
	resp, err := srv.CreateResponse(t.Context(), spec)
	if err != nil {
		t.Fatalf("CreateResponse() = %v", err)
	}
	return resp
}

func newClient(t *testing.T, opts dualresp.ClientOptions) *dualresp.Client {
	t.Helper()
	if opts.RetryBackoff == 0 {
		opts.RetryBackoff = time.Millisecond
	}
	c, err := dualresp.NewClient(opts)
	if err != nil {
		t.Fatalf("NewClient() = %v", err)
	}
	return c
}

func parse(t *testing.T, c *dualresp.Client, resp *dualresp.Response) *dualresp.Parsed {
	t.Helper()
	p := c.Parse(toolResult(resp))
	if p == nil {
		t.Fatalf("Parse(tool result of %s) = nil", resp.ID())
	}
	return p
}

// toolResult is resp as an MCP tool result on the wire: the text and the
// resource_link as content, and the structured content. The SDK adapters
// (dualresp/mcpgo, dualresp/gosdk, modules of their own) build it with
// their SDK's types and check Parse reads those; this package's tests,
// which import no SDK, use the wire shape.
func toolResult(resp *dualresp.Response) map[string]any {
	l := resp.Link()
	link := map[string]any{"type": "resource_link", "uri": l.URI, "name": l.Name, "description": l.Description, "mimeType": l.MIMEType}
	if l.Size != nil {
		link["size"] = *l.Size
	}
	return map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": resp.Text()}, link},
		"structuredContent": resp.StructuredContent(),
	}
}

func isErr[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// rowsExecutor serves fixed rows.
type rowsExecutor struct{ rows []json.RawMessage }

// Prepare returns e itself: every query is the same result.
func (e *rowsExecutor) Prepare(context.Context, dualresp.Query) (dualresp.Plan, error) { return e, nil }

func (e *rowsExecutor) Count(context.Context) (int64, error) {
	return int64(len(e.rows)), nil
}

func (e *rowsExecutor) Page(_ context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	lo := min(req.Offset, int64(len(e.rows)))
	hi := min(lo+req.Limit, int64(len(e.rows)))
	return dualresp.PageResult{Rows: e.rows[lo:hi]}, nil
}
