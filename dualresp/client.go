package dualresp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Client defaults.
const (
	DefaultClientTimeout = 30 * time.Second
	DefaultClientPage    = 1000
	DefaultMaxRetries    = 3
	DefaultRetryBackoff  = 250 * time.Millisecond
)

// ClientOptions configures a Client. The zero value means the defaults.
type ClientOptions struct {
	// BaseURL, when set, is where resources are fetched from whatever URL
	// the response names: BaseURL + "/resources/" + id. Use it when the
	// server's public URL is not reachable from here. It also resolves
	// responses that carry only a resource://id URI.
	BaseURL string
	// HTTPClient makes the requests. Default http.DefaultClient.
	HTTPClient *http.Client
	// Header is added to every request (for example Authorization).
	Header http.Header
	// Timeout bounds each request (each attempt). Default 30 seconds;
	// negative means none.
	Timeout time.Duration
	// PageSize is the page size of Rows and FetchAll. Default 1000.
	PageSize int64
	// MaxRetries is how often a request that failed transiently (connection
	// error, timeout, HTTP 5xx, 408 or 429) is tried again. Default 3;
	// negative means never.
	MaxRetries int
	// RetryBackoff is the wait before the first retry; it doubles for each
	// further one (at most 10 seconds). Default 250ms.
	RetryBackoff time.Duration
	// Now is the clock of Parsed.IsExpired. Default time.Now.
	Now func() time.Time
}

// Client fetches full results of dual responses.
type Client struct {
	base     string
	hc       *http.Client
	header   http.Header
	timeout  time.Duration
	pageSize int64
	retries  int
	backoff  time.Duration
	now      func() time.Time
}

// NewClient returns a Client. It fails only for an invalid BaseURL.
func NewClient(opts ClientOptions) (*Client, error) {
	c := &Client{
		hc:       opts.HTTPClient,
		header:   opts.Header.Clone(),
		timeout:  opts.Timeout,
		pageSize: opts.PageSize,
		retries:  opts.MaxRetries,
		backoff:  opts.RetryBackoff,
		now:      opts.Now,
	}
	if opts.BaseURL != "" {
		base, err := checkBaseURL(opts.BaseURL)
		if err != nil {
			return nil, errors.New(strings.Replace(err.Error(), "Options.BaseURL", "ClientOptions.BaseURL", 1))
		}
		c.base = base
	}
	if c.hc == nil {
		c.hc = http.DefaultClient
	}
	if c.timeout == 0 {
		c.timeout = DefaultClientTimeout
	}
	if c.pageSize <= 0 {
		c.pageSize = DefaultClientPage
	}
	if c.retries == 0 {
		c.retries = DefaultMaxRetries
	}
	c.retries = max(c.retries, 0)
	if c.backoff <= 0 {
		c.backoff = DefaultRetryBackoff
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

var defaultClient, _ = NewClient(ClientOptions{})

// Parse reads a dual response with a default Client; see Client.Parse.
func Parse(v any) *Parsed { return defaultClient.Parse(v) }

// ParseStructured is Parse for a structured-content value (a map or its
// JSON); it exists for symmetry with the mcp-dual-response specification.
func ParseStructured(v any) *Parsed { return defaultClient.Parse(v) }

// Row is one result row: a JSON object, byte for byte as the server sent it.
type Row json.RawMessage

// MarshalJSON returns r itself (or null when empty).
func (r Row) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON stores a copy of b.
func (r *Row) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// Decode decodes the row into v.
func (r Row) Decode(v any) error { return json.Unmarshal(r, v) }

// Map decodes the row into a map, keeping numbers exact (json.Number).
func (r Row) Map() (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.UseNumber()
	var m map[string]any
	err := dec.Decode(&m)
	return m, err
}

// String returns the row's JSON.
func (r Row) String() string { return string(r) }

// Parsed is a dual response read by Parse: what the model saw and the way to
// the full result.
type Parsed struct {
	Summary string
	// Sample holds the sample rows included in the response.
	Sample []Row
	// TotalCount is the number of rows of the full result.
	TotalCount int64
	// Truncated reports that the sample holds fewer rows than the result.
	Truncated   bool
	ResourceURI string
	// ResourceURL is where pages are fetched from (see ClientOptions.BaseURL).
	ResourceURL string
	Name        string
	MIMEType    string
	Columns     []Column
	ExpiresAt   time.Time // zero when unknown or pinned
	ExecutedAt  time.Time // zero when unknown
	// Meta is the response's metadata object as given (numbers as
	// json.Number).
	Meta map[string]any

	id     string
	client *Client
}

// Parse reads a dual response from v: an *mcp.CallToolResult or
// mcp.CallToolResult, the JSON ([]byte, json.RawMessage or string) of a tool
// result, of a JSON-RPC response holding one, or of structured content, or a
// structured-content map[string]any. It accepts this package's shape and
// the "Building a Dual Response MCP Server" article's (resource.url,
// results, metadata.total_count). It returns nil when v is not a dual
// response.
func (c *Client) Parse(v any) *Parsed {
	switch x := v.(type) {
	case nil:
		return nil
	case *mcp.CallToolResult:
		if x == nil {
			return nil
		}
		return c.parseToolResult(x)
	case mcp.CallToolResult:
		return c.parseToolResult(&x)
	case []byte:
		return c.parseJSON(x, 0)
	case json.RawMessage:
		return c.parseJSON(x, 0)
	case string:
		return c.parseJSON([]byte(x), 0)
	case map[string]any:
		b, err := json.Marshal(x)
		if err != nil {
			return nil
		}
		return c.parseJSON(b, 0)
	}
	return nil
}

func (c *Client) parseToolResult(r *mcp.CallToolResult) *Parsed {
	if len(r.RawStructuredContent) > 0 {
		if p := c.parseJSON(r.RawStructuredContent, 1); p != nil {
			return p
		}
	}
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			if p := c.parseJSON(b, 1); p != nil {
				return p
			}
		}
	}
	for _, content := range r.Content {
		if tc, ok := mcp.AsTextContent(content); ok {
			if p := c.parseJSON([]byte(tc.Text), 1); p != nil {
				return p
			}
		}
	}
	return nil
}

