package portal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// QueryKind is the dualresp.Query kind of the SoQL queries stored for
// portals.
const QueryKind = "soql"

// Exports read a result in pages, each fetched whole with its own timeout
// into a bounded buffer ahead of the reader (see Stream). Socrata serves up
// to 50,000 rows a request; the rows of a page adapt to the width of the
// result's rows. Every page may hold streamPageBytes; a page holds more
// only with bytes reserved from the budget the exports of an Executor
// share (streamBudgetBytes), returned once the reader has taken its rows:
// from offset streamGrowFrom on, each page may hold twice the last, up to
// streamMaxPageBytes. So a result read from its start holds what it did
// with small pages up to that offset (analyses of results of that size
// hold no more), and a long export goes on in few, large requests (each
// request at a deep offset costs the portal the rows before it); many at
// once fall back to small pages, and what they hold together is bounded:
// the budget, plus streamAhead+2 small pages each.
const (
	streamPageRows     = 50_000   // the most rows of one page request
	streamFirstRows    = 1_000    // the rows of the first page, before the row width is known
	streamMinRows      = 100      // the fewest rows of a page (very wide rows)
	streamPageBytes    = 2 << 20  // the bytes any page may hold
	streamMaxPageBytes = 16 << 20 // the bytes a page may hold with the budget's leave
	streamBudgetBytes  = 32 << 20 // what the pages of all exports hold beyond streamPageBytes each
	// offlineBudgetBytes is streamBudgetBytes without a concurrency bound
	// (the offline portal, in this process): its pages, fetched one at a
	// time, need less leave to grow, and what they hold adds to the memory
	// of the portal's SQLite in the same process. Two 250,000-row exports
	// at once from `serve --offline` peaked at 191.1 MiB RSS with
	// streamBudgetBytes, 151.6 MiB with this (issue 52 bounds them at
	// 220 MiB: TestTwoExportsMemory).
	offlineBudgetBytes = 8 << 20
	// streamGrowFrom is the offset from which pages grow: a request before
	// it costs the portal little more for its offset.
	streamGrowFrom = 100_000
	// streamAhead is how many fetched pages wait for the reader besides
	// the one it reads and one being fetched: an export's own pipeline of
	// streamAhead+2 pages. A stalled reader so holds at most that many
	// pages (and those of the shared pool it took) and no upstream request.
	streamAhead = 2
	// streamParallel is the most pages of one export fetched at once;
	// fewer when the portal's concurrency bound is lower (it leaves one of
	// the portal's requests to the tools), one without a bound. The page requests of a
	// sequential reader cost the portal's fixed cost of a request each, one
	// after the other; a few at once pay it side by side.
	streamParallel = 4
	// The exports of an Executor share a pool of page requests beyond one
	// per export: an export's first request at a time is its own, each
	// more at once takes a slot of the pool until it is answered. The pool
	// holds one fewer than the portal's concurrency bound (so one export
	// alone may use all but one of the portal's requests); without a
	// bound, pages are fetched one at a time. It bounds what concurrency adds to
	// the requests in flight (and their answers in memory) of all exports,
	// and shares the extra requests among them.
	// streamPageTimeout bounds each attempt at fetching one page (the
	// socrata client's own timeout applies too).
	streamPageTimeout = 2 * time.Minute
	// streamAttempts is how many times a page is asked for before the
	// export is given up as failed.
	streamAttempts = 5
)

// pageBackoff is the wait before attempt n+1 at a page: 0.5s, 1s, 2s, 4s,
// at most 8s.
func pageBackoff(n int) time.Duration {
	return min(250*time.Millisecond<<min(n, 6), 8*time.Second)
}

