package socrata

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Column is one dataset column as the Views API describes it.
type Column struct {
	Name        string // display name
	FieldName   string // the name to use in SoQL
	DataType    string // Views dataTypeName: text, number, calendar_date, checkbox, point, …; see ColumnType
	Description string
	// Stats are the column's statistics as the Views API caches them
	// (cachedContents), nil when the document has none.
	Stats *ColumnStats
}

// ColumnStats are a column's statistics from the Views API's
// cachedContents: how many rows have a value and how many have none, and
// the most frequent values (the portal keeps up to 20), most frequent
// first.
type ColumnStats struct {
	NonNull, Null int64
	Top           []TopValue
}

// TopValue is one of a column's most frequent values and its row count.
type TopValue struct {
	Value string
	Count int64
}

// TopIsComplete reports whether Top lists every value of the column: the
// portal keeps 20, so a shorter list is all of them.
func (s *ColumnStats) TopIsComplete() bool { return s != nil && len(s.Top) < 20 && s.NonNull > 0 }

// Schema is a dataset's metadata and columns.
type Schema struct {
	ID          string
	Name        string
	Description string
	Category    string
	Columns     []Column // in the dataset's column order; system columns (":id", …) left out
	// RowCount is the dataset's exact row count, from `SELECT count(*)`.
	RowCount  int64
	UpdatedAt time.Time // when the rows last changed (Views rowsUpdatedAt)
}

type viewDocument struct {
	ID            string       `json:"id"`
	Name          string       `json:"name"`
	Description   string       `json:"description"`
	Category      string       `json:"category"`
	RowsUpdatedAt int64        `json:"rowsUpdatedAt"`
	Columns       []viewColumn `json:"columns"`
}

type viewColumn struct {
	Name         string `json:"name"`
	FieldName    string `json:"fieldName"`
	DataTypeName string `json:"dataTypeName"`
	Description  string `json:"description"`
	Position     int    `json:"position"`
	// CachedContents holds numbers as JSON numbers or as strings,
	// depending on the portal's version: both are read.
	CachedContents *struct {
		NonNull flexInt `json:"non_null"`
		Null    flexInt `json:"null"`
		Top     []struct {
			Item  any     `json:"item"`
			Count flexInt `json:"count"`
		} `json:"top"`
	} `json:"cachedContents"`
}

// flexInt is a whole number written as a JSON number or a string.
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("cachedContents: %s is not a number", b)
	}
	*n = flexInt(f)
	return nil
}

// stats reads a column's cachedContents.
func (v viewColumn) stats() *ColumnStats {
	cc := v.CachedContents
	if cc == nil {
		return nil
	}
	st := &ColumnStats{NonNull: int64(cc.NonNull), Null: int64(cc.Null)}
	for _, t := range cc.Top {
		var val string
		switch x := t.Item.(type) {
		case nil:
			continue
		case string:
			val = x
		case float64:
			val = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			val = strconv.FormatBool(x)
		default:
			continue // points, locations: not a value to compare with
		}
		st.Top = append(st.Top, TopValue{Value: val, Count: int64(t.Count)})
	}
	return st
}

// Schema returns a dataset's metadata and columns (Views API
// /api/views/{id}.json) and its exact row count, from a real
// `SELECT count(*) AS count` query on the Resource API.
func (c *Client) Schema(ctx context.Context, datasetID string) (*Schema, error) {
	if err := validID(datasetID); err != nil {
		return nil, err
	}
	// The Views document and the row count are asked for at once: one
	// round trip, not two. The Views document's error, when there is one,
	// is the one reported (it says what is wrong with the dataset).
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type counted struct {
		n   int64
		err error
	}
	countc := make(chan counted, 1)
	go func() {
		n, err := c.Count(cctx, datasetID, "SELECT count(*) AS count")
		countc <- counted{n, err}
	}()
	var doc viewDocument
	if err := c.getJSON(ctx, "views", c.base+"/api/views/"+url.PathEscape(datasetID)+".json", &doc); err != nil {
		cancel()
		<-countc
		return nil, err
	}
	cnt := <-countc
	if cnt.err != nil {
		return nil, fmt.Errorf("socrata: row count of %s: %w", datasetID, cnt.err)
	}
	n := cnt.n
	s := &Schema{ID: datasetID, Name: doc.Name, Description: doc.Description, Category: doc.Category}
	if doc.RowsUpdatedAt > 0 {
		s.UpdatedAt = time.Unix(doc.RowsUpdatedAt, 0).UTC()
	}
	cols := slices.Clone(doc.Columns)
	slices.SortStableFunc(cols, func(a, b viewColumn) int { return cmp.Compare(a.Position, b.Position) })
	for _, col := range cols {
		if col.FieldName == "" || strings.HasPrefix(col.FieldName, ":") {
			continue
		}
		s.Columns = append(s.Columns, Column{Name: col.Name, FieldName: col.FieldName, DataType: col.DataTypeName, Description: col.Description, Stats: col.stats()})
	}
	s.RowCount = n
	return s, nil
}

