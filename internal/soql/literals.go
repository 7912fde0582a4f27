package soql

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// This file is the literal conversions of Socrata's analyzer: the types a
// string or number literal can take besides its own (I stringConversions:273,
// stringLiteralExpr:376, numberLiteralExpr:390; see signatures.go for the
// source keys and the pinned commits). A literal takes the type the
// function it is passed to needs, among these. The parsers a conversion
// calls (StringRep, WktRep, ...) live in Socrata's soql-types, not in the
// pinned files: they are cited at the line of I that calls them.

// StringLiteralTypes is every type the string literal s converts to:
// always text, blob and photo (I stringLiteralExpr:376, blob at I:385,
// photo at I:386: older versions had no string-to-photo conversion, and
// where versions disagree the rule that accepts more is kept); a fixed or floating timestamp when Joda's ISO parser reads
// it (I:275 SoQLFixedTimestamp.StringRep, I:280
// SoQLFloatingTimestamp.StringRep; ParseTimestamp); a number or money when
// it lexes as one number (I:317 isNumberLiteral:186); a boolean for true,
// false, 1 or 0, any case (I:370 isBooleanLiteral:204, booleanRx:198); an
// interval for an ISO period ('P1D', I:295 SoQLInterval.StringRep); a
// geometry for WKT of that kind (I:325 ... I:350 WktRep); url and phone for
// any text (I:360 SoQLUrl.parseUrl, I:355 SoQLPhone.parsePhone: not
// narrowed here, so never refused); a location for a WKT point, "(lat,
// lon)" or a JSON object (I:365 SoQLLocation.isPossibleLocation).
func StringLiteralTypes(s string) []string { return stringLiteralSet(s).names() }

func stringLiteralSet(s string) typeSet {
	set := setOf("text", "blob", "photo", "url", "phone")
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

// wktKinds are the WKT keywords, longest first (I:325 SoQLPoint.WktRep ...
// I:350 SoQLMultiPolygon.WktRep).
var wktKinds = []struct{ keyword, typ string }{
	{"MULTIPOLYGON", "multipolygon"}, {"MULTILINESTRING", "multiline"}, {"MULTIPOINT", "multipoint"},
	{"POLYGON", "polygon"}, {"LINESTRING", "line"}, {"POINT", "point"},
}

// numberText is what Socrata's lexer reads as one number literal (a sign
// is let through: where unsure, accept). A string converts to a number
// when I isNumberLiteral:186 (numberRx:185) matches it.
var numberText = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// numberLiteralSet: a number literal is a number, a money or a double
// (I numberLiteralExpr:390, through F NumberToMoney:470 and
// NumberToDouble:473).
var numberLiteralSet = setOf("number", "money", "double")

// ParseBoolean reads a boolean literal: true, false, 1 or 0, in any case
// (I booleanRx:198).
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
// (fixed true, I SoQLFixedTimestamp.StringRep:275) or floating timestamp
// (I SoQLFloatingTimestamp.StringRep:280): Joda's ISO parser, which takes any
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
// timestamp is moved by (F TimeStampPlus:750, "interval (ISO period
// format)"; the page D functions/date_add.md is not among the stored
// dev.socrata.com pages).
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
