package socrata

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Dataset is one Discovery API result.
type Dataset struct {
	ID          string
	Name        string
	Description string
	Category    string
	Type        string
	UpdatedAt   time.Time
	Permalink   string
	Link        string
	Columns     []string // field names
}

type discoveryResponse struct {
	Results []struct {
		Resource struct {
			ID               string   `json:"id"`
			Name             string   `json:"name"`
			Description      string   `json:"description"`
			Type             string   `json:"type"`
			UpdatedAt        string   `json:"updatedAt"`
			ColumnsFieldName []string `json:"columns_field_name"`
		} `json:"resource"`
		Classification struct {
			Categories     []string `json:"categories"`
			DomainCategory string   `json:"domain_category"`
		} `json:"classification"`
		Permalink string `json:"permalink"`
		Link      string `json:"link"`
	} `json:"results"`
	ResultSetSize int `json:"resultSetSize"`
}

// Search runs a full-text search of the portal's datasets.
func (c *Client) Search(ctx context.Context, query string, limit int) ([]Dataset, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("socrata: Search: empty query")
	}
	v := c.catalogParams(limit)
	v.Set("q", query)
	return c.catalog(ctx, v)
}

// List returns the portal's datasets, most recently updated first, only of
// category when it is not empty.
func (c *Client) List(ctx context.Context, category string, limit int) ([]Dataset, error) {
	v := c.catalogParams(limit)
	if category != "" {
		v.Set("categories", category)
	}
	v.Set("order", "updatedAt")
	return c.catalog(ctx, v)
}

func (c *Client) catalogParams(limit int) url.Values {
	if limit <= 0 {
		limit = 10
	}
	v := url.Values{}
	v.Set("domains", c.domain)
	v.Set("search_context", c.domain)
	v.Set("only", "dataset")
	v.Set("limit", strconv.Itoa(limit))
	return v
}

func (c *Client) catalog(ctx context.Context, v url.Values) ([]Dataset, error) {
	var resp discoveryResponse
	if err := c.getJSON(ctx, "catalog", c.discovery+"/api/catalog/v1?"+v.Encode(), &resp); err != nil {
		return nil, err
	}
	out := make([]Dataset, 0, len(resp.Results))
	for _, r := range resp.Results {
		d := Dataset{
			ID: r.Resource.ID, Name: r.Resource.Name, Description: r.Resource.Description, Type: r.Resource.Type,
			Permalink: r.Permalink, Link: r.Link, Columns: r.Resource.ColumnsFieldName,
			Category: r.Classification.DomainCategory,
		}
		if d.Category == "" && len(r.Classification.Categories) > 0 {
			d.Category = r.Classification.Categories[0]
		}
		if t, err := time.Parse(time.RFC3339, r.Resource.UpdatedAt); err == nil {
			d.UpdatedAt = t
		}
		out = append(out, d)
	}
	return out, nil
}

// Column is one dataset column as the Views API describes it.
type Column struct {
	Name        string // display name
	FieldName   string // the name to use in SoQL
	DataType    string // Views dataTypeName: text, number, calendar_date, checkbox, point, …
	Description string
}

// Schema is a dataset's metadata and columns.
type Schema struct {
	ID          string
	Name        string
	Description string
	Category    string
	Columns     []Column
	// RowCount is the dataset's exact row count, from `SELECT count(*)`.
	RowCount  int64
	UpdatedAt time.Time
}

type viewDocument struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Description   string `json:"description"`
	Category      string `json:"category"`
	RowsUpdatedAt int64  `json:"rowsUpdatedAt"`
	Columns       []struct {
		Name         string `json:"name"`
		FieldName    string `json:"fieldName"`
		DataTypeName string `json:"dataTypeName"`
		Description  string `json:"description"`
		Position     int    `json:"position"`
	} `json:"columns"`
}

// Schema returns a dataset's metadata and columns (Views API) and its exact
// row count (a count(*) query; not a timestamp).
func (c *Client) Schema(ctx context.Context, datasetID string) (*Schema, error) {
	var doc viewDocument
	if err := c.getJSON(ctx, "views", c.base+"/api/views/"+url.PathEscape(datasetID)+".json", &doc); err != nil {
		return nil, err
	}
	s := &Schema{ID: doc.ID, Name: doc.Name, Description: doc.Description, Category: doc.Category}
	if s.ID == "" {
		s.ID = datasetID
	}
	if doc.RowsUpdatedAt > 0 {
		s.UpdatedAt = time.Unix(doc.RowsUpdatedAt, 0).UTC()
	}
	for _, col := range doc.Columns {
		if strings.HasPrefix(col.FieldName, ":") || col.DataTypeName == "meta_data" {
			continue
		}
		s.Columns = append(s.Columns, Column{Name: col.Name, FieldName: col.FieldName, DataType: col.DataTypeName, Description: col.Description})
	}
	res, err := c.Query(ctx, datasetID, "SELECT count(*) AS count")
	if err != nil {
		return nil, fmt.Errorf("socrata: row count of %s: %w", datasetID, err)
	}
	if len(res.Rows) == 1 {
		switch v := res.Rows[0]["count"].(type) {
		case string:
			s.RowCount, _ = strconv.ParseInt(v, 10, 64)
		case float64:
			s.RowCount = int64(v)
		}
	}
	return s, nil
}