func decodeGeneric(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// parseJSON parses structured content, a tool result or a JSON-RPC response.
func (c *Client) parseJSON(b []byte, depth int) *Parsed {
	if depth > 3 {
		return nil
	}
	v, err := decodeGeneric(b)
	if err != nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if p := c.parseStructured(m); p != nil {
		return p
	}
	if sc, ok := m["structuredContent"].(map[string]any); ok {
		if p := c.parseStructured(sc); p != nil {
			return p
		}
	}
	if res, ok := m["result"].(map[string]any); ok {
		rb, _ := json.Marshal(res)
		return c.parseJSON(rb, depth+1)
	}
	if content, ok := m["content"].([]any); ok {
		for _, item := range content {
			im, _ := item.(map[string]any)
			if text, ok := im["text"].(string); ok && im["type"] == "text" {
				if p := c.parseJSON([]byte(text), depth+1); p != nil {
					return p
				}
			}
		}
	}
	return nil
}

func (c *Client) parseStructured(m map[string]any) *Parsed {
	res, ok := m["resource"].(map[string]any)
	if !ok {
		return nil
	}
	uri, _ := res["uri"].(string)
	rawURL, _ := res["url"].(string)
	if uri == "" && rawURL == "" {
		return nil
	}
	meta, _ := m["metadata"].(map[string]any)
	results, hasResults := m["results"].([]any)
	total, hasTotal := toInt64(meta["total_count"])
	if (!hasResults && !hasTotal) || total < 0 {
		return nil // not a dual response (a negative total is never one)
	}
	p := &Parsed{client: c, ResourceURI: uri, Meta: meta}
	p.Summary, _ = m["summary"].(string)
	p.Name, _ = res["name"].(string)
	p.MIMEType, _ = res["mimeType"].(string)
	for _, r := range results {
		b, err := json.Marshal(r)
		if err != nil {
			return nil
		}
		p.Sample = append(p.Sample, Row(b))
	}
	if hasTotal {
		p.TotalCount = total
	} else {
		p.TotalCount = int64(len(p.Sample))
	}
	if t, ok := meta["truncated"].(bool); ok {
		p.Truncated = t
	} else {
		p.Truncated = int64(len(p.Sample)) < p.TotalCount
	}
	if cols, ok := meta["columns"].([]any); ok {
		for _, col := range cols {
			switch cv := col.(type) {
			case string:
				p.Columns = append(p.Columns, Column{Name: cv})
			case map[string]any:
				name, _ := cv["name"].(string)
				typ, _ := cv["type"].(string)
				if typ == "" {
					typ, _ = cv["dataType"].(string)
				}
				p.Columns = append(p.Columns, Column{Name: name, Type: typ})
			}
		}
	}
	p.ExpiresAt = parseTime(meta["expires_at"])
	p.ExecutedAt = parseTime(meta["executed_at"])

	p.id = lastSegment(uri)
	if p.id == "" {
		p.id = lastSegment(rawURL)
	}
	if p.ResourceURI == "" && p.id != "" {
		p.ResourceURI = "resource://" + p.id
	}
	switch {
	case c.base != "" && p.id != "":
		p.ResourceURL = c.base + "/resources/" + url.PathEscape(p.id)
	case rawURL != "":
		p.ResourceURL = rawURL
	}
	return p
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		if f, err := n.Float64(); err == nil {
			return int64(f), true
		}
	case float64:
		return int64(n), true
	case int:
		return int64(n), true
	case int64:
		return n, true
	case string:
		if i, err := strconv.ParseInt(n, 10, 64); err == nil {
			return i, true
		}
	}
	return 0, false
}

