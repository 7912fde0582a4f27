package socrata

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"strings"
)

// Row is one result row as the Resource API encodes it: scalars as strings,
// booleans as booleans, points as GeoJSON objects; null fields are absent.
type Row = map[string]any

// Result is a whole query result.
type Result struct {
	Rows   []Row
	Fields []string // X-SODA2-Fields: the result's field names
	Types  []string // X-SODA2-Types: their SODA2 types (text, number, floating_timestamp, boolean, point, …)
	// Stale is X-SODA2-Data-Out-Of-Date: true, the replica that answered
	// says its data is behind the dataset's.
	Stale bool
}

// Query runs one SoQL query and returns all its rows. The SoQL goes in a
// single $query parameter (SODA 2.1) or the query of a SODA3 request body
// (with an app token; see UsesSODA3), so LIMIT and OFFSET belong inside it
// (Socrata rejects $query together with $limit or $offset). Without a
// LIMIT, Socrata returns at most 1,000 rows.
func (c *Client) Query(ctx context.Context, datasetID, soql string) (*Result, error) {
	s, err := c.QueryStream(ctx, datasetID, soql)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	res := &Result{Fields: s.Fields, Types: s.Types, Stale: s.Stale, Rows: []Row{}}
	for {
		row, err := s.Next()
		if err == io.EOF {
			return res, nil
		}
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, row)
	}
}

// RowStream reads a query's rows one at a time from the response body,
// without holding the whole page. Fields and Types are known before the
// first row. Close it when done.
type RowStream struct {
	Fields []string // X-SODA2-Fields
	Types  []string // X-SODA2-Types
	// Stale is X-SODA2-Data-Out-Of-Date: true: "Stale replicas send the
	// X-SODA2-Data-Out-Of-Date: true header" (evidence stale-replica-header).
	Stale bool

	c        *Client
	ctx      context.Context
	endpoint string // "resource" (SODA 2.1) or "query" (SODA3)
	status   int
	body     io.ReadCloser
	scan     *rowScanner
	err      error        // sticky: io.EOF after the last row, or the failure
	soda3    *soda3Paging // a SODA3 query's pages; nil on SODA 2.1
}

// QueryStream runs one SoQL query (as Query does) and returns a stream of its
// rows. Errors the portal answers before the first row (including an error
// envelope served with status 200) are returned here; a body cut off or
// broken later comes from Next or NextRaw. Socrata's
// "query.soql.no-results" answer is an empty stream.
func (c *Client) QueryStream(ctx context.Context, datasetID, soql string) (*RowStream, error) {
	if err := validID(datasetID); err != nil {
		return nil, err
	}
	if strings.TrimSpace(soql) == "" {
		return nil, errors.New("socrata: soql is empty; want a query such as \"SELECT * LIMIT 10\"")
	}
	// SODA3 with an app token, else (or when the portal has no SODA3)
	// SODA 2.1.
	if c.UsesSODA3() {
		return c.querySODA3(ctx, datasetID, soql, true)
	}
	resp, err := c.send(ctx, "resource", http.MethodGet, c.resourceURL(datasetID, soql), nil)
	if soda2Gone(err) {
		var api *APIError
		errors.As(err, &api)
		if c.token == "" {
			return nil, &TokenRequiredError{Domain: c.domain, Err: api}
		}
		c.useSODA3Again(ctx, api.StatusCode)
		return c.querySODA3(ctx, datasetID, soql, false)
	}
	if err != nil {
		return nil, err
	}
	s := c.newRowStream(ctx, "resource", resp)
	return s, s.open(resp)
}