// Row is one result row as the Resource API encodes it: scalars as strings,
// booleans as booleans, points as GeoJSON objects; null fields are absent.
type Row = map[string]any

// Result is a whole query result.
type Result struct {
	Rows   []Row
	Fields []string // X-SODA2-Fields
	Types  []string // X-SODA2-Types
}

// Query runs one SoQL query (LIMIT and OFFSET go inside the SoQL: Socrata
// rejects $query together with $limit or $offset) and returns all its rows.
// Without a LIMIT, Socrata returns at most 1,000 rows.
func (c *Client) Query(ctx context.Context, datasetID, soql string) (*Result, error) {
	s, err := c.QueryStream(ctx, datasetID, soql)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	res := &Result{Fields: s.Fields, Types: s.Types, Rows: []Row{}}
	for {
		row, err := s.Next()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, row)
	}
}

// RowStream decodes a query's rows one at a time. Fields and Types are known
// before the first row. Close it when done.
type RowStream struct {
	Fields []string
	Types  []string

	body    io.ReadCloser
	dec     *json.Decoder
	started bool
	done    bool
}

// QueryStream runs one SoQL query and returns a stream of its rows, decoded
// one at a time instead of holding the whole page.
func (c *Client) QueryStream(ctx context.Context, datasetID, soql string) (*RowStream, error) {
	u := c.base + "/resource/" + url.PathEscape(datasetID) + ".json?" + url.Values{"$query": {soql}}.Encode()
	resp, err := c.get(ctx, "resource", u)
	if err != nil {
		return nil, err
	}
	if err := checkJSON("resource", resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	s := &RowStream{body: resp.Body, dec: json.NewDecoder(resp.Body)}
	s.Fields = headerList(resp.Header.Get("X-SODA2-Fields"))
	s.Types = headerList(resp.Header.Get("X-SODA2-Types"))
	return s, nil
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
// or io.EOF after the last row.
func (s *RowStream) NextRaw() (json.RawMessage, error) {
	if s.done {
		return nil, io.EOF
	}
	if !s.started {
		tok, err := s.dec.Token()
		if err != nil {
			return nil, s.fail(err)
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return nil, s.fail(fmt.Errorf("expected a JSON array of rows, got %v", tok))
		}
		s.started = true
	}
	if !s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return nil, s.fail(err)
		}
		if d, ok := tok.(json.Delim); !ok || d != ']' {
			return nil, s.fail(fmt.Errorf("expected the end of the row array, got %v", tok))
		}
		s.done = true
		return nil, io.EOF
	}
	var raw json.RawMessage
	if err := s.dec.Decode(&raw); err != nil {
		return nil, s.fail(err)
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, s.fail(errors.New("a row is not a JSON object"))
	}
	return raw, nil
}

// Next returns the next row decoded, or io.EOF after the last row.
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

func (s *RowStream) fail(err error) error {
	s.done = true
	if isTimeout(err) {
		return &TimeoutError{Endpoint: "resource", Err: err}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &APIError{Endpoint: "resource", StatusCode: 200, Code: "truncated_response", Message: "the response ended before the last row (connection cut); retry the request"}
	}
	return &APIError{Endpoint: "resource", StatusCode: 200, Code: "invalid_response", Message: "the rows could not be read: " + err.Error()}
}

// Close releases the response.
func (s *RowStream) Close() error {
	s.done = true
	return s.body.Close()
}

// ColumnType maps a Views API dataTypeName to the SODA2 type name of the
// X-SODA2-Types header.
func ColumnType(viewsDataType string) string {
	switch viewsDataType {
	case "calendar_date":
		return "floating_timestamp"
	case "date":
		return "fixed_timestamp"
	case "checkbox":
		return "boolean"
	case "text", "number", "double", "money", "point", "location", "url", "multipolygon", "polygon",
		"line", "multiline", "multipoint", "json", "blob", "photo", "document":
		return viewsDataType
	case "percent", "stars":
		return "number"
	case "html", "email", "phone", "drop_down_list", "flag":
		return "text"
	}
	return "text"
}