func parseTime(v any) time.Time {
	s, _ := v.(string)
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// lastSegment returns the last path segment of a URL or URI, ignoring its
// query: "resource://abc" and "http://h/resources/abc?x" give "abc".
func lastSegment(s string) string {
	if s == "" {
		return ""
	}
	if u, err := url.Parse(s); err == nil {
		p := u.Path
		if p == "" || p == "/" {
			p = u.Host + u.Opaque
		} else if u.Scheme != "" && !strings.HasPrefix(s, u.Scheme+":///") && u.Host != "" && u.Scheme != "http" && u.Scheme != "https" {
			p = u.Host + p
		}
		p = strings.Trim(p, "/")
		if i := strings.LastIndex(p, "/"); i >= 0 {
			p = p[i+1:]
		}
		return p
	}
	return ""
}

// ID returns the resource id, or "" when the response does not reveal it.
func (p *Parsed) ID() string { return p.id }

// IsExpired reports whether the response's expiry time has passed (by the
// Client's clock). A pinned response, or one without an expiry, never
// expires.
func (p *Parsed) IsExpired() bool {
	return !p.ExpiresAt.IsZero() && !p.client.now().Before(p.ExpiresAt)
}

// FetchOptions selects a page.
type FetchOptions struct {
	Offset int64
	// Limit is the page size; zero means the Client's PageSize. The server
	// may cap it (Page.LimitCapped).
	Limit int64
	// Sort orders the result by columns of the result.
	Sort []SortField
}

// Page is one page of a full result.
type Page struct {
	Data          []Row
	TotalCount    int64
	ReturnedCount int64
	Offset        int64
	Limit         int64
	HasNext       bool
	// NextOffset is the offset of the next page; zero when !HasNext.
	NextOffset  int64
	HasPrevious bool
	// LimitCapped reports that the server lowered the requested limit.
	LimitCapped bool
}

type wirePage struct {
	Data          []Row  `json:"data"`
	TotalCount    int64  `json:"total_count"`
	ReturnedCount int64  `json:"returned_count"`
	Offset        int64  `json:"offset"`
	Limit         int64  `json:"limit"`
	HasNext       bool   `json:"has_next"`
	NextOffset    *int64 `json:"next_offset"`
	HasPrevious   bool   `json:"has_previous"`
	LimitCapped   bool   `json:"limit_capped"`
}

func (p *Parsed) url() (string, error) {
	if p.ResourceURL == "" {
		return "", &ParseError{What: "dual response", Err: errors.New("no resource URL: the response has no resource.url and the Client has no BaseURL")}
	}
	return p.ResourceURL, nil
}

// Fetch returns one page of the full result. Transient failures are retried
// (see ClientOptions.MaxRetries).
func (p *Parsed) Fetch(ctx context.Context, opts FetchOptions) (*Page, error) {
	u, err := p.url()
	if err != nil {
		return nil, err
	}
	if opts.Offset < 0 {
		return nil, fmt.Errorf("dualresp: Fetch: negative offset %d", opts.Offset)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = p.client.pageSize
	}
	var (
		method = http.MethodGet
		body   []byte
	)
	if len(opts.Sort) > 0 {
		method = http.MethodPost
		type sortJSON struct {
			Field string `json:"field"`
			Order string `json:"order"`
		}
		req := struct {
			Offset int64      `json:"offset"`
			Limit  int64      `json:"limit"`
			Sort   []sortJSON `json:"sort"`
		}{Offset: opts.Offset, Limit: limit}
		for _, s := range opts.Sort {
			order := "asc"
			if s.Desc {
				order = "desc"
			}
			req.Sort = append(req.Sort, sortJSON{s.Field, order})
		}
		body, _ = json.Marshal(req)
	} else {
		u += "?offset=" + strconv.FormatInt(opts.Offset, 10) + "&limit=" + strconv.FormatInt(limit, 10)
	}
	var w wirePage
	if err := p.client.doJSON(ctx, method, u, body, &w); err != nil {
		return nil, err
	}
	pg := &Page{
		Data: w.Data, TotalCount: w.TotalCount, ReturnedCount: w.ReturnedCount, Offset: w.Offset,
		Limit: w.Limit, HasNext: w.HasNext, HasPrevious: w.HasPrevious, LimitCapped: w.LimitCapped,
	}
	if w.NextOffset != nil {
		pg.NextOffset = *w.NextOffset
	}
	if int64(len(pg.Data)) != pg.ReturnedCount {
		return nil, &ParseError{What: "page from " + u, Err: fmt.Errorf("returned_count %d but %d rows", pg.ReturnedCount, len(pg.Data))}
	}
	return pg, nil
}

// RowsOptions configures RowsWith.
type RowsOptions struct {
	// PageSize is the number of rows per request; zero means the Client's.
	PageSize int64
	Sort     []SortField
}

// Rows returns the full result's rows, in order, fetched lazily page by
// page. See RowsWith.
func (p *Parsed) Rows(ctx context.Context) iter.Seq2[Row, error] {
	return p.RowsWith(ctx, RowsOptions{})
}

// RowsWith returns the full result's rows, in order, fetched lazily page by
// page. It checks ctx before each request and makes none after the caller
// stops. A page that fails transiently is asked for again from the offset of
// the first row not yet delivered, so no row comes twice and none is lost.
// On a lasting failure it yields the error once and stops.
func (p *Parsed) RowsWith(ctx context.Context, opts RowsOptions) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		_ = p.pages(ctx, opts, func(pg *Page) bool {
			for _, row := range pg.Data {
				if !yield(row, nil) {
					return false
				}
			}
			return true
		}, func(err error) { yield(nil, err) })
	}
}