// streamOptions are how Stream reads a result (the stream constants, or
// a test's).
type streamOptions struct {
	pageRows int64 // the most rows of one upstream request
	ahead    int   // fetched pages waiting for the reader
	// parallel is the most pages fetched at once (0: one); extra is the
	// pool of requests beyond one per export (nil: one at a time).
	parallel  int
	extra     *semaphore.Weighted
	pageBytes int64 // the bytes any page may hold (0: pageRows rows a page)
	// maxPageBytes is the bytes a page may hold with leave from budget,
	// which the streams of an Executor share; with no budget, pages hold
	// pageBytes.
	maxPageBytes int64
	budget       *semaphore.Weighted
	growFrom     int64 // the offset from which pages may grow
	// largeFirst reads a result known to hold growFrom rows or more in
	// large pages from its start.
	largeFirst bool
	// pageTimeout bounds each attempt at one page; attempts is how many
	// times a page is asked for; backoff is the wait before attempt n+1
	// (n from 1) when the portal gave no Retry-After.
	pageTimeout time.Duration
	attempts    int
	backoff     func(n int) time.Duration
	log         *slog.Logger
}

// defaultStream is how Stream reads a result.
var defaultStream = streamOptions{pageRows: streamPageRows, ahead: streamAhead, pageBytes: streamPageBytes,
	pageTimeout: streamPageTimeout, attempts: streamAttempts, backoff: pageBackoff}

// Query is a SoQL query on a dataset of a portal, parsed: the dualresp.Plan
// (and dualresp.Streamer) of a SoQL query. A tool that parsed the query
// hands it to dualresp in Spec.Plan to count and sample it; the Executor
// prepares one from a stored query for pages and exports. Its tree is
// read-only: Count and Page run concurrently.
type Query struct {
	Portal    *Target
	DatasetID string
	Tree      *soql.Query

	// portals follows a move Portal answers (Registry.NewQuery and
	// Prepare set it; nil: a move is an error); reader is Portal's
	// Reader, made once.
	portals    *Registry
	readerOnce sync.Once
	reader     *Reader

	stream *streamOptions // nil: defaultStream
	// stale is set when an answer to Count or Page carried
	// X-SODA2-Data-Out-Of-Date: true (see Stale).
	stale atomic.Bool
}

// NewQuery returns the Query of tree on a dataset of p, a portal Get or
// Run gave: its count, pages and stream run through the registry, so a
// move p answers to any of them is followed (see Reader).
func (r *Registry) NewQuery(p *Target, datasetID string, tree *soql.Query) *Query {
	return &Query{Portal: p, DatasetID: datasetID, Tree: tree, portals: r}
}

// Reader returns the Reader q runs on: Portal's, through the registry.
// Its Portal is where q ran last, the new host once q followed a move.
func (q *Query) Reader() *Reader {
	q.readerOnce.Do(func() { q.reader = q.portals.Reader(q.Portal) })
	return q.reader
}

// Stale reports whether the portal said, in an answer to q's Count or
// Page, that its replica's data is out of date: "Stale replicas send the
// X-SODA2-Data-Out-Of-Date: true header" (evidence stale-replica-header).
func (q *Query) Stale() bool { return q.stale.Load() }

// Stored is the dualresp query definition kept for q: its text, its
// dataset and, for a portal other than the configured one, its domain.
func (q *Query) Stored() dualresp.Query {
	params := map[string]string{"dataset_id": q.DatasetID}
	if !q.Portal.Configured {
		params["domain"] = q.Portal.Domain
	}
	return dualresp.Query{Kind: QueryKind, Text: q.Tree.String(), Params: params}
}

// Executor prepares stored SoQL queries, each on its own portal: the
// dualresp.Executor of QueryKind.
type Executor struct {
	portals *Registry
	stream  streamOptions
}

// ExecutorOptions configures an Executor. The zero value gives the
// defaults.
type ExecutorOptions struct {
	// Backoff is the wait before attempt n+1 (n from 1) at a page that
	// failed in a way that may pass, when the portal gave no Retry-After.
	// Default: 0.5s, 1s, 2s, 4s, at most 8s.
	Backoff func(n int) time.Duration
}

