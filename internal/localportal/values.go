package localportal

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/internal/soqlsqlite"
)

// This file reads the value encodings Socrata writes in its exports (CSV,
// Resource API JSON, GeoJSON, rows.json) into the storage forms of store.go,
// and infers column types from values when no schema gives them.
//
// The CSV export writes, for example:
//
//	calendar_date  2018/12/01 12:25:00 AM   (also 12/01/2018 12:25:00 AM, 2018-12-01T00:25:00.000)
//	point          POINT (-122.4341 37.7335)   or   (37.7335, -122.4341)   (latitude first)
//	location       1 MARKET ST\nSAN FRANCISCO, CA 94105\n(37.7941, -122.3950)
//	checkbox       true / false   (older exports: Y / N, Yes / No, checked)
//	number         1,234.5        money: $1,234.50   percent: 45%
//	url            http://… , or "description (http://…)"

// parseNumberText reads a number as exports write it: plain ("1234.5",
// "-3", "1e3"), with thousands separators ("1,234.5"), as money ("$1,234.50",
// "-$5", "($5.00)") or as a percentage ("45%", the number 45).
func parseNumberText(s string) (any, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f, true
	}
	neg := false
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		neg, s = true, s[1:len(s)-1]
	}
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		neg, s = !neg, rest
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "$"), "%")
	if rest, ok := strings.CutPrefix(s, "-"); ok { // "$-5"
		neg, s = !neg, rest
	}
	if !validGrouping(s) {
		return nil, false
	}
	s = strings.ReplaceAll(s, ",", "")
	if neg {
		s = "-" + s
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f, true
	}
	return nil, false
}

// validGrouping reports whether the commas of a number, if any, separate
// groups of three digits in its integer part ("1,234,567.5").
func validGrouping(s string) bool {
	intPart, _, _ := strings.Cut(s, ".")
	if !strings.Contains(intPart, ",") {
		return !strings.Contains(s, ",")
	}
	groups := strings.Split(intPart, ",")
	if len(groups[0]) == 0 || len(groups[0]) > 3 {
		return false
	}
	for _, g := range groups[1:] {
		if len(g) != 3 {
			return false
		}
	}
	return true
}

// parseBoolText reads a checkbox as exports write it.
func parseBoolText(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "t", "1", "y", "yes", "checked", "x":
		return true, true
	case "false", "f", "0", "n", "no", "unchecked":
		return false, true
	}
	return false, false
}

// parsePointText reads a point written as WKT ("POINT (lon lat)"), as the
// CSV export's "(lat, lon)", or as GeoJSON text.
func parsePointText(s string) (lon, lat float64, ok bool) {
	s = strings.TrimSpace(s)
	if lo, la, ok := soqlsqlite.ParseWKTPoint(s); ok {
		return lo, la, true
	}
	if la, lo, ok := parseLatLonPair(s); ok {
		return lo, la, true
	}
	if strings.HasPrefix(s, "{") {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) == nil {
			if c, ok := m["coordinates"].([]any); ok && len(c) == 2 {
				lo, ok1 := soqlsqlite.ToFloat(c[0])
				la, ok2 := soqlsqlite.ToFloat(c[1])
				return lo, la, ok1 && ok2
			}
		}
	}
	return 0, 0, false
}

// parseLatLonPair reads "(37.7335, -122.4341)": latitude first, as the
// portal's CSV export writes points and the coordinates of locations.
func parseLatLonPair(s string) (lat, lon float64, ok bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "(") || !strings.HasSuffix(s, ")") {
		return 0, 0, false
	}
	a, b, found := strings.Cut(s[1:len(s)-1], ",")
	if !found {
		return 0, 0, false
	}
	la, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	lo, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if err1 != nil || err2 != nil || math.Abs(la) > 90 || math.Abs(lo) > 180 {
		return 0, 0, false
	}
	return la, lo, true
}

// parseLocationText reads a location column as the CSV export writes it:
// address lines and then "(lat, lon)" on the last line, any part optional.
// It returns the stored location object.
func parseLocationText(s string) map[string]any {
	s = strings.TrimSpace(s)
	m := map[string]any{}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if lat, lon, ok := parseLatLonPair(last); ok {
		m["latitude"] = soqlsqlite.FormatFloat(lat)
		m["longitude"] = soqlsqlite.FormatFloat(lon)
		lines = lines[:len(lines)-1]
	} else if lo, la, ok := soqlsqlite.ParseWKTPoint(last); ok {
		m["latitude"] = soqlsqlite.FormatFloat(la)
		m["longitude"] = soqlsqlite.FormatFloat(lo)
		lines = lines[:len(lines)-1]
	}
	addr := map[string]string{"address": "", "city": "", "state": "", "zip": ""}
	var street []string
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		// "CITY, ST 94105" is the last address line when it has that shape.
		if i == len(lines)-1 && i > 0 {
			if city, rest, ok := strings.Cut(l, ","); ok {
				f := strings.Fields(rest)
				if len(f) >= 1 && len(f) <= 2 {
					addr["city"] = strings.TrimSpace(city)
					addr["state"] = f[0]
					if len(f) == 2 {
						addr["zip"] = f[1]
					}
					continue
				}
			}
		}
		street = append(street, l)
	}
	addr["address"] = strings.Join(street, ", ")
	if addr["address"] != "" || addr["city"] != "" || len(m) == 0 {
		b, _ := json.Marshal(addr)
		m["human_address"] = string(b)
	}
	return m
}

