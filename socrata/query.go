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
	// X-SODA2-Data-Out-Of-Date: true header" (find_string id 70838373565).
	Stale bool

	c        *Client
	ctx      context.Context
	endpoint string // "resource" (SODA 2.1) or "query" (SODA3)
	status   int
	body     io.ReadCloser
	scan     *rowScanner
	err      error // sticky: io.EOF after the last row, or the failure
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
	c = c.target() // a portal that moved: its new host's token decides
	// SODA3 with an app token, else (or when the portal has no SODA3)
	// SODA 2.1.
	endpoint := "resource"
	var (
		resp *http.Response
		err  error
	)
	if c.UsesSODA3() {
		endpoint = "query"
		resp, err = c.send(ctx, endpoint, http.MethodPost, c.soda3URL(datasetID), soda3Body(soql))
		var api *APIError
		if errors.As(err, &api) && (api.StatusCode == http.StatusNotFound || api.StatusCode == http.StatusMethodNotAllowed) {
			endpoint = "resource"
			resp, err = c.send(ctx, endpoint, http.MethodGet, c.resourceURL(datasetID, soql), nil)
			if api.StatusCode == http.StatusMethodNotAllowed || err == nil {
				c.noSODA3(ctx, api.StatusCode)
			}
		}
	} else {
		resp, err = c.send(ctx, endpoint, http.MethodGet, c.resourceURL(datasetID, soql), nil)
	}
	if err != nil {
		return nil, err
	}
	return c.newRowStream(ctx, endpoint, resp)
}

// newRowStream reads the head of a query's answer: the rows' stream, or
// the error the portal answered instead.
func (c *Client) newRowStream(ctx context.Context, endpoint string, resp *http.Response) (*RowStream, error) {
	s := &RowStream{
		Fields: headerList(resp.Header.Get("X-SODA2-Fields")),
		Types:  headerList(resp.Header.Get("X-SODA2-Types")),
		Stale:  strings.EqualFold(strings.TrimSpace(resp.Header.Get("X-SODA2-Data-Out-Of-Date")), "true"),
		c:      c, ctx: ctx, endpoint: endpoint, status: resp.StatusCode, body: resp.Body,
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	first, err := firstByte(br)
	if err == nil && first == '[' && !isHTML(resp.Header, nil) {
		s.scan = newRowScanner(br)
		return s, nil
	}
	defer resp.Body.Close()
	if err != nil && err != io.EOF {
		return nil, c.toError(ctx, endpoint, reply{err: err, status: resp.StatusCode})
	}
	// Not an array of rows: an error envelope, HTML, or something else.
	body, rerr := io.ReadAll(io.LimitReader(br, maxErrorBody))
	if rerr != nil {
		return nil, c.toError(ctx, endpoint, reply{err: rerr, status: resp.StatusCode})
	}
	ferr := c.toError(ctx, endpoint, reply{status: resp.StatusCode, header: resp.Header, body: body})
	var api *APIError
	if errors.As(ferr, &api) && api.Code == "query.soql.no-results" {
		s.err = io.EOF
		return s, nil
	}
	return nil, ferr
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
	if s.err != nil {
		return nil, s.err
	}
	raw, err := s.scan.next()
	if errors.Is(err, io.EOF) {
		s.err = io.EOF
		return nil, io.EOF
	}
	if err != nil {
		return nil, s.fail(err)
	}
	return raw, nil
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