// NewExecutor returns the Executor of the portals of r.
func NewExecutor(r *Registry, opts ExecutorOptions) *Executor {
	stream := defaultStream
	stream.log = r.log
	if opts.Backoff != nil {
		stream.backoff = opts.Backoff
	}
	stream.maxPageBytes, stream.budget, stream.growFrom = streamMaxPageBytes, semaphore.NewWeighted(streamBudgetBytes), streamGrowFrom
	stream.parallel = 1
	if bound := r.opts.Limits.MaxConcurrent; bound > 0 {
		// A portal across the network: each request costs it a fixed
		// time, which pages fetched at once, and large pages, pay less
		// often. Without a bound (the offline portal, this process's own
		// SQLite) a page costs CPU here: pages are fetched one at a time
		// and grow only far into a result, as fetching more at once would
		// only contend for that CPU.
		stream.parallel = min(streamParallel, max(bound-1, 1))
		stream.extra = semaphore.NewWeighted(int64(max(bound-1, 0)))
		stream.largeFirst = true
	} else {
		stream.budget = semaphore.NewWeighted(offlineBudgetBytes)
	}
	return &Executor{portals: r, stream: stream}
}

var (
	_ dualresp.Executor = (*Executor)(nil)
	_ dualresp.Streamer = (*Query)(nil)
)

// Prepare resolves a stored query into a *Query: its portal (checked
// again, as the allowlist may have changed since it was stored) and its
// parsed tree.
func (e *Executor) Prepare(ctx context.Context, q dualresp.Query) (dualresp.Plan, error) {
	if q.Kind != QueryKind {
		return nil, fmt.Errorf("portal: cannot execute a stored query of kind %q", q.Kind)
	}
	id := q.Params["dataset_id"]
	if id == "" {
		return nil, errors.New("portal: stored query has no dataset_id")
	}
	p, err := e.portals.Get(ctx, q.Params["domain"])
	if err != nil {
		return nil, err
	}
	tree, err := soql.Parse(q.Text)
	if err != nil {
		return nil, fmt.Errorf("portal: stored query does not parse: %w", err)
	}
	return &Query{Portal: p, DatasetID: id, Tree: tree, portals: e.portals, stream: &e.stream}, nil
}

// Count returns the exact number of rows of q: `<q> |> SELECT count(*)`.
// A move the portal answers is followed (see Reader), as it is by Page
// and Stream.
func (q *Query) Count(ctx context.Context) (n int64, err error) {
	text := q.Tree.CountQuery().String()
	for t, again := q.Reader().Try(), true; again; {
		n, err = t.Portal().Client.Count(ctx, q.DatasetID, text)
		again, err = t.Next(ctx, err)
	}
	return n, err
}

// Page returns one page of q's rows, as raw JSON objects, with the
// result's columns from the response's X-SODA2-Fields and X-SODA2-Types
// headers: one upstream request (one more when the portal answers that
// it moved: the move is followed, see Reader).
func (q *Query) Page(ctx context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	text := withOrder(q.Tree, req.Order).WithPage(req.Offset, req.Limit).String()
	var (
		stream *socrata.RowStream
		err    error
	)
	for t, again := q.Reader().Try(), true; again; {
		stream, err = t.Portal().Client.QueryStream(ctx, q.DatasetID, text)
		again, err = t.Next(ctx, err)
	}
	if err != nil {
		return dualresp.PageResult{}, err
	}
	defer stream.Close()
	if stream.Stale {
		q.stale.Store(true)
	}
	res := dualresp.PageResult{Columns: make([]dualresp.Column, len(stream.Fields))}
	for i, f := range stream.Fields {
		res.Columns[i].Name = f
		if i < len(stream.Types) {
			res.Columns[i].Type = stream.Types[i]
		}
	}
	for {
		raw, err := stream.NextRaw()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return dualresp.PageResult{}, err
		}
		res.Rows = append(res.Rows, raw)
	}
}