// parseURLText reads a url cell: "http://…", or "description (http://…)"
// as older exports write it.
func parseURLText(s string) map[string]any {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, ")") {
		if i := strings.LastIndex(s, " ("); i > 0 {
			u := s[i+2 : len(s)-1]
			if strings.Contains(u, "://") {
				return map[string]any{"url": u, "description": strings.TrimSpace(s[:i])}
			}
		}
	}
	return map[string]any{"url": s}
}

// inferrer guesses a column's Views dataTypeName from its values, for data
// without a schema. A column is a number, checkbox, calendar_date or point
// when every non-empty value parses as one (numbers with a leading zero,
// like codes and ZIP+4s, stay text), else text.
type inferrer struct {
	seen                               int
	number, boolean, timestamp, point  bool
	location, locationObj, url, geoObj bool
	geoType                            string
}

func newInferrer() *inferrer {
	return &inferrer{number: true, boolean: true, timestamp: true, point: true, location: true, locationObj: true, url: true, geoObj: true}
}

// add takes one value (nil and "" are ignored).
func (in *inferrer) add(v any) {
	switch x := v.(type) {
	case nil:
		return
	case string:
		x = strings.TrimSpace(x)
		if x == "" {
			return
		}
		in.seen++
		in.locationObj, in.geoObj = false, false
		if in.number {
			_, ok := parseNumberText(x)
			in.number = ok && !leadingZero(x)
		}
		if in.boolean {
			b := strings.ToLower(x)
			in.boolean = b == "true" || b == "false"
		}
		if in.timestamp {
			_, in.timestamp = soqlsqlite.ParseTimestamp(x)
		}
		if in.point {
			_, _, in.point = parsePointText(x)
		}
		if in.location {
			// A location cell has an address line and then "(lat, lon)".
			lines := strings.Split(x, "\n")
			_, _, pair := parseLatLonPair(lines[len(lines)-1])
			in.location = pair && len(lines) > 1
		}
		if in.url {
			in.url = strings.HasPrefix(x, "http://") || strings.HasPrefix(x, "https://")
		}
	case bool:
		in.seen++
		in.number, in.timestamp, in.point, in.location, in.locationObj, in.url, in.geoObj = false, false, false, false, false, false, false
	case float64, json.Number, int, int64:
		in.seen++
		in.boolean, in.timestamp, in.point, in.location, in.locationObj, in.url, in.geoObj = false, false, false, false, false, false, false
	case map[string]any:
		in.seen++
		in.number, in.boolean, in.timestamp, in.point, in.location, in.url = false, false, false, false, false, false
		_, lat := x["latitude"]
		_, ha := x["human_address"]
		in.locationObj = in.locationObj && (lat || ha)
		t, _ := x["type"].(string)
		_, coords := x["coordinates"]
		if in.geoObj && coords && t != "" && (in.geoType == "" || in.geoType == t) {
			in.geoType = t
		} else {
			in.geoObj = false
		}
	default:
		in.seen++
		in.number, in.boolean, in.timestamp, in.point, in.location, in.locationObj, in.url, in.geoObj = false, false, false, false, false, false, false, false
	}
}

// dataType is the inferred Views dataTypeName ("text" without values).
func (in *inferrer) dataType() string {
	switch {
	case in.seen == 0:
		return "text"
	case in.geoObj:
		if strings.EqualFold(in.geoType, "Point") {
			return "point"
		}
		return strings.ToLower(in.geoType)
	case in.locationObj:
		return "location"
	case in.boolean:
		return "checkbox"
	case in.number:
		return "number"
	case in.timestamp:
		return "calendar_date"
	case in.point:
		return "point"
	case in.location:
		return "location"
	case in.url:
		return "url"
	}
	return "text"
}

// leadingZero reports whether a numeric-looking text starts with a zero
// that a number would lose ("06244", "007"), so it is a code, not a number.
func leadingZero(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return len(s) > 1 && s[0] == '0' && s[1] != '.'
}

// valueError says why one value could not be read as its column's type.
type valueError struct {
	value    string
	dataType string
}

func (e *valueError) Error() string {
	return fmt.Sprintf("%q is not a %s", e.value, e.dataType)
}