// pages calls fn for each page until fn returns false or the result ends;
// on error it calls fail and returns the error.
func (p *Parsed) pages(ctx context.Context, opts RowsOptions, fn func(*Page) bool, fail func(error)) error {
	size := opts.PageSize
	if size <= 0 {
		size = p.client.pageSize
	}
	var off int64
	for {
		if err := ctx.Err(); err != nil {
			fail(err)
			return err
		}
		pg, err := p.Fetch(ctx, FetchOptions{Offset: off, Limit: size, Sort: opts.Sort})
		if err != nil {
			fail(err)
			return err
		}
		if !fn(pg) {
			return nil
		}
		off += int64(len(pg.Data))
		if !pg.HasNext {
			return nil
		}
		if len(pg.Data) == 0 {
			err := &ParseError{What: "page", Err: fmt.Errorf("empty page at offset %d claims more rows", off)}
			fail(err)
			return err
		}
	}
}

// FetchAllOptions configures FetchAll.
type FetchAllOptions struct {
	// PageSize is the number of rows per request; zero means the Client's.
	PageSize int64
	Sort     []SortField
	// Progress, when set, is called after each page with the rows fetched
	// so far and the total; fetched never decreases.
	Progress func(fetched, total int64)
}

// FetchAll fetches the whole result into memory. On error it returns the
// rows fetched so far with the error. For large results prefer Rows.
func (p *Parsed) FetchAll(ctx context.Context, opts FetchAllOptions) ([]Row, error) {
	var rows []Row
	var fetched int64
	err := p.pages(ctx, RowsOptions{PageSize: opts.PageSize, Sort: opts.Sort}, func(pg *Page) bool {
		if rows == nil {
			rows = make([]Row, 0, min(pg.TotalCount, 1<<20))
		}
		rows = append(rows, pg.Data...)
		fetched += int64(len(pg.Data))
		if opts.Progress != nil {
			opts.Progress(fetched, pg.TotalCount)
		}
		return true
	}, func(error) {})
	return rows, err
}