// Stream passes rows req.Offset .. req.Offset+req.Limit-1 of the
// query (all rows from req.Offset when req.Limit is 0) to fn, in req's
// order, without decoding them.
//
// The result is read in pages, each page one upstream request (or a few,
// see fetchRange) read whole with its own timeout (pageTimeout), so an
// upstream request never waits on fn: a slow or stalled reader cannot make
// the portal's answer time out. Up to e.parallel pages are fetched at once
// (the first request at a time is the export's own, each more takes a slot
// of the pool the exports of an Executor share, e.extra, until it is
// answered), each into a slot of its own, and fn gets them in order. An
// export has at most e.ahead+2 pages fetched, being fetched or being read,
// so a stalled reader holds that many pages and no upstream request. A
// page whose request fails (a timeout, a cut body, a 5xx or 429) is asked
// for again at the same offset, e.attempts times in all: the stored
// query's stable order (ORDER BY ... :id, see soql.WithStableOrder) makes
// that page the same rows, so none is lost or sent twice. Only a page that
// still fails after that ends the stream, with its error, once every row
// before it has gone to fn. Each page aims at e.pageBytes of rows (its rows
// adapt to the rows' width seen so far, between streamMinRows and
// e.pageRows); a short page means the result ended. With req.Limit no page
// goes past its end.
func (q *Query) Stream(ctx context.Context, req dualresp.PageRequest, fn func(json.RawMessage) error) error {
	rd, id, e := q.Reader(), q.DatasetID, q.stream
	if e == nil {
		e = &defaultStream
	}
	if req.Offset < 0 || req.Limit < 0 {
		return fmt.Errorf("portal: bad stream offset %d, limit %d", req.Offset, req.Limit)
	}
	parsed := withOrder(q.Tree, req.Order)
	end := int64(math.MaxInt64)
	if req.Limit > 0 && req.Offset <= math.MaxInt64-req.Limit {
		end = req.Offset + req.Limit
	}
	ctx, cancel := context.WithCancel(ctx)
	f := newPageFetcher(e, rd, id, parsed)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(f.queue)
		f.run(ctx, req.Offset, end)
	}()
	defer func() {
		cancel()
		<-done      // no page is started after Stream returns
		f.wg.Wait() // nor is any request open
		for slot := range f.queue {
			f.release(<-slot) // pages the reader did not take
		}
	}()
	for slot := range f.queue {
		var page fetchedPage
		select {
		case page = <-slot:
		case <-ctx.Done():
			return ctx.Err()
		}
		if page.err != nil {
			f.release(page)
			return page.err
		}
		err := sendRows(page.rows, fn)
		f.release(page)
		if err != nil {
			return err
		}
		if page.last {
			return nil
		}
	}
	return ctx.Err()
}

// sendRows gives rows to fn in order, dropping each once fn is done with it.
func sendRows(rows []json.RawMessage, fn func(json.RawMessage) error) error {
	for i, row := range rows {
		if err := fn(row); err != nil {
			return err
		}
		rows[i] = nil
	}
	return nil
}

// fetchedPage is one page of a stream: its rows, or the error that ended
// the stream; last marks a short page (the result ended). held is what it
// reserved of the budget.
type fetchedPage struct {
	rows []json.RawMessage
	held int64
	last bool
	err  error
}

// pageFetcher fetches the pages of one stream: run hands out their slots,
// in order, on queue, and fetches them up to e.parallel at once.
type pageFetcher struct {
	e     *streamOptions
	rd    *Reader // the query's portal, a move followed
	id    string
	q     *soql.Query
	queue chan chan fetchedPage
	room  chan struct{} // a token for each page handed out and not yet read
	busy  chan struct{} // a token for each page being fetched (sent by run only)
	freed chan struct{} // a page's request was answered
	wg    sync.WaitGroup

	known     chan struct{} // closed once the width is known or the stream ended
	knownOnce sync.Once

	most  atomic.Int64 // the most rows of a request, lowered for good when a page times out
	width atomic.Int64 // the bytes of a row, once a page has shown it
	ended atomic.Bool  // a page came back short
}

