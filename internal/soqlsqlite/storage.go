package soqlsqlite

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// This file holds the storage conventions the compiled SQL relies on (see
// translate.go): the kinds of stored values and their text forms.

// Kind is how a column's values are stored in SQLite and encoded back.
type Kind int

const (
	KindText     Kind = iota // TEXT, encoded as a JSON string
	KindNumber               // NUMERIC, encoded as a JSON string holding the number
	KindBool                 // INTEGER 0/1, encoded as a JSON boolean
	KindFloating             // TEXT 'YYYY-MM-DDTHH:MM:SS.000'
	KindFixed                // TEXT 'YYYY-MM-DDTHH:MM:SS.000Z'
	KindPoint                // TEXT holding GeoJSON, encoded as the JSON object
	KindLocation             // TEXT holding a Socrata location object
	KindJSON                 // other structured values (url, polygons, documents)
	KindNull                 // the type of the literal null
)

// KindOf maps a Views dataTypeName to a storage kind.
func KindOf(dataType string) Kind {
	switch strings.ToLower(dataType) {
	case "number", "money", "percent", "stars", "double":
		return KindNumber
	case "checkbox", "boolean":
		return KindBool
	case "calendar_date", "floating_timestamp":
		return KindFloating
	case "date", "fixed_timestamp":
		return KindFixed
	case "point":
		return KindPoint
	case "location":
		return KindLocation
	case "url", "multipolygon", "polygon", "line", "multiline", "multipoint", "document":
		return KindJSON
	default:
		return KindText
	}
}

// soda2Type returns the X-SODA2-Types name of a column's Views dataTypeName.
func soda2Type(dataType string) string {
	switch dt := strings.ToLower(dataType); dt {
	case "number", "money", "percent", "stars", "double":
		return "number"
	case "checkbox", "boolean":
		return "boolean"
	case "calendar_date", "floating_timestamp":
		return "floating_timestamp"
	case "date", "fixed_timestamp":
		return "fixed_timestamp"
	case "point", "location", "url", "multipolygon", "polygon", "line", "multiline", "multipoint", "document", "photo":
		return dt
	default:
		return "text"
	}
}

// kindSODA2 is the X-SODA2-Types name of a computed value of kind k.
func kindSODA2(k Kind) string {
	switch k {
	case KindNumber:
		return "number"
	case KindBool:
		return "boolean"
	case KindFloating:
		return "floating_timestamp"
	case KindFixed:
		return "fixed_timestamp"
	case KindPoint:
		return "point"
	case KindLocation:
		return "location"
	case KindJSON:
		return "json"
	case KindNull:
		return "null"
	default:
		return "text"
	}
}

// RowIDColumn is the hidden INTEGER PRIMARY KEY of every dataset table; the
// Socrata :id is derived from it, so :id order is insertion order.
const RowIDColumn = `"_rowid"`

// QuoteIdent quotes name as an SQLite identifier.
func QuoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// QuoteString quotes s as an SQLite string literal.
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// timestampLayouts are the timestamp forms accepted in data and in SoQL
// literals, tried in order.
var timestampLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02",
	"2006-01",
	"2006/01/02 03:04:05 PM",
	"2006/01/02 03:04 PM",
	"2006/01/02 15:04:05",
	"2006/01/02 15:04",
	"2006/01/02",
	"01/02/2006 03:04:05 PM",
	"01/02/2006 03:04 PM",
	"01/02/2006 15:04:05",
	"01/02/2006 15:04",
	"01/02/2006",
	"1/2/2006 3:04:05 PM",
	"1/2/2006 3:04 PM",
	"1/2/2006 15:04:05",
	"1/2/2006 15:04",
	"1/2/2006",
	"Jan 2 2006 03:04:05 PM",
	"Jan 2 2006",
	time.RFC1123Z,
	time.RFC1123,
}

// ParseTimestamp reads a timestamp in any of timestampLayouts.
func ParseTimestamp(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 7 || !strings.ContainsAny(s[:1], "0123456789JFMASOND") {
		return time.Time{}, false
	}
	// A file writes all its timestamps one way: the layout that read the
	// last one goes first (failed attempts cost an error value each).
	hint := int(lastLayout.Load())
	if t, err := time.Parse(timestampLayouts[hint], s); err == nil {
		return t, true
	}
	for i, layout := range timestampLayouts {
		if i == hint {
			continue
		}
		if t, err := time.Parse(layout, s); err == nil {
			lastLayout.Store(int32(i))
			return t, true
		}
	}
	return time.Time{}, false
}

// lastLayout indexes the timestampLayouts entry that read a timestamp last.
var lastLayout atomic.Int32

// NormalizeTimestamp turns the many ways timestamps are written into the
// form Socrata returns: "2024-01-01T00:00:00.000" (floating) or with a
// trailing "Z" (fixed, converted to UTC). Because the form is fixed-width,
// text comparison orders timestamps correctly.
func NormalizeTimestamp(s string, fixed bool) (string, bool) {
	if !fixed && isCanonicalFloating(s) {
		return s, true // already stored form (generated data, the API's own)
	}
	t, ok := ParseTimestamp(s)
	if !ok {
		return "", false
	}
	return FormatTimestamp(t, fixed), true
}

// isCanonicalFloating reports whether s is a valid floating timestamp in
// the stored form "2006-01-02T15:04:05.000".
func isCanonicalFloating(s string) bool {
	if len(s) != 23 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && i != 4 && i != 7 && i != 10 && i != 13 && i != 16 && i != 19 {
			return false
		}
	}
	_, err := time.Parse("2006-01-02T15:04:05.000", s) // month, day and time in range
	return err == nil
}

// FormatTimestamp writes t in the stored form of a floating timestamp
// ("2024-01-01T00:00:00.000", its wall time) or of a fixed one (in UTC,
// with a trailing Z).
func FormatTimestamp(t time.Time, fixed bool) string {
	if fixed {
		return t.UTC().Format("2006-01-02T15:04:05.000") + "Z"
	}
	return t.Format("2006-01-02T15:04:05.000")
}

// ParseWKTPoint reads a WKT point, "POINT (lon lat)".
func ParseWKTPoint(s string) (lon, lat float64, ok bool) {
	s = strings.TrimSpace(s)
	up := strings.ToUpper(s)
	if !strings.HasPrefix(up, "POINT") {
		return 0, 0, false
	}
	s = strings.TrimSpace(s[5:])
	s = strings.TrimSuffix(strings.TrimPrefix(s, "("), ")")
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, 0, false
	}
	lo, err1 := strconv.ParseFloat(f[0], 64)
	la, err2 := strconv.ParseFloat(f[1], 64)
	return lo, la, err1 == nil && err2 == nil
}

// ToFloat reads a number from an SQLite or JSON value, or from text.
func ToFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// FormatFloat writes f as Socrata writes numbers: integral values
// without a fraction, others in the shortest decimal form.
func FormatFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// FormatScalar renders a SQLite value the way Socrata renders scalars.
func FormatScalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return FormatFloat(x)
	case float32:
		return FormatFloat(float64(x))
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return FormatTimestamp(x, false)
	default:
		return fmt.Sprint(x)
	}
}
