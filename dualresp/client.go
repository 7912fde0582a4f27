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
	// the response names: BaseURL + "/resources/" + id, or, for a keyed
	// link (BASE/k/KEY/resources/ID, see Options.LinkKey), BaseURL +
	// "/k/KEY/resources/" + id. Use it when the server's public URL is not
	// reachable from here. It also resolves responses that carry only a
	// resource://id URI; for a server with keyed links, give it the key
	// then: BASE/k/KEY, which serves that one resource.
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

// ParseContent reads a dual response from a tool result's parts with a
// default Client; see Client.ParseContent. The SDK adapters call it.
func ParseContent(structured any, texts ...string) *Parsed {
	return defaultClient.ParseContent(structured, texts...)
}

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
	// Name and MIMEType are the resource's, from the structured content or,
	// when it leaves them out (this package's server does), from the tool
	// result's resource_link.
	Name     string
	MIMEType string
	// Columns are the result's columns. This package's server sends their
	// names only; Metadata(ctx) has their types.
	Columns    []Column
	ExpiresAt  time.Time // zero when unknown or pinned
	ExecutedAt time.Time // zero when unknown
	// Meta is the response's metadata object as given (numbers as
	// json.Number).
	Meta map[string]any

	id     string
	client *Client
}

// Parse reads a dual response from v: structured content (a *Structured,
// a map[string]any or their JSON), the JSON ([]byte,
// json.RawMessage or string) of a tool result or of a JSON-RPC response
// holding one, or any other value whose JSON encoding is one of these, such
// as an MCP SDK's tool result (the adapters dualresp/mcpgo and
// dualresp/gosdk read their SDK's tool results without encoding them). It
// accepts this package's shape and the "Building a Dual Response MCP
// Server" article's (resource.url, results, metadata.total_count). It
// returns nil when v is not a dual response.
func (c *Client) Parse(v any) *Parsed {
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		return c.parseJSON(x, 0)
	case json.RawMessage:
		return c.parseJSON(x, 0)
	case string:
		return c.parseJSON([]byte(x), 0)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return c.parseJSON(b, 0)
}

// ParseContent reads a dual response from the parts of a tool result, as
// an SDK adapter has them: its structured content (any JSON-encodable
// value, or nil) and the texts of its text contents. The structured content
// is tried first, then each text in order (as JSON). It returns nil when
// none is a dual response.
func (c *Client) ParseContent(structured any, texts ...string) *Parsed {
	if structured != nil {
		if p := c.Parse(structured); p != nil {
			return p
		}
	}
	for _, t := range texts {
		if p := c.parseJSON([]byte(t), 1); p != nil {
			return p
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
			content, _ := m["content"].([]any)
			for _, item := range content {
				if im, _ := item.(map[string]any); im["type"] == "resource_link" {
					name, _ := im["name"].(string)
					mime, _ := im["mimeType"].(string)
					p.NameFromLink(name, mime)
					break
				}
			}
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
	if _, ok := m["resource"].(map[string]any); !ok {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	var st Structured
	if err := json.Unmarshal(b, &st); err != nil {
		return nil
	}
	// Results absent and present are told apart: the article's shape may
	// omit them.
	if _, ok := m["results"]; ok && st.Results == nil {
		st.Results = []json.RawMessage{}
	}
	p := c.parseStructuredValue(&st)
	if p != nil {
		p.Meta, _ = m["metadata"].(map[string]any) // as given
	}
	return p
}

// parseStructuredValue builds a Parsed from structured content.
func (c *Client) parseStructuredValue(st *Structured) *Parsed {
	res := st.Resource
	if res.URI == "" && res.URL == "" {
		return nil
	}
	meta := st.Metadata
	hasResults := st.Results != nil
	if (!hasResults && !meta.hasTotal) || meta.TotalCount < 0 {
		return nil // not a dual response (a negative total is never one)
	}
	p := &Parsed{client: c, ResourceURI: res.URI, Summary: st.Summary, Name: res.Name, MIMEType: res.MIMEType}
	for _, r := range st.Results {
		p.Sample = append(p.Sample, Row(r))
	}
	if meta.hasTotal {
		p.TotalCount = meta.TotalCount
	} else {
		p.TotalCount = int64(len(p.Sample))
	}
	if meta.hasTruncated {
		p.Truncated = meta.Truncated
	} else {
		p.Truncated = int64(len(p.Sample)) < p.TotalCount
	}
	p.Columns = meta.Columns
	if meta.ExpiresAt != nil {
		p.ExpiresAt = *meta.ExpiresAt
	}
	p.ExecutedAt = meta.ExecutedAt

	if id, err := ResourceID(res.URI); err == nil {
		p.id = id
	} else if id, err := ResourceID(res.URL); err == nil {
		p.id = id
	}
	if p.ResourceURI == "" && p.id != "" {
		p.ResourceURI = "resource://" + p.id
	}
	switch {
	case c.base != "" && p.id != "":
		// A keyed link's key (/k/KEY, Options.LinkKey) is kept, unless the
		// BaseURL ends with it already.
		key := linkKeyPath(res.URL)
		if strings.HasSuffix(c.base, key) {
			key = ""
		}
		p.ResourceURL = c.base + key + "/resources/" + url.PathEscape(p.id)
	case res.URL != "":
		p.ResourceURL = res.URL
	}
	return p
}

// linkKeyPath returns the "/k/KEY" of a keyed link (Options.LinkKey:
// BASE/k/KEY/resources/ID, or its /export), or "" when ref is not one.
func linkKeyPath(ref string) string {
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	path = strings.TrimSuffix(path, "/export")
	i := strings.LastIndex(path, "/resources/")
	if i < 0 {
		return ""
	}
	head := path[:i]
	j := strings.LastIndex(head, "/k/")
	if j < 0 || !safeSegment(head[j+len("/k/"):]) {
		return ""
	}
	return head[j:]
}

// NameFromLink sets Name and MIMEType from a resource_link of the tool
// result where the structured content left them out. The SDK adapters call
// it; Parse does it for tool results given as JSON.
func (p *Parsed) NameFromLink(name, mimeType string) {
	if p.Name == "" {
		p.Name = name
	}
	if p.MIMEType == "" {
		p.MIMEType = mimeType
	}
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
	var pg *Page
	if err := p.client.doJSON(ctx, method, u, body, &pg); err != nil {
		return nil, err
	}
	if pg == nil {
		return nil, &ParseError{What: "page from " + u, Err: errors.New("null answer")}
	}
	if pg.Data == nil {
		pg.Data = []Row{}
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
	// Offset is the first row: the rows before it are skipped (a reader
	// that resumes passes the rows it has).
	Offset int64
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
	off := max(opts.Offset, 0)
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

// Export streams the whole result in format ("csv", "ndjson", "json",
// "parquet", "geojson" or "xlsx") to w and returns the number of bytes written: ExportWith with
// the default options, so a download broken midway is resumed from its
// last complete row.
func (p *Parsed) Export(ctx context.Context, format string, w io.Writer) (int64, error) {
	res, err := p.ExportWith(ctx, w, ExportOptions{Format: format})
	return res.Bytes, err
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