func newPageFetcher(e *streamOptions, rd *Reader, id string, q *soql.Query) *pageFetcher {
	parallel := max(e.parallel, 1)
	own := max(e.ahead, 1) + 2
	f := &pageFetcher{e: e, rd: rd, id: id, q: q,
		queue: make(chan chan fetchedPage, own+parallel),
		room:  make(chan struct{}, own),
		busy:  make(chan struct{}, parallel), freed: make(chan struct{}, 1), known: make(chan struct{})}
	f.most.Store(e.pageRows)
	return f
}

// release gives back what a page held once the reader is done with it.
func (f *pageFetcher) release(page fetchedPage) {
	if page.held > 0 {
		f.e.budget.Release(page.held)
	}
	<-f.room
}

// request waits for the turn of one more page request: the export's own
// when none is in flight, else, up to e.parallel at once, a slot of the
// shared pool taken without waiting; otherwise it waits for a request to be
// answered. It reports whether it took a shared slot; ok is false when ctx
// ended.
func (f *pageFetcher) request(ctx context.Context) (extra, ok bool) {
	for {
		switch n := len(f.busy); {
		case n == 0:
			f.busy <- struct{}{}
			return false, true
		case n < max(f.e.parallel, 1) && f.e.extra != nil && f.e.extra.TryAcquire(1):
			f.busy <- struct{}{}
			return true, true
		}
		select {
		case <-f.freed:
		case <-ctx.Done():
			return false, false
		}
	}
}

// answered ends a page request.
func (f *pageFetcher) answered(extra bool) {
	<-f.busy
	if extra {
		f.e.extra.Release(1)
	}
	select {
	case f.freed <- struct{}{}:
	default:
	}
}

// run hands out the pages of rows off .. end-1 in order until the result
// ends, a page fails for good or ctx ends. Until a page has shown the
// width of the rows, up to e.parallel pages of streamFirstRows are fetched
// at once; the pages after them are sized by that width.
func (f *pageFetcher) run(ctx context.Context, off, end int64) {
	e := f.e
	limit := e.pageBytes // the bytes the next page may hold
	growFrom := e.growFrom
	if e.largeFirst && end != math.MaxInt64 && end-off >= e.growFrom && e.budget != nil {
		// A result known to be large is read in large pages from its
		// start: each request costs the portal a fixed time, which few
		// large pages pay few times (a small result ends soon on small
		// ones, and holds no more than it did).
		growFrom, limit = off, e.maxPageBytes
	}
	for firsts := 0; off < end && !f.ended.Load(); {
		if e.pageBytes > 0 && f.width.Load() == 0 && firsts >= max(e.parallel, 1) {
			// Pages are sized by the width of the rows: wait for one to
			// show it.
			select {
			case <-f.known:
			case <-ctx.Done():
				return
			}
			continue
		}
		select {
		case f.room <- struct{}{}:
		case <-ctx.Done():
			return
		}
		extra, ok := f.request(ctx)
		if !ok {
			<-f.room
			return
		}
		if f.ended.Load() {
			f.answered(extra)
			<-f.room
			return
		}
		size, held := min(f.most.Load(), end-off), int64(0)
		width := f.width.Load()
		switch {
		case e.pageBytes > 0 && width == 0:
			size = min(size, streamFirstRows)
			firsts++
		case e.pageBytes > 0:
			size, held = e.budgetRows(min(size, max(limit/width, streamMinRows)), width)
			if e.budget != nil && off >= growFrom {
				limit = min(2*limit, e.maxPageBytes)
			}
		}
		slot, from := make(chan fetchedPage, 1), off
		f.queue <- slot // never waits: the pages handed out are bounded by room
		f.wg.Add(1)
		fetch := func() {
			defer f.wg.Done()
			page := f.fetchRange(ctx, from, size)
			page.held = held
			f.answered(extra)
			slot <- page
		}
		go fetch()
		off += size
	}
}

