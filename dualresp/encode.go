package dualresp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
)

// Compression of REST answers: an export, or a page of more than
// minCompressBytes, is sent compressed when the request's Accept-Encoding
// allows it, zstd before gzip. klauspost/compress is used for both: it is
// the well-kept Go implementation (several times faster than
// compress/gzip at the same ratio) and the only maintained zstd encoder
// for Go. Each encoder holds well under a MiB (one goroutine, a 1 MiB zstd
// window), so concurrent exports stay within their memory bound.
const (
	encodingGzip     = "gzip"
	encodingZstd     = "zstd"
	minCompressBytes = 1 << 10
)

// acceptedEncoding returns the content coding to answer r with: "zstd",
// "gzip" or "" (identity), from its Accept-Encoding header (RFC 9110
// 12.5.3: a coding with q=0 is refused).
func acceptedEncoding(r *http.Request) string {
	var gz, zs bool
	for _, h := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(h, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); ok {
				if v, err := strconv.ParseFloat(q, 64); err == nil && v <= 0 {
					continue
				}
			}
			switch name {
			case encodingGzip, "x-gzip":
				gz = true
			case encodingZstd:
				zs = true
			}
		}
	}
	switch {
	case zs:
		return encodingZstd
	case gz:
		return encodingGzip
	}
	return ""
}

// encoder compresses w in coding ("" for none); Close ends the compressed
// stream without closing w.
func encoder(w io.Writer, coding string) (io.WriteCloser, error) {
	switch coding {
	case encodingGzip:
		return gzip.NewWriterLevel(w, gzip.BestSpeed)
	case encodingZstd:
		return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
			zstd.WithWindowSize(1<<20), zstd.WithLowerEncoderMem(true))
	}
	return nopCloser{w}, nil
}

// compressed returns b compressed in coding.
func compressed(b []byte, coding string) ([]byte, error) {
	var out bytes.Buffer
	enc, err := encoder(&out, coding)
	if err != nil {
		return nil, err
	}
	if _, err := enc.Write(b); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// setEncodingHeaders declares the coding of an answer whose body depends
// on Accept-Encoding.
func setEncodingHeaders(h http.Header, coding string) {
	h.Add("Vary", "Accept-Encoding")
	if coding != "" {
		h.Set("Content-Encoding", coding)
		h.Del("Content-Length")
	}
}

// valueKind is how a column's values are typed in typed rows and Parquet.
type valueKind int

const (
	kindText valueKind = iota
	kindNumber
	kindBool
)

// columnKind returns how values of a column of the given Socrata (or SQL)
// type are typed: numbers (number, double, money, percent, integer ...),
// booleans (checkbox, boolean) or, for every other type, as given.
func columnKind(dataType string) valueKind {
	switch strings.ToLower(dataType) {
	case "number", "double", "money", "percent", "integer", "int", "bigint", "real", "float", "numeric", "decimal":
		return kindNumber
	case "checkbox", "boolean", "bool":
		return kindBool
	}
	return kindText
}

// typedRow rewrites row with the values of number columns as JSON numbers
// and of boolean columns as JSON booleans, where the row has them as
// strings (as Socrata's JSON does); keys keep their order. A value that is
// not a number (or boolean) stays as it was. It appends to dst.
func typedRow(dst []byte, row json.RawMessage, kinds map[string]valueKind) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(row))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %.40q", row)
	}
	dst = append(dst, '{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		kb, _ := json.Marshal(key)
		dst = append(dst, kb...)
		dst = append(dst, ':')
		dst = append(dst, typedValue(v, kinds[key])...)
	}
	return append(dst, '}'), nil
}

// typedValue returns v as a number or boolean when it is a string that
// holds one and its column is of that kind; else v.
func typedValue(v json.RawMessage, kind valueKind) json.RawMessage {
	if kind == kindText || len(v) < 2 || v[0] != '"' {
		return v
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return v
	}
	switch kind {
	case kindNumber:
		if _, err := strconv.ParseFloat(s, 64); err == nil && json.Valid([]byte(s)) {
			return json.RawMessage(s)
		}
	case kindBool:
		switch strings.ToLower(s) {
		case "true":
			return json.RawMessage("true")
		case "false":
			return json.RawMessage("false")
		}
	}
	return v
}

// columnKinds maps each column to the kind of its values.
func columnKinds(cols []Column) map[string]valueKind {
	kinds := make(map[string]valueKind, len(cols))
	for _, c := range cols {
		kinds[c.Name] = columnKind(c.Type)
	}
	return kinds
}