// querySODA3 sends soql to SODA3 as pages of at most c.soda3Page rows
// (see soda3Paging) and returns the stream of its rows. With fallback, a
// portal that answers 404 or 405 gets the query on SODA 2.1.
func (c *Client) querySODA3(ctx context.Context, datasetID, soql string, fallback bool) (*RowStream, error) {
	want := soda3PageSize(soql)
	p := &soda3Paging{datasetID: datasetID, soql: soql, want: want, size: min(want, c.soda3Page), number: 1}
	resp, err := c.send(ctx, "query", http.MethodPost, c.soda3URL(datasetID), soda3Body(soql, p.number, p.size))
	var api *APIError
	if fallback && errors.As(err, &api) && (api.StatusCode == http.StatusNotFound || api.StatusCode == http.StatusMethodNotAllowed) {
		resp, err = c.send(ctx, "resource", http.MethodGet, c.resourceURL(datasetID, soql), nil)
		if soda2Gone(err) {
			return nil, api // SODA3's answer, as SODA 2.1 is gone
		}
		if api.StatusCode == http.StatusMethodNotAllowed || err == nil {
			c.noSODA3(ctx, api.StatusCode)
		}
		if err != nil {
			return nil, err
		}
		s := c.newRowStream(ctx, "resource", resp)
		return s, s.open(resp)
	}
	if err != nil {
		return nil, err
	}
	s := c.newRowStream(ctx, "query", resp)
	s.soda3 = p
	if err := s.open(resp); err != nil {
		return nil, err
	}
	if err := s.mapFields(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// newRowStream returns the stream of the rows of resp, whose head open
// reads.
func (c *Client) newRowStream(ctx context.Context, endpoint string, resp *http.Response) *RowStream {
	return &RowStream{
		Fields: headerList(resp.Header.Get("X-SODA2-Fields")),
		Types:  headerList(resp.Header.Get("X-SODA2-Types")),
		Stale:  strings.EqualFold(strings.TrimSpace(resp.Header.Get("X-SODA2-Data-Out-Of-Date")), "true"),
		c:      c, ctx: ctx, endpoint: endpoint,
	}
}

// open reads the head of an answer with rows: the rows' stream, or the
// error the portal answered instead (an error envelope or a message object
// served with 200 too: never an empty result). It closes resp's body on
// error.
func (s *RowStream) open(resp *http.Response) error {
	c, ctx, endpoint := s.c, s.ctx, s.endpoint
	s.status, s.body = resp.StatusCode, resp.Body
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	first, err := firstByte(br)
	if err == nil && first == '[' && !isHTML(resp.Header, nil) {
		s.scan = newRowScanner(br)
		return nil
	}
	defer resp.Body.Close()
	s.body = nil
	if err != nil && err != io.EOF {
		return c.toError(ctx, endpoint, reply{err: err, status: resp.StatusCode})
	}
	// Not an array of rows: an error envelope, a message object, HTML, or
	// something else.
	body, rerr := io.ReadAll(io.LimitReader(br, maxErrorBody))
	if rerr != nil {
		return c.toError(ctx, endpoint, reply{err: rerr, status: resp.StatusCode})
	}
	ferr := c.toError(ctx, endpoint, reply{status: resp.StatusCode, header: resp.Header, body: body})
	var api *APIError
	if errors.As(ferr, &api) && api.Code == "query.soql.no-results" {
		s.err = io.EOF
		return nil
	}
	return ferr
}

// nextPage asks SODA3 for the page after the one read, on the same
// stream: the previous answer is closed first, so that the request takes
// its turn among the client's bounded requests.
func (s *RowStream) nextPage() error {
	p := s.soda3
	if s.body != nil {
		s.body.Close()
		s.body = nil
	}
	p.number++
	p.inPage = 0
	resp, err := s.c.send(s.ctx, "query", http.MethodPost, s.c.soda3URL(p.datasetID), soda3Body(p.soql, p.number, p.size))
	if err != nil {
		return err
	}
	if err := s.open(resp); err != nil {
		return err
	}
	if s.err == io.EOF { // "no results": the result ended
		return io.EOF
	}
	return nil
}

// firstByte returns the first byte that is not JSON white space, unread.
func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return b, br.UnreadByte()
	}
}

// headerList decodes an X-SODA2-* header: a JSON array of strings.
func headerList(v string) []string {
	if v == "" {
		return nil
	}
	var out []string
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil
	}
	return out
}

// NextRaw returns the next row's JSON bytes (a fresh slice the caller owns),
// or io.EOF after the last row. After an error it returns that error again.
// The bytes are the portal's, passed through without decoding: checked to be
// a valid JSON object and made one line (white space between tokens is
// dropped), so they can go straight into NDJSON.
func (s *RowStream) NextRaw() (json.RawMessage, error) {
	for {
		if s.err != nil {
			return nil, s.err
		}
		raw, err := s.scan.next()
		p := s.soda3
		if errors.Is(err, io.EOF) && p != nil && p.more() {
			// A full page, and the query wants more rows: the next page.
			if err := s.nextPage(); err != nil {
				s.err = err
				return nil, err
			}
			continue
		}
		if errors.Is(err, io.EOF) {
			s.err = io.EOF
			return nil, io.EOF
		}
		if err != nil {
			return nil, s.fail(err)
		}
		if p == nil {
			return raw, nil
		}
		p.inPage++
		p.read++
		if !p.checked {
			p.checked = true
			if err := s.mapKeys(raw); err != nil {
				s.err = err
				return nil, err
			}
		}
		if p.keys == nil {
			return raw, nil
		}
		raw, err = renameKeys(raw, p.keys)
		if err != nil {
			return nil, s.fail(err)
		}
		return raw, nil
	}
}

// Next returns the next row, decoded, or io.EOF after the last row.
func (s *RowStream) Next() (Row, error) {
	raw, err := s.NextRaw()
	if err != nil {
		return nil, err
	}
	var row Row
	if err := json.Unmarshal(raw, &row); err != nil {
		return nil, s.fail(err)
	}
	return row, nil
}

// All returns the rows as an iterator. It yields an error once and stops;
// the end of the rows is not an error. It does not close the stream.
func (s *RowStream) All() iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		for {
			row, err := s.Next()
			if err == io.EOF {
				return
			}
			if !yield(row, err) || err != nil {
				return
			}
		}
	}
}

func (s *RowStream) fail(err error) error {
	s.err = s.c.toError(s.ctx, s.endpoint, reply{err: err, status: s.status})
	return s.err
}

// Close releases the response. It is safe to call more than once.
func (s *RowStream) Close() error {
	if s.err == nil {
		s.err = errors.New("socrata: the row stream is closed")
	}
	if s.body == nil {
		return nil
	}
	err := s.body.Close()
	s.body = nil
	return err
}