// end stops handing out pages.
func (f *pageFetcher) end() {
	f.ended.Store(true)
	f.knownOnce.Do(func() { close(f.known) })
}

// fetchRange reads rows off .. off+size-1 (fewer when the result ends),
// in as many requests as fetchPage needs (it asks for fewer rows after a
// timeout). An error, or a short page, ends the stream.
func (f *pageFetcher) fetchRange(ctx context.Context, off, size int64) fetchedPage {
	var page fetchedPage
	for got := int64(0); got < size; {
		rows, nbytes, asked, err := f.e.fetchPage(ctx, f.rd, f.id, f.q, off+got, size-got)
		if err != nil {
			f.end()
			return fetchedPage{err: err}
		}
		if asked < size-got {
			// The page timed out at its full size: lower the bound for
			// good (pages run at once, so only ever down).
			for cur := f.most.Load(); asked < cur && !f.most.CompareAndSwap(cur, asked); cur = f.most.Load() {
			}
		}
		if nbytes > 0 {
			f.width.Store(max(nbytes/int64(len(rows)), 1))
			f.knownOnce.Do(func() { close(f.known) })
		}
		if page.rows == nil {
			page.rows = rows
		} else {
			page.rows = append(page.rows, rows...)
		}
		got += int64(len(rows))
		if int64(len(rows)) < asked {
			page.last = true
			f.end()
			break
		}
	}
	return page
}

// budgetRows is the rows of the next page at rows of width bytes, as many as
// the budget allows: up to want, and at least the rows of e.pageBytes
// (streamMinRows for very wide rows). It returns the rows and the bytes
// reserved for them beyond e.pageBytes, which release gives back.
func (e *streamOptions) budgetRows(want, width int64) (int64, int64) {
	floor := max(e.pageBytes/width, streamMinRows)
	if e.budget == nil || want <= floor {
		return min(want, floor), 0
	}
	for n := want; n > floor; n /= 2 {
		if held := (n - floor) * width; e.budget.TryAcquire(held) {
			return n, held
		}
	}
	return floor, 0
}

// fetchPage reads rows off .. off+size-1 of q whole, asking again after a
// failure that may pass (see transientError), e.attempts times in all; a
// page that timed out is asked for again in half the rows (not fewer than
// streamMinRows), since a smaller page answers sooner. It returns the
// rows, their bytes and the number of rows asked for in the end.
func (e *streamOptions) fetchPage(ctx context.Context, rd *Reader, id string, q *soql.Query, off, size int64) ([]json.RawMessage, int64, int64, error) {
	attempts := max(e.attempts, 1)
	for attempt := 1; ; attempt++ {
		rows, nbytes, err := e.readPage(ctx, rd, id, q.WithPage(off, size).String())
		if err == nil {
			return rows, nbytes, size, nil
		}
		if ctx.Err() != nil || attempt >= attempts || !transientError(err) {
			if ctx.Err() == nil && attempt > 1 {
				err = fmt.Errorf("rows %d+ failed %d times: %w", off, attempt, err)
			}
			return nil, 0, 0, err
		}
		backoff := e.backoff
		if backoff == nil {
			backoff = pageBackoff
		}
		wait := backoff(attempt)
		var (
			rl *socrata.RateLimitError
			te *socrata.TimeoutError
		)
		if errors.As(err, &rl) && rl.RetryAfter > wait {
			wait = rl.RetryAfter
		}
		var busy *socrata.BusyError
		if errors.As(err, &busy) && busy.After > wait {
			wait = busy.After
		}
		if errors.As(err, &te) {
			size = max(size/2, min(size, streamMinRows))
		}
		e.logger().WarnContext(ctx, "portal: a page of an export failed; asking for it again",
			"domain", rd.Portal().Domain, "dataset", id, "offset", off, "rows", size, "attempt", attempt, "wait", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, 0, 0, ctx.Err()
		}
	}
}

