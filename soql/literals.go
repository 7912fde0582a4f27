package soql

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// This file is the literal conversions of Socrata's analyzer: the types a
// string or number literal can take besides its own (I stringConversions,
// numberLiteralExpr; see signatures.go for the source keys). A literal
// takes the type the function it is passed to needs, among these.

// StringLiteralTypes is every type the string literal s converts to:
// always text and blob (I stringLiteralExpr); a fixed or floating
// timestamp when Joda's ISO parser reads it (ParseTimestamp); a number or
// money when it lexes as one number; a boolean for true, false, 1 or 0 (any
// case); an interval for an ISO period ('P1D'); a geometry for WKT of that
// kind; url and phone for any text (I SoQLUrl.isPossible,
// SoQLPhone.isPossible: not narrowed here, so never refused); a location
// for a WKT point, "(lat, lon)" or a JSON object.
func StringLiteralTypes(s string) []string { return stringLiteralSet(s).names() }

func stringLiteralSet(s string) typeSet {
	set := setOf("text", "blob", "url", "phone")
	if _, ok := ParseTimestamp(s, true); ok {
		set |= setOf("fixed_timestamp")
	}
	if _, ok := ParseTimestamp(s, false); ok {
		set |= setOf("floating_timestamp")
	}
	if numberText.MatchString(strings.TrimSpace(s)) {
		set |= setOf("number", "money")
	}
	if _, ok := ParseBoolean(s); ok {
		set |= setOf("boolean")
	}
	if _, ok := ParseInterval(s); ok {
		set |= setOf("interval")
	}
	t := strings.ToUpper(strings.TrimSpace(s))
	for _, w := range wktKinds {
		if rest, ok := strings.CutPrefix(t, w.keyword); ok && (strings.HasPrefix(strings.TrimSpace(rest), "(") || strings.TrimSpace(rest) == "EMPTY") {
			set |= setOf(w.typ)
			break
		}
	}
	if set.has("point") || strings.HasPrefix(t, "(") || strings.HasPrefix(t, "{") {
		set |= setOf("location")
	}
	return set
}

// wktKinds are the WKT keywords, longest first (I SoQLPoint.WktRep ...).
var wktKinds = []struct{ keyword, typ string }{
	{"MULTIPOLYGON", "multipolygon"}, {"MULTILINESTRING", "multiline"}, {"MULTIPOINT", "multipoint"},
	{"POLYGON", "polygon"}, {"LINESTRING", "line"}, {"POINT", "point"},
}

// numberText is what Socrata's lexer reads as one number literal (a sign
// is let through: where unsure, accept).
var numberText = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// numberLiteralSet: a number literal is a number, a money or a double
// (I numberLiteralExpr).
var numberLiteralSet = setOf("number", "money", "double")

// ParseBoolean reads a boolean literal: true, false, 1 or 0, in any case.
func ParseBoolean(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1":
		return true, true
	case "false", "0":
		return false, true
	}
	return false, false
}

// isoTimestamp is an ISO 8601 date with an optional time, each part after
// the year optional ('2023', '2023-01', '2023-01-01T10', ...), and an
// optional zone (Z or an offset). A space may stand for the T, and a
// field after the year may have one digit (Joda reads '2023-1-5'; where
// unsure, accept).
var isoTimestamp = regexp.MustCompile(`^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ](\d{1,2})(?::(\d{1,2})(?::(\d{1,2})(?:[.,](\d{1,9}))?)?)?)?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$`)

// ParseTimestamp reads a timestamp literal as Socrata does for a fixed
// (fixed true) or floating timestamp: Joda's ISO parser, which takes any
// prefix of 'YYYY-MM-DDThh:mm:ss.sss' ('2023' is 2023-01-01T00:00:00).
// A floating timestamp has no zone ('…Z' is refused); a fixed one may have
// one, and is read as UTC without. Fields out of range ('2023-13-45') are
// refused. The result of a floating timestamp is in UTC, its wall time the
// literal's.
func ParseTimestamp(s string, fixed bool) (time.Time, bool) {
	m := isoTimestamp.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || (!fixed && m[8] != "") {
		return time.Time{}, false
	}
	num := func(i, def int) int {
		if m[i] == "" {
			return def
		}
		n, _ := strconv.Atoi(m[i])
		return n
	}
	y, mo, d, h, mi, sec := num(1, 0), num(2, 1), num(3, 1), num(4, 0), num(5, 0), num(6, 0)
	nanos := 0
	if m[7] != "" {
		frac := (m[7] + "000000000")[:9]
		nanos, _ = strconv.Atoi(frac)
	}
	if mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	loc := time.UTC
	if z := m[8]; z != "" && z != "Z" {
		digits := strings.ReplaceAll(z[1:], ":", "")
		oh, _ := strconv.Atoi(digits[:2])
		om := 0
		if len(digits) == 4 {
			om, _ = strconv.Atoi(digits[2:])
		}
		off := oh*3600 + om*60
		if z[0] == '-' {
			off = -off
		}
		loc = time.FixedZone(z, off)
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, nanos, loc)
	if t.Day() != d { // 2023-02-30 rolls over: out of range
		return time.Time{}, false
	}
	return t.UTC(), true
}

// Period is an ISO 8601 period ('P1Y2M3DT4H5M6S', 'P1W'), the interval a
// timestamp is moved by (F TimeStampPlus; D functions/date_add.md).
type Period struct {
	Years, Months, Days, Hours, Minutes int
	Seconds                             float64
}

var isoPeriod = regexp.MustCompile(`^P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)W)?(?:(-?\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:[.,]\d+)?)S)?)?$`)

// ParseInterval reads an ISO 8601 period; at least one field is given.
func ParseInterval(s string) (Period, bool) {
	t := strings.ToUpper(strings.TrimSpace(s))
	m := isoPeriod.FindStringSubmatch(t)
	if m == nil || t == "P" || strings.HasSuffix(t, "T") {
		return Period{}, false
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	secs, _ := strconv.ParseFloat(strings.ReplaceAll(m[7], ",", "."), 64)
	return Period{Years: n(1), Months: n(2), Days: n(3)*7 + n(4), Hours: n(5), Minutes: n(6), Seconds: secs}, true
}

// AddTo moves t by the period, sign times (+1 or -1): years and months
// first, then days, then the time fields.
func (p Period) AddTo(t time.Time, sign int) time.Time {
	t = t.AddDate(sign*p.Years, sign*p.Months, sign*p.Days)
	d := time.Duration(p.Hours)*time.Hour + time.Duration(p.Minutes)*time.Minute + time.Duration(p.Seconds*float64(time.Second))
	return t.Add(time.Duration(sign) * d)
}