// Columns returns a dataset's columns as its Views document describes
// them, with their statistics (Column.Stats) where the portal cached some:
// one request, without the row count Schema asks for. System columns
// (":id", …) are left out.
func (c *Client) Columns(ctx context.Context, datasetID string) ([]Column, error) {
	if err := validID(datasetID); err != nil {
		return nil, err
	}
	var doc viewDocument
	if err := c.getJSON(ctx, "views", c.base+"/api/views/"+url.PathEscape(datasetID)+".json", &doc); err != nil {
		return nil, err
	}
	cols := slices.Clone(doc.Columns)
	slices.SortStableFunc(cols, func(a, b viewColumn) int { return cmp.Compare(a.Position, b.Position) })
	var out []Column
	for _, col := range cols {
		if col.FieldName == "" || strings.HasPrefix(col.FieldName, ":") {
			continue
		}
		out = append(out, Column{Name: col.Name, FieldName: col.FieldName, DataType: col.DataTypeName, Description: col.Description, Stats: col.stats()})
	}
	return out, nil
}

// Count runs a count query on the dataset and returns its count: query
// must answer one row whose "count" field is a whole number, as
// `SELECT count(*) AS count` or `<a query> |> SELECT count(*) AS count` do.
// Any other answer is an *APIError (code "invalid_response").
func (c *Client) Count(ctx context.Context, datasetID, query string) (int64, error) {
	res, err := c.Query(ctx, datasetID, query)
	if err != nil {
		return 0, err
	}
	if len(res.Rows) != 1 {
		return 0, c.toError(ctx, "resource", reply{status: 200,
			err: &shapeError{fmt.Sprintf("the count query answered %d rows; want 1", len(res.Rows))}})
	}
	var n int64
	switch v := res.Rows[0]["count"].(type) {
	case string: // "A count(*) query returns the count as a string" (evidence count-as-string)
		n, err = strconv.ParseInt(v, 10, 64)
	case float64:
		n = int64(v)
		if float64(n) != v {
			err = fmt.Errorf("%v is not a whole number", v)
		}
	default:
		err = fmt.Errorf("no count field in %v", res.Rows[0])
	}
	if err != nil || n < 0 {
		return 0, c.toError(ctx, "resource", reply{status: 200,
			err: &shapeError{fmt.Sprintf("the count query's answer is not a row count: %v", res.Rows[0])}})
	}
	return n, nil
}

// ColumnType maps a Views API dataTypeName to the SODA2 type name used in the
// X-SODA2-Types header: calendar_date is floating_timestamp, date is
// fixed_timestamp, checkbox is boolean, percent and stars are number; the
// numeric, geometry, location, url, photo and document types keep their names
// (as real X-SODA2-Types headers show); anything else (html, email, phone,
// unknown names) is text.
func ColumnType(viewsDataType string) string {
	switch t := strings.ToLower(strings.TrimSpace(viewsDataType)); t {
	case "calendar_date", "floating_timestamp":
		return "floating_timestamp"
	case "date", "fixed_timestamp":
		return "fixed_timestamp"
	case "checkbox", "boolean":
		return "boolean"
	case "text", "number", "double", "point", "location", "url",
		"multipolygon", "polygon", "line", "multiline", "multipoint",
		"photo", "document", "blob", "json": // as the real X-SODA2-Types headers name them (phone stays text: where unsure, let through)

		return t
	case "percent", "stars", "money":
		// Money columns are numbers since December 2024 (Socrata's
		// SoQLFunctions marks every money overload "money is not a type
		// we support").
		return "number"
	}
	return "text"
}
