package dualresp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// This file declares what goes over the wire, once for every side: the REST
// handler writes these types, the Client reads them, and adapters and
// applications (an MCP resources/read handler, for example) reuse them.

// ResourceInfo is a resource's metadata: the answer of GET /resources/{id}
// (and of PUT, which pins).
type ResourceInfo struct {
	ID          string         `json:"id"`
	Status      string         `json:"status"` // "active" or "pinned"
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	URI         string         `json:"uri"`
	URL         string         `json:"url"`
	TotalCount  int64          `json:"total_count"`
	Columns     []Column       `json:"columns"`
	Query       Query          `json:"query"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	CreatedAt   time.Time      `json:"created_at"`
	ExpiresAt   *time.Time     `json:"expires_at"` // nil when pinned
	LastAccess  time.Time      `json:"last_access"`
	AccessCount int64          `json:"access_count"`
	Pinned      bool           `json:"pinned"`
}

// Info returns the metadata of the record r as the REST API reports it.
func (s *Server) Info(r *Record) ResourceInfo {
	in := ResourceInfo{
		ID: r.ID, Status: "active", Name: r.Name, Description: r.Description,
		URI: s.URI(r.ID), URL: s.URL(r.ID), TotalCount: r.TotalCount, Columns: r.Columns,
		Query: r.Query, Metadata: r.Metadata, CreatedAt: r.CreatedAt.UTC(),
		LastAccess: r.LastAccess.UTC(), AccessCount: r.AccessCount, Pinned: r.Pinned,
	}
	if in.Columns == nil {
		in.Columns = []Column{}
	}
	if r.Pinned {
		in.Status = "pinned"
	} else if !r.ExpiresAt.IsZero() {
		t := r.ExpiresAt.UTC()
		in.ExpiresAt = &t
	}
	return in
}

// Page is one page of a full result: the answer of GET /resources/{id}?offset=&limit=
// and of POST /resources/{id}.
type Page struct {
	// Data holds the rows, each a JSON object as the Plan gave it. Data
	// is the first field: the REST handler writes the rows as they are and
	// the other fields after them (see appendPage).
	Data          []Row `json:"data"`
	TotalCount    int64 `json:"total_count"`
	ReturnedCount int64 `json:"returned_count"`
	Offset        int64 `json:"offset"`
	Limit         int64 `json:"limit"`
	HasNext       bool  `json:"has_next"`
	// NextOffset is the offset of the next page; nil when !HasNext.
	NextOffset  *int64 `json:"next_offset"`
	HasPrevious bool   `json:"has_previous"`
	// LimitCapped reports that the server lowered the requested limit
	// (RequestedLimit) to its MaxPageSize.
	LimitCapped    bool  `json:"limit_capped,omitempty"`
	RequestedLimit int64 `json:"requested_limit,omitempty"`
}

// pageDataPrefix is how the JSON encoding of a Page starts.
const pageDataPrefix = `{"data":[`

// appendPage appends the JSON encoding of p to buf without re-encoding its
// rows: the fields other than Data come from encoding p with no rows, and
// the rows (already checked to be valid JSON) are spliced in as they are.
// The result is what json.Marshal(p) gives for compact rows.
func appendPage(buf *bytes.Buffer, p *Page) error {
	rest := *p
	rest.Data = []Row{}
	tail, err := json.Marshal(&rest)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(tail, []byte(pageDataPrefix+"]")) {
		return fmt.Errorf("dualresp: a Page does not encode with data first: %.40s", tail)
	}
	buf.WriteString(pageDataPrefix)
	for i, row := range p.Data {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(row)
	}
	buf.Write(tail[len(pageDataPrefix):])
	return nil
}

// Structured is the structured content of a dual response: the shape of the
// mcp-dual-response specification, plus resource.url as in the "Building a
// Dual Response MCP Server" article.
//
//	{"summary": "847 rows match. 15 sample rows follow. Download: http://…/resources/9f3c…/export?format=csv (or format=ndjson, json, parquet).",
//	 "results": [{…}, …],
//	 "resource": {"uri": "resource://9f3c…", "url": "http://…/resources/9f3c…"},
//	 "metadata": {"total_count": 847, "sample_count": 15, "truncated": true,
//	              "columns": ["applicant", …], "expires_at": "…", …caller metadata}}
//
// The model's payload says each thing once: the resource's name is the
// resource_link's, and the columns are names (their types are in the
// REST metadata and in the dataset's schema).
//
// OutputSchema is its JSON schema.
type Structured struct {
	Summary string `json:"summary"`
	// Results are the sample rows, each a JSON object.
	Results  []json.RawMessage `json:"results"`
	Resource ResourceLink      `json:"resource"`
	Metadata Metadata          `json:"metadata"`
	// Hints are the answer's advice for the next call (Response.WithHints),
	// each a JSON object; absent without any.
	Hints []json.RawMessage `json:"hints,omitempty"`
}

// ResourceLink points to a full result. In the structured content it is
// the "resource" object (uri, url; Name when read from other servers); as MCP content it is a
// resource_link (uri, name, description, mimeType, size), which adapters
// build from Response.Link.
type ResourceLink struct {
	URI         string `json:"uri"`
	URL         string `json:"url,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// MIMEType is the pages' MIME type; the structured content leaves it
	// out (it is always MIMEType), the resource_link says it.
	MIMEType string `json:"mimeType,omitempty"`
	// Size is the size of the full result in bytes, when known.
	Size *int64 `json:"size,omitempty"`
}

// Metadata is the "metadata" object of the structured content: dualresp's
// own fields plus the caller's (Spec.Metadata) in one JSON object. On
// output dualresp's fields win over the caller's keys of the same name.
type Metadata struct {
	TotalCount  int64 `json:"total_count"`
	SampleCount int   `json:"sample_count"`
	Truncated   bool  `json:"truncated"`
	// Columns are the result's columns; on the wire, their names.
	Columns []Column `json:"columns"`
	// ExecutedAt is when the response was created (whole seconds, UTC),
	// when the server says; dualresp leaves it out of the model's payload
	// (a model does not need it on every call; the REST metadata has
	// created_at).
	ExecutedAt time.Time `json:"executed_at,omitzero"`
	// ExpiresAt is when the resource expires; nil when pinned.
	ExpiresAt *time.Time `json:"expires_at"`
	// ValuesTruncated: long values were cut to fit the byte budget.
	ValuesTruncated bool `json:"values_truncated,omitempty"`
	// SampleReduced: sample rows were dropped to fit the byte budget.
	SampleReduced bool `json:"sample_reduced,omitempty"`
	// ColumnsTruncated: the column list was cut; ColumnCount is the full
	// number of columns.
	ColumnsTruncated bool `json:"columns_truncated,omitempty"`
	ColumnCount      int  `json:"column_count,omitempty"`
	// MetadataTruncated: the caller's metadata was dropped to fit.
	MetadataTruncated bool `json:"metadata_truncated,omitempty"`
	// Extra holds the caller's metadata keys (numbers as json.Number when
	// read back).
	Extra map[string]any `json:"-"`

	// Set by UnmarshalJSON: total_count and truncated were present.
	hasTotal, hasTruncated bool
}

// metadataFields is Metadata without its methods, for encoding, with the
// columns as their names.
type metadataFields struct {
	Columns []string `json:"columns"`
	fields
}

// fields is Metadata without its methods.
type fields Metadata

// MarshalJSON encodes the caller's keys and dualresp's fields as one object;
// the columns are their names (UnmarshalJSON reads names or objects).
func (m Metadata) MarshalJSON() ([]byte, error) {
	names := make([]string, len(m.Columns))
	for i, c := range m.Columns {
		names[i] = c.Name
	}
	own, err := json.Marshal(metadataFields{Columns: names, fields: fields(m)})
	if err != nil {
		return nil, err
	}
	if len(m.Extra) == 0 {
		return own, nil
	}
	var merged map[string]json.RawMessage
	if err := json.Unmarshal(own, &merged); err != nil {
		return nil, err
	}
	for k, v := range m.Extra {
		if _, ok := merged[k]; ok {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("metadata %q: %w", k, err)
		}
		merged[k] = b
	}
	return json.Marshal(merged)
}

// UnmarshalJSON reads a metadata object leniently, as written by dualresp or
// by other dual response servers: counts may be strings, columns may be
// names or {name, type|dataType} objects, and unknown keys go to Extra.
func (m *Metadata) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var all map[string]any
	if err := dec.Decode(&all); err != nil {
		return err
	}
	*m = Metadata{}
	take := func(k string) (any, bool) {
		v, ok := all[k]
		delete(all, k)
		return v, ok
	}
	if v, ok := take("total_count"); ok {
		m.TotalCount, m.hasTotal = toInt64(v)
	}
	if v, ok := take("sample_count"); ok {
		n, _ := toInt64(v)
		m.SampleCount = int(n)
	}
	if v, ok := take("truncated"); ok {
		m.Truncated, m.hasTruncated = v.(bool)
	}
	if v, ok := take("columns"); ok {
		cols, _ := v.([]any)
		for _, col := range cols {
			switch cv := col.(type) {
			case string:
				m.Columns = append(m.Columns, Column{Name: cv})
			case map[string]any:
				name, _ := cv["name"].(string)
				typ, _ := cv["type"].(string)
				if typ == "" {
					typ, _ = cv["dataType"].(string)
				}
				m.Columns = append(m.Columns, Column{Name: name, Type: typ})
			}
		}
	}
	if v, ok := take("executed_at"); ok {
		m.ExecutedAt = parseTime(v)
	}
	if v, ok := take("expires_at"); ok {
		if t := parseTime(v); !t.IsZero() {
			m.ExpiresAt = &t
		}
	}
	for k, p := range map[string]*bool{
		"values_truncated": &m.ValuesTruncated, "sample_reduced": &m.SampleReduced,
		"columns_truncated": &m.ColumnsTruncated, "metadata_truncated": &m.MetadataTruncated,
	} {
		if v, ok := take(k); ok {
			*p, _ = v.(bool)
		}
	}
	if v, ok := take("column_count"); ok {
		n, _ := toInt64(v)
		m.ColumnCount = int(n)
	}
	if len(all) > 0 {
		m.Extra = all
	}
	return nil
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

// OutputSchema is the JSON schema (draft 2020-12) of Structured, for the
// outputSchema of a tool that answers with a dual response. It states what
// a client may rely on (the four parts, the resource's uri and url, the
// metadata's counts and columns) and no more: a host sends it to the model
// with every conversation, and Structured documents the fields. Its
// metadata object allows the caller's extra keys.
var OutputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"summary":{"type":"string"},"results":{"type":"array","items":{"type":"object"}},` +
	`"resource":{"type":"object","required":["uri","url"]},` +
	`"metadata":{"type":"object","required":["total_count","sample_count","truncated","columns"]}},` +
	`"required":["summary","results","resource","metadata"]}`)

// ResourceID returns the resource id a reference names. A reference is a
// resource URI ("resource://ID"), a REST URL whose path is
// "…/resources/ID", optionally followed by "/export", and a query (other
// servers' URLs name the id in their last path segment), or a bare id. A
// bare id must look like the ids this package makes (32 hex digits, any
// case); inside a URI or URL any path segment of letters, digits and
// "-._~" is taken as the id, so that links of other dual response servers
// resolve too. Ids of this package come back in lower case. It is the one
// place ids are read from references: the Client and applications use it.
func ResourceID(ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	var id string
	switch {
	case strings.HasPrefix(ref, "resource://"):
		id = strings.TrimPrefix(ref, "resource://")
		id, _, _ = strings.Cut(id, "?")
		id, _, _ = strings.Cut(id, "#")
		id = strings.TrimSuffix(id, "/")
	case strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://"):
		u, err := url.Parse(ref)
		if err != nil {
			return "", fmt.Errorf("dualresp: result %q is not a valid URL: %v", ref, err)
		}
		path := strings.TrimSuffix(u.Path, "/")
		if i := strings.LastIndex(path+"/", "/resources/"); i >= 0 {
			var tail string
			id, tail, _ = strings.Cut(path[min(i+len("/resources/"), len(path)):], "/")
			if tail != "" && tail != "export" {
				return "", fmt.Errorf("dualresp: result URL %q has more than an id after /resources/", ref)
			}
		} else {
			id = path[strings.LastIndex(path, "/")+1:]
		}
	default:
		if !validID(strings.ToLower(ref)) {
			return "", fmt.Errorf("dualresp: result %q is not a resource id (32 hex digits), resource:// URI or /resources/ URL", ref)
		}
		return strings.ToLower(ref), nil
	}
	if low := strings.ToLower(id); validID(low) {
		return low, nil
	}
	if !safeSegment(id) {
		return "", fmt.Errorf("dualresp: result %q does not name a resource id", ref)
	}
	return id, nil
}

// safeSegment reports whether s is a non-empty path segment of URL
// unreserved characters, at most 200 of them.
func safeSegment(s string) bool {
	if s == "" || len(s) > 200 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '.', c == '_', c == '~':
		default:
			return false
		}
	}
	return true
}

// RowColumns returns the keys of JSON object rows as columns, in order of
// first appearance, at most max of them (no bound when max <= 0). A
// column's Type is the JSON type of its first value: text, number,
// boolean or json ("" when that value is null). Rows that are not objects
// are skipped.
func RowColumns(rows []json.RawMessage, max int) []Column {
	seen := map[string]bool{}
	var cols []Column
	full := func() bool { return max > 0 && len(cols) >= max }
	for _, r := range rows {
		dec := json.NewDecoder(bytes.NewReader(r))
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			continue
		}
		for dec.More() && !full() {
			t, err := dec.Token()
			if err != nil {
				break
			}
			k, _ := t.(string)
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				break
			}
			if !seen[k] {
				seen[k] = true
				cols = append(cols, Column{Name: k, Type: jsonType(v)})
			}
		}
		if full() {
			break
		}
	}
	return cols
}

// jsonType names the JSON type of an encoded value.
func jsonType(v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	switch v[0] {
	case '"':
		return "text"
	case '{', '[':
		return "json"
	case 't', 'f':
		return "boolean"
	case 'n':
		return ""
	}
	return "number"
}