// Parquet exports. parquet-go/parquet-go is the maintained pure-Go Parquet
// library (no cgo, streaming row groups); the alternative, apache/arrow-go,
// brings the whole Arrow runtime for what is one writer here.
const (
	// ParquetRowGroupRows is the most rows of a row group of a Parquet
	// export: the writer holds one row group's columns in memory before it
	// writes them out, so this and ParquetRowGroupBytes bound an export's
	// memory.
	ParquetRowGroupRows = 16_384
	// ParquetRowGroupBytes is the most bytes of rows (as JSON) a row group
	// of a Parquet export gathers before it is written out: 16,384 wide
	// rows held ~14 MiB each, and 100 slow readers 1.4 GB.
	ParquetRowGroupBytes = 2 << 20
)

// ParquetWriter writes rows (JSON objects) as a Parquet file, typed from
// the columns' types: numbers as DOUBLE, booleans as BOOLEAN, every other
// type (text, dates, timestamps, geometries as GeoJSON text) as a UTF-8
// string, each column optional (null where the row has no value), Snappy
// compressed, in row groups of at most ParquetRowGroupRows rows and about
// ParquetRowGroupBytes bytes. Close writes the
// footer: a file cut short before it is not a Parquet file, so an
// incomplete export never reads as a whole one.
type ParquetWriter struct {
	w     *parquet.GenericWriter[any]
	cols  []parquetColumn // in the schema's (sorted) leaf order
	row   parquet.Row
	buf   []parquet.Row
	count int64
	group int64 // bytes of the rows of the row group being gathered
}

type parquetColumn struct {
	name string
	kind valueKind
}

// NewParquetWriter returns a ParquetWriter of the given columns to w.
func NewParquetWriter(w io.Writer, cols []Column) *ParquetWriter {
	group := parquet.Group{}
	kinds := map[string]valueKind{}
	for _, c := range cols {
		k := columnKind(c.Type)
		kinds[c.Name] = k
		switch k {
		case kindNumber:
			group[c.Name] = parquet.Optional(parquet.Leaf(parquet.DoubleType))
		case kindBool:
			group[c.Name] = parquet.Optional(parquet.Leaf(parquet.BooleanType))
		default:
			group[c.Name] = parquet.Optional(parquet.String())
		}
	}
	schema := parquet.NewSchema("row", group)
	pw := &ParquetWriter{w: parquet.NewGenericWriter[any](w, schema, parquet.MaxRowsPerRowGroup(ParquetRowGroupRows),
		parquet.Compression(&snappy.Codec{}), parquet.CreatedBy("datasf-mcp", "", ""))}
	for _, f := range schema.Fields() { // the schema's leaf order
		pw.cols = append(pw.cols, parquetColumn{f.Name(), kinds[f.Name()]})
	}
	pw.buf = make([]parquet.Row, 1)
	return pw
}

// WriteRow writes one row, a JSON object; keys that are not columns are
// left out.
func (p *ParquetWriter) WriteRow(row json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(row, &m); err != nil {
		return fmt.Errorf("row %d is not a JSON object: %w", p.count, err)
	}
	p.row = p.row[:0]
	for i, c := range p.cols {
		p.row = append(p.row, parquetValue(m[c.name], c.kind).Level(0, 1, i))
		if p.row[i].IsNull() {
			p.row[i] = parquet.Value{}.Level(0, 0, i)
		}
	}
	p.buf[0] = p.row
	if _, err := p.w.WriteRows(p.buf); err != nil {
		return err
	}
	p.count++
	// The row group ends at ParquetRowGroupRows rows (the writer's own
	// bound) or once its rows passed ParquetRowGroupBytes, whichever comes
	// first.
	if p.group += int64(len(row)); p.group >= ParquetRowGroupBytes {
		p.group = 0
		return p.w.Flush()
	}
	return nil
}

// Close flushes the last row group and writes the footer; it does not
// close the underlying writer.
func (p *ParquetWriter) Close() error { return p.w.Close() }

// parquetValue converts a JSON value to the column's Parquet value; null,
// missing and, for typed columns, values that are not of the type are
// null.
func parquetValue(v json.RawMessage, kind valueKind) parquet.Value {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return parquet.Value{}
	}
	text := csvCell(v) // strings unquoted, arrays and objects compact
	switch kind {
	case kindNumber:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return parquet.Value{}
		}
		return parquet.DoubleValue(f)
	case kindBool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return parquet.Value{}
		}
		return parquet.BooleanValue(b)
	}
	return parquet.ByteArrayValue([]byte(text))
}