// ResourceInfo is a resource's metadata as the REST API reports it.
type ResourceInfo struct {
	ID          string         `json:"id"`
	Status      string         `json:"status"` // "active" or "pinned"
	Name        string         `json:"name"`
	Description string         `json:"description"`
	URI         string         `json:"uri"`
	URL         string         `json:"url"`
	TotalCount  int64          `json:"total_count"`
	Columns     []Column       `json:"columns"`
	Query       Query          `json:"query"`
	Metadata    map[string]any `json:"metadata"`
	CreatedAt   time.Time      `json:"created_at"`
	ExpiresAt   *time.Time     `json:"expires_at"` // nil when pinned
	LastAccess  time.Time      `json:"last_access"`
	AccessCount int64          `json:"access_count"`
	Pinned      bool           `json:"pinned"`
}

// Metadata fetches the resource's metadata (this counts as an access).
func (p *Parsed) Metadata(ctx context.Context) (*ResourceInfo, error) {
	u, err := p.url()
	if err != nil {
		return nil, err
	}
	var in ResourceInfo
	if err := p.client.doJSON(ctx, http.MethodGet, u, nil, &in); err != nil {
		return nil, err
	}
	return &in, nil
}

// Pin makes the resource permanent and returns its metadata.
func (p *Parsed) Pin(ctx context.Context) (*ResourceInfo, error) {
	u, err := p.url()
	if err != nil {
		return nil, err
	}
	var in ResourceInfo
	if err := p.client.doJSON(ctx, http.MethodPut, u, nil, &in); err != nil {
		return nil, err
	}
	if in.ExpiresAt == nil {
		p.ExpiresAt = time.Time{}
	}
	return &in, nil
}

// Delete deletes the resource.
func (p *Parsed) Delete(ctx context.Context) error {
	u, err := p.url()
	if err != nil {
		return err
	}
	return p.client.doJSON(ctx, http.MethodDelete, u, nil, nil)
}

// Export streams the whole result in format ("csv", "ndjson" or "json") to
// w and returns the number of bytes written. Failures before the download
// starts are retried; a download broken midway is an error (not retried).
func (p *Parsed) Export(ctx context.Context, format string, w io.Writer) (int64, error) {
	u, err := p.url()
	if err != nil {
		return 0, err
	}
	u += "/export?format=" + url.QueryEscape(format)
	var n int64
	err = p.client.do(ctx, http.MethodGet, u, nil, func(resp *http.Response) error {
		var cerr error
		n, cerr = io.Copy(w, resp.Body)
		if cerr != nil {
			return &FetchError{Method: http.MethodGet, URL: u, StatusCode: resp.StatusCode, Err: fmt.Errorf("download broken after %d bytes: %w", n, cerr), noRetry: true}
		}
		return nil
	}, true)
	return n, err
}