// readPage makes one request for a page and reads its rows whole, within
// e.pageTimeout; a move the portal answers is followed (see Reader).
func (e *streamOptions) readPage(ctx context.Context, rd *Reader, id, text string) ([]json.RawMessage, int64, error) {
	if e.pageTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.pageTimeout)
		defer cancel()
	}
	var (
		s   *socrata.RowStream
		err error
	)
	for t, again := rd.Try(), true; again; {
		s, err = t.Portal().Client.QueryStream(ctx, id, text)
		again, err = t.Next(ctx, err)
	}
	if err != nil {
		return nil, 0, err
	}
	defer s.Close()
	var (
		rows   []json.RawMessage
		nbytes int64
	)
	for {
		raw, err := s.NextRaw()
		if errors.Is(err, io.EOF) {
			return rows, nbytes, nil
		}
		if err != nil {
			return nil, 0, err
		}
		rows = append(rows, raw)
		nbytes += int64(len(raw))
	}
}

func (e *streamOptions) logger() *slog.Logger {
	if e.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.log
}

// transientError reports whether asking for a page again may succeed: a
// timeout, a body cut off or unreadable, rate limiting, a 5xx, a transport
// failure, a portal too busy (socrata.BusyError). A query the portal
// refuses (4xx), a missing dataset, or a move that was not followed (its
// new host refused, a chain or a loop: the registry's answer) fails the
// same way again.
func transientError(err error) bool {
	var (
		api *socrata.APIError
		dom *socrata.DomainError
		mv  *socrata.MovedError
	)
	switch {
	case errors.Is(err, context.Canceled), errors.As(err, &dom), errors.As(err, &mv):
		return false
	case errors.As(err, &api):
		switch api.Code {
		case "truncated_response", "invalid_response", "still_processing", "html_response":
			return true
		}
		return api.StatusCode >= 500 || api.StatusCode == http.StatusRequestTimeout || api.StatusCode == http.StatusTooManyRequests
	}
	return true
}

// withOrder sorts q's result by the requested fields (already checked by
// dualresp to be result columns) in a stage of its own after q, so the sort
// applies after q's LIMIT and OFFSET and can name any result column,
// including those the portal names itself (upper_name for upper(name)).
// That stage has no :id to fall back on, so every other result column that
// can be ordered follows the sort fields as a tie-breaker: rows that tie on
// all of them are identical as far as those columns show, and pages stay
// deterministic.
func withOrder(q *soql.Query, order dualresp.Order) *soql.Query {
	if len(order.Sort) == 0 {
		return q
	}
	keys := make([]*soql.OrderItem, 0, len(order.Sort)+len(order.Columns))
	sorted := map[string]bool{}
	for _, s := range order.Sort {
		keys = append(keys, &soql.OrderItem{Expr: soql.Column(s.Field), Desc: s.Desc})
		sorted[s.Field] = true
	}
	names := make([]string, len(order.Columns))
	for i, c := range order.Columns {
		names[i] = c.Name
		if !sorted[c.Name] && orderable(c.Type) {
			keys = append(keys, &soql.OrderItem{Expr: soql.Column(c.Name)})
		}
	}
	return q.SortedBy(names, keys)
}

// orderable reports whether Socrata can ORDER BY a column of the given
// type; geometries and the composite types cannot. An unknown type is
// assumed orderable.
func orderable(dataType string) bool {
	switch strings.ToLower(dataType) {
	case "point", "multipoint", "line", "multiline", "polygon", "multipolygon",
		"location", "url", "photo", "document", "json", "blob":
		return false
	}
	return true
}
