package dualresp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// GeoJSON exports (RFC 7946): a FeatureCollection, one Feature a row, whose
// geometry is the row's location and whose properties are its other
// columns.

// geometryTypes are the Socrata column types whose values are GeoJSON
// geometries, and "location", the legacy type of {latitude, longitude}.
var geometryTypes = map[string]bool{
	"point": true, "multipoint": true, "line": true, "linestring": true, "multiline": true, "multilinestring": true,
	"polygon": true, "multipolygon": true, "location": true,
}

// GeometryColumn returns the column a GeoJSON export takes its geometry
// from: the first of a geometry type (point, multipolygon, …, location);
// "" when none is.
func GeometryColumn(cols []Column) string {
	for _, c := range cols {
		if geometryTypes[strings.ToLower(c.Type)] {
			return c.Name
		}
	}
	return ""
}

// GeoJSONWriter writes rows (JSON objects) as a GeoJSON FeatureCollection:
// each row a Feature with the geometry column's value as its geometry
// (a Socrata location {latitude, longitude} as a Point) and the other
// columns, typed as in typed exports, as its properties. A row without a
// location is a Feature with a null geometry (RFC 7946 3.2), so that every
// row is there; Close says how many there were in the collection's member
// "rows_without_location" (readers of GeoJSON ignore members they do not
// know), and RowsWithoutLocation returns it.
type GeoJSONWriter struct {
	w        *bufio.Writer
	geometry string // the geometry column; "" until known (see NewGeoJSONWriter)
	cols     []Column
	kinds    map[string]valueKind
	count    int64
	missing  int64
	started  bool
	buf      []byte
}

// NewGeoJSONWriter returns a GeoJSONWriter of the given columns to w. The
// geometry is taken from GeometryColumn(cols); when the columns' types are
// unknown, from the first column of the first row whose value is a GeoJSON
// geometry.
func NewGeoJSONWriter(w io.Writer, cols []Column) *GeoJSONWriter {
	return &GeoJSONWriter{w: bufio.NewWriterSize(w, 32<<10), geometry: GeometryColumn(cols), cols: cols, kinds: columnKinds(cols)}
}

// GeometryColumn returns the column the geometries come from ("" before
// the first row when the columns did not say).
func (g *GeoJSONWriter) GeometryColumn() string { return g.geometry }

func (g *GeoJSONWriter) start(m map[string]json.RawMessage) error {
	g.started = true
	if len(g.cols) == 0 {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			g.cols = append(g.cols, Column{Name: k})
		}
	}
	if g.geometry == "" {
		for _, c := range g.cols {
			if isGeometry(m[c.Name]) {
				g.geometry = c.Name
				break
			}
		}
	}
	_, err := g.w.WriteString(`{"type":"FeatureCollection","features":[`)
	return err
}

// isGeometry reports whether v is a GeoJSON geometry object.
func isGeometry(v json.RawMessage) bool {
	var probe struct {
		Type        string          `json:"type"`
		Coordinates json.RawMessage `json:"coordinates"`
	}
	if len(v) == 0 || v[0] != '{' || json.Unmarshal(v, &probe) != nil {
		return false
	}
	return probe.Type != "" && len(probe.Coordinates) > 0
}

// geometry returns the GeoJSON geometry of a location value, or null.
func geometry(v json.RawMessage) json.RawMessage {
	v = bytes.TrimSpace(v)
	if isGeometry(v) {
		return v
	}
	var loc struct {
		Latitude  json.RawMessage `json:"latitude"`
		Longitude json.RawMessage `json:"longitude"`
	}
	if len(v) > 0 && v[0] == '{' && json.Unmarshal(v, &loc) == nil {
		lat, err1 := strconv.ParseFloat(strings.Trim(string(loc.Latitude), `"`), 64)
		lon, err2 := strconv.ParseFloat(strings.Trim(string(loc.Longitude), `"`), 64)
		if err1 == nil && err2 == nil {
			return fmt.Appendf(nil, `{"type":"Point","coordinates":[%s,%s]}`, strconv.FormatFloat(lon, 'f', -1, 64), strconv.FormatFloat(lat, 'f', -1, 64))
		}
	}
	return json.RawMessage("null")
}

// WriteRow writes one row as a Feature.
func (g *GeoJSONWriter) WriteRow(row json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(row, &m); err != nil {
		return fmt.Errorf("row %d is not a JSON object: %w", g.count, err)
	}
	if !g.started {
		if err := g.start(m); err != nil {
			return err
		}
	}
	b := g.buf[:0]
	if g.count > 0 {
		b = append(b, ',')
	}
	b = append(b, "\n"+`{"type":"Feature","geometry":`...)
	geom := json.RawMessage("null")
	if g.geometry != "" {
		geom = geometry(m[g.geometry])
	}
	if string(geom) == "null" {
		g.missing++
	}
	b = append(b, geom...)
	b = append(b, `,"properties":{`...)
	first := true
	for _, c := range g.cols {
		if c.Name == g.geometry {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		kb, _ := json.Marshal(c.Name) // a string
		b = append(b, kb...)
		b = append(b, ':')
		v, ok := m[c.Name]
		if !ok {
			v = json.RawMessage("null")
		}
		b = append(b, typedValue(v, g.kinds[c.Name])...)
	}
	b = append(b, "}}"...)
	g.buf = b
	g.count++
	_, err := g.w.Write(b)
	return err
}

// Rows returns the rows written; RowsWithoutLocation those of them whose
// geometry is null.
func (g *GeoJSONWriter) Rows() int64 { return g.count }

// RowsWithoutLocation returns the rows written without a location.
func (g *GeoJSONWriter) RowsWithoutLocation() int64 { return g.missing }

// Close ends the collection, with the geometry column and the rows
// without a location, and flushes; it does not close the underlying
// writer.
func (g *GeoJSONWriter) Close() error {
	if !g.started {
		if err := g.start(nil); err != nil {
			return err
		}
	}
	return g.end(nil)
}

// end ends the collection with its members and extra ones.
func (g *GeoJSONWriter) end(extra map[string]any) error {
	members := map[string]any{"rows_without_location": g.missing, "geometry_column": g.geometry}
	maps.Copy(members, extra)
	b, _ := json.Marshal(members) // plain values
	if g.count > 0 {
		_ = g.w.WriteByte('\n')
	}
	_, _ = g.w.WriteString("],")
	_, _ = g.w.Write(b[1:])
	_, _ = g.w.WriteString("\n")
	return g.w.Flush()
}