// doJSON makes a request, retrying transient failures, and decodes a JSON
// answer into out (when not nil).
func (c *Client) doJSON(ctx context.Context, method, u string, body []byte, out any) error {
	return c.do(ctx, method, u, body, func(resp *http.Response) error {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return &FetchError{Method: method, URL: u, Err: fmt.Errorf("reading the answer: %w", err)}
		}
		if out == nil || resp.StatusCode == http.StatusNoContent {
			return nil
		}
		if err := json.Unmarshal(b, out); err != nil {
			return &ParseError{What: "answer of " + method + " " + u, Err: err}
		}
		return nil
	}, false)
}

// do makes a request with retries; read consumes a successful answer's
// body. With stream the per-request timeout covers only the headers.
func (c *Client) do(ctx context.Context, method, u string, body []byte, read func(*http.Response) error, stream bool) error {
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := c.once(ctx, method, u, body, read, stream)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var fe *FetchError
		if !errors.As(err, &fe) || !fe.temporary() || fe.noRetry || attempt >= c.retries {
			return err
		}
		wait := c.backoff << attempt
		wait = min(wait, 10*time.Second)
		wait += time.Duration(rand.Int64N(int64(wait)/4 + 1))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (c *Client) once(ctx context.Context, method, u string, body []byte, read func(*http.Response) error, stream bool) error {
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if c.timeout > 0 {
		// For a download (stream) the timeout covers only the wait for the
		// answer's headers.
		t := time.AfterFunc(c.timeout, func() { cancel(ErrTimeout) })
		defer t.Stop()
		if stream {
			read = stopTimer(t, read)
		}
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(rctx, method, u, rd)
	if err != nil {
		return &FetchError{Method: method, URL: u, Err: err, noRetry: true}
	}
	for k, vs := range c.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.transportError(ctx, rctx, method, u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return readErrorAnswer(method, u, resp)
	}
	if err := read(resp); err != nil {
		var fe *FetchError
		if errors.As(err, &fe) && fe.StatusCode == 0 && ctx.Err() == nil && isTimeout(rctx, err) {
			fe.Err = fmt.Errorf("%w: %v", ErrTimeout, fe.Err)
		}
		return err
	}
	return nil
}

func stopTimer(t *time.Timer, read func(*http.Response) error) func(*http.Response) error {
	return func(resp *http.Response) error {
		t.Stop()
		return read(resp)
	}
}

func isTimeout(rctx context.Context, err error) bool {
	if errors.Is(context.Cause(rctx), ErrTimeout) {
		return true
	}
	var ue *url.Error
	return errors.As(err, &ue) && ue.Timeout()
}

func (c *Client) transportError(ctx, rctx context.Context, method, u string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if isTimeout(rctx, err) {
		return &FetchError{Method: method, URL: u, Err: fmt.Errorf("%w after %s", ErrTimeout, c.timeout)}
	}
	return &FetchError{Method: method, URL: u, Err: err}
}

func readErrorAnswer(method, u string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	fe := &FetchError{Method: method, URL: u, StatusCode: resp.StatusCode}
	var body struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &body) == nil {
		fe.Code, fe.Message = body.Error, body.Message
	}
	if fe.Message == "" {
		fe.Message = strings.TrimSpace(string(b))
		if len(fe.Message) > 200 {
			fe.Message = fe.Message[:200] + "…"
		}
		if fe.Message == "" {
			fe.Message = http.StatusText(resp.StatusCode)
		}
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && fe.Code == "expired":
		fe.Err = ErrExpired
	case resp.StatusCode == http.StatusNotFound:
		fe.Err = ErrNotFound
	}
	return fe
}
