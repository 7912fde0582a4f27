package soql

import (
	"errors"
	"testing"
	"time"
)

// everyType is a dataset with one column of every type.
var everyType = []Field{
	{"t", "text"}, {"n", "number"}, {"dbl", "double"}, {"mny", "money"}, {"b", "boolean"},
	{"fx", "fixed_timestamp"}, {"fl", "floating_timestamp"}, {"pt", "point"}, {"mpt", "multipoint"},
	{"ln", "line"}, {"mln", "multiline"}, {"pg", "polygon"}, {"mpg", "multipolygon"}, {"loc", "location"},
	{"u", "url"}, {"ph", "photo"}, {"doc", "document"}, {"bl", "blob"}, {"js", "json"},
}

// Socrata's rules, one case or more per signature family and per literal
// form, accepted and refused; src names the definition each case rests on
// and its line, as KEY Name:line (see signatures.go for the keys F, C, I,
// E, D and the commit each file is pinned at).
func TestSocrataRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		soql string
		code string // "" accepted
		src  string
	}{
		// Literal forms (I stringConversions:273; the partial forms are Joda's ISO parser's).
		{"SELECT t WHERE fl >= '2023'", "", "I SoQLFloatingTimestamp.StringRep:280"},
		{"SELECT t WHERE fl > '2023-01'", "", "I SoQLFloatingTimestamp.StringRep:280"},
		{"SELECT t WHERE fl > '2023-01-01T10'", "", "I SoQLFloatingTimestamp.StringRep:280"},
		{"SELECT t WHERE fl BETWEEN '2023' AND '2024'", "", "F Between:318, I SoQLFloatingTimestamp.StringRep:280"},
		{"SELECT t WHERE fx >= '2023'", "", "I SoQLFixedTimestamp.StringRep:275"},
		{"SELECT t WHERE fx >= '2023-01-01T00:00:00Z'", "", "I SoQLFixedTimestamp.StringRep:275"},
		{"SELECT t WHERE :updated_at > '2024'", "", "I SoQLFixedTimestamp.StringRep:275"},
		{"SELECT t WHERE date_trunc_ym(fl) = '2023-01'", "", "F FloatingTimeStampTruncYm:609"},
		{"SELECT t WHERE fl = '2023-01-01T00:00:00Z'", CodeTypeMismatch, "I SoQLFloatingTimestamp.StringRep:280 (no zone)"},
		{"SELECT t WHERE fl > '2023-13-45'", CodeTypeMismatch, "I SoQLFloatingTimestamp.StringRep:280 (fields in range)"},
		{"SELECT t WHERE fl > 'yesterday'", CodeTypeMismatch, "I SoQLFloatingTimestamp.StringRep:280"},
		{"SELECT t WHERE b = '1' OR b = '0' OR b = 'TRUE' OR b = 'false'", "", "I booleanRx:198 (true|false|1|0), isBooleanLiteral:204"},
		{"SELECT t WHERE b = 'yes'", CodeTypeMismatch, "I booleanRx:198 (true|false|1|0), isBooleanLiteral:204"},
		{"SELECT t WHERE n = '3'", "", "I isNumberLiteral:186 -> F TextToNumber:795 (I:318)"},
		{"SELECT t WHERE n = 'three'", CodeTypeMismatch, "I isNumberLiteral:186"},
		{"SELECT t WHERE dbl = '3'", CodeTypeMismatch, "I isNumberLiteral:186 converts to number and money (I:318), not double"},
		{"SELECT t WHERE dbl > 0.5", "", "I numberLiteralExpr:390 -> F NumberToDouble:473"},
		{"SELECT t WHERE t = 3", CodeTypeMismatch, "I numberLiteralExpr:390: no text"},
		{"SELECT t WHERE pt = 'POINT (1 2)'", "", "I SoQLPoint.WktRep:325"},
		{"SELECT t WHERE pt = 'Mission'", CodeTypeMismatch, "I SoQLPoint.WktRep:325"},
		{"SELECT t WHERE mpg = 'MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)))'", "", "I SoQLMultiPolygon.WktRep:350"},
		{"SELECT t WHERE pg = 'POINT (1 2)'", CodeTypeMismatch, "I SoQLPolygon.WktRep:345"},
		{"SELECT t WHERE loc = 'downtown'", CodeTypeMismatch, "I SoQLLocation.isPossibleLocation:365"},
		{"SELECT t WHERE bl = 'x'", "", "I stringLiteralExpr:376: every string converts to blob (I:385)"},
		{"SELECT t WHERE ph = 'x'", "", "I stringLiteralExpr:386 (and I:76): every string literal also converts to photo, and photo is Equatable (C Equatable:24)"},
		{"SELECT t WHERE u = 'https://a.example'", "", "I SoQLUrl.parseUrl:360"},
		{"SELECT t WHERE u = 3", CodeTypeMismatch, "F Eq:122: url against number"},

		// Comparison (F Eq:122, Gt:113, Between:318; C Equatable:24, Ordered:7).
		{"SELECT t WHERE t = 'a' AND n > 2 AND fl < fl", "", "F Eq:122, Gt:113, Lt:116"},
		{"SELECT t WHERE n = dbl", CodeTypeMismatch, "F Eq:122: number and double kept apart"},
		{"SELECT t WHERE pt > 'POINT (1 2)'", CodeTypeMismatch, "F Gt:113: C Ordered:7 has no point"},
		{"SELECT t WHERE doc = doc", CodeTypeMismatch, "F Eq:122: C Equatable:24 has no document"},
		{"SELECT t WHERE ph < ph", CodeTypeMismatch, "F Lt:116: C Ordered:7 has no photo"},
		{"SELECT t WHERE js > js", CodeTypeMismatch, "F Gt:113: C Ordered:7 has no json"},
		{"SELECT t WHERE bl BETWEEN 'a' AND 'b'", CodeTypeMismatch, "F Between:318: C Ordered:7 has no blob"},
		{"SELECT t WHERE u > 'a'", "", "F Gt:113: C Ordered:7 has url"},
		{"SELECT t WHERE n IN (1, '2', 3)", "", "F In:487"},
		{"SELECT t WHERE t IN ('a', 2)", CodeTypeMismatch, "F In:487"},
		{"SELECT t WHERE t LIKE 'a%'", "", "F Like:494"},
		{"SELECT t WHERE n LIKE '1%'", CodeTypeMismatch, "F Like:494"},
		{"SELECT t WHERE b AND NOT b OR b", "", "F And:477, Or:480, Not:483"},
		{"SELECT t WHERE t AND b", CodeTypeMismatch, "F And:477"},

		// Arithmetic (F BinaryPlus:401 ... ModMoneyMoney:450, TimeStampPlus:750, TimeStampMinus:754).
		{"SELECT n + 1 AS a, dbl * 2.5 AS c, -n AS d, n % 2 AS e, n ^ 2 AS f", "", "F BinaryPlus:401, TimesDoubleDouble:411, UnaryMinus:390, ModNumNum:441, ExpNumNum:434"},
		{"SELECT n + dbl AS a", CodeTypeMismatch, "F BinaryPlus:401: a C NumLike:33, one type"},
		{"SELECT t + 1 AS a", CodeTypeMismatch, "F BinaryPlus:401"},
		{"SELECT fl + 'P1D' AS a, fx - 'PT1H' AS c", "", "F TimeStampPlus:750, TimeStampMinus:754"},
		{"SELECT date_trunc_ym(fl) - 'P1M' AS a", "", "F TimeStampMinus:754 (the example of F GetUtcDate:763, at line 766)"},
		{"SELECT fl + 'tomorrow' AS a", CodeTypeMismatch, "F TimeStampPlus:750: an ISO period"},
		{"SELECT fl + 1 AS a", CodeTypeMismatch, "F TimeStampPlus:750"},
		{"SELECT t || n AS a", "", "F Concat:107"},

		// Aggregates (F Min:344, Max:347, Sum:359, Avg:362, Median:365, MedianDisc:368, Count:353).
		{"SELECT min(t) AS a, max(fl) AS c, sum(n) AS d, avg(dbl) AS e, count(ph) AS f, median(t) AS g", "", "F Min:344, Max:347, Sum:359, Avg:362, Count:353, MedianDisc:368"},
		{"SELECT sum(t) AS a", CodeTypeMismatch, "F Sum:359: C NumLike:33"},
		{"SELECT max(pt) AS a", CodeTypeMismatch, "F Max:347: C Ordered:7"},
		{"SELECT min(doc) AS a", CodeTypeMismatch, "F Min:344: C Ordered:7"},
		{"SELECT avg(js) AS a", CodeTypeMismatch, "F Avg:362: C NumLike:33"},
		{"SELECT median(ph) AS a", CodeTypeMismatch, "F Median:365, MedianDisc:368"},

		// Choice (F Coalesce:953, Case:934, Greatest:340).
		{"SELECT coalesce(t, 'none') AS a, coalesce(n, null, 0) AS c", "", "F Coalesce:953"},
		{"SELECT coalesce(t, 3) AS a", CodeTypeMismatch, "F Coalesce:953: one type"},
		{"SELECT CASE WHEN n > 1 THEN 'big' ELSE 'small' END AS a, case(b, 1, n > 2, 2) AS c", "", "F Case:934"},
		{"SELECT CASE WHEN n > 1 THEN 'big' ELSE 3 END AS a", CodeTypeMismatch, "F Case:934: one type"},
		{"SELECT case(n, 1) AS a", CodeTypeMismatch, "F Case:934: boolean conditions"},
		{"SELECT greatest(n, 1, 2) AS a", "", "F Greatest:340"},

		// Numbers and text (F Round:466, NaturalLog:454, Upper:510, Length:514, ...).
		{"SELECT round(n, 0) AS a, ln(n) AS c, abs(dbl) AS d", "", "F Round:466, NaturalLog:454, Absolute:457"},
		{"SELECT round(n) AS a", CodeNoSuchFunction, "F Round:466: (number, number)"},
		{"SELECT round(dbl, 1) AS a", CodeTypeMismatch, "F Round:466: number only"},
		{"SELECT upper(t) AS a, length(t) AS c, starts_with(t, 'a') AS d, caseless_one_of(t, 'a', 'b') AS e", "", "F Upper:510, Length:514, StartsWith:504, CaselessOneOf:143"},
		{"SELECT upper(n) AS a", CodeTypeMismatch, "F Upper:510"},
		{"SELECT upper(t, t) AS a", CodeNoSuchFunction, "F Upper:510: one argument"},

		// Timestamps (F FloatingTimeStampTrunc*:606-612, FixedTimeStampTrunc*AtTimeZone:723-729, FloatingTimeStampExtract*:676-706).
		{"SELECT date_trunc_ym(fl) AS a, date_extract_y(fl) AS c, date_trunc_ymd(fx, 'US/Pacific') AS d, date_diff_d(fl, fl) AS e", "", "F FloatingTimeStampTruncYm:609, FloatingTimeStampExtractY:676, FixedTimeStampTruncYmdAtTimeZone:723, TimeStampDiffD:733"},
		{"SELECT date_trunc_ym(fx) AS a", CodeTypeMismatch, "F FloatingTimeStampTruncYm:609: floating only"},
		{"SELECT date_extract_y(fx) AS a", CodeTypeMismatch, "F FloatingTimeStampExtractY:676: floating only"},
		{"SELECT date_trunc_ym(fl, 'UTC', 1) AS a", CodeNoSuchFunction, "F FloatingTimeStampTruncYm:609, DateTruncYm:615, FixedTimeStampTruncYmAtTimeZone:726: 1 or 2 arguments"},
		{"SELECT to_floating_timestamp(fx, 'US/Pacific') AS a", "", "F ToFloatingTimestamp:759"},
		{"SELECT to_floating_timestamp(fl, 'US/Pacific') AS a", CodeTypeMismatch, "F ToFloatingTimestamp:759: fixed only"},

		// Geometry (F WithinCircle:155, WithinBox:159, WithinPolygon:162, Intersects:217, DistanceInMeters:235, NumberOfPoints:284, Extent:190).
		{"SELECT t WHERE within_circle(pt, 37.7, -122.4, 500) AND within_box(loc, 38, -123, 37, -122)", "", "F WithinCircle:155, LocationWithinBox:841"},
		{"SELECT t WHERE within_polygon(mpg, 'POLYGON ((0 0, 1 0, 1 1, 0 0))') AND intersects(pt, mpg)", "", "F WithinPolygon:162, Intersects:217"},
		{"SELECT distance_in_meters(pt, 'POINT (1 2)') AS a, num_points(ln) AS c", "", "F DistanceInMeters:235, NumberOfPoints:284"},
		{"SELECT extent(pt) AS a", "", "F Extent:190"},
		{"SELECT extent(t) AS a", CodeTypeMismatch, "F Extent:190: C GeospatialLike:22"},
		{"SELECT t WHERE within_circle(t, 37.7, -122.4, 500)", CodeTypeMismatch, "F WithinCircle:155: C GeospatialLike:22, or location (F LocationWithinCircle:835)"},
		{"SELECT t WHERE within_circle(pt, 37.7, -122.4)", CodeNoSuchFunction, "F WithinCircle:155: 4 arguments"},
		{"SELECT t WHERE within_circle(pt, '37.7', -122.4, 500)", "", "F WithinCircle:155, I isNumberLiteral:186"},
		{"SELECT t WHERE intersects(loc, 'POINT (1 2)')", CodeTypeMismatch, "F Intersects:217: C GeospatialLike:22 has no location"},
		{"SELECT num_points(n) AS a", CodeTypeMismatch, "F NumberOfPoints:284"},

		// Casts (F castIdentities:790, TextTo*:58-103, NumberToText:792, NumberToDouble:473, ...).
		{"SELECT t::number AS a, n::text AS c, n::double AS d, '2023'::floating_timestamp AS e, b::text AS f, loc::point AS g, fl::text AS h", "", "F TextToNumber:795, NumberToText:792, NumberToDouble:473, TextToFloatingTimestamp:61, BoolToText:810, LocationToPoint:828, FloatingTimestampToText:772"},
		{"SELECT dbl::number AS a", CodeTypeMismatch, "F: no double-to-number cast in the pinned F (not found)"},
		{"SELECT pt::text AS a", CodeTypeMismatch, "F: no point-to-text cast in the pinned F (not found)"},
		{"SELECT n::boolean AS a", CodeTypeMismatch, "F: no number-to-boolean cast in the pinned F (not found)"},

		// Clause rules (I isBoolean:31, isOrdered:30, isGroupable:32; E NonBooleanWhere:220 ... UnorderableOrderBy:223).
		{"SELECT t WHERE n", CodeNonBooleanWhere, "I isBoolean:31, E NonBooleanWhere:220"},
		{"SELECT t WHERE 'true'", "", "I isBoolean:31: a literal converts to boolean (I:370)"},
		{"SELECT t, count(*) AS c GROUP BY t HAVING count(*)", CodeNonBooleanHaving, "E NonBooleanHaving:222"},
		{"SELECT t ORDER BY pt", CodeUnorderableOrderBy, "I isOrdered:30, E UnorderableOrderBy:223"},
		{"SELECT t ORDER BY ph", CodeUnorderableOrderBy, "I isOrdered:30"},
		{"SELECT t ORDER BY u, fl DESC, b", "", "I isOrdered:30"},
		{"SELECT doc, count(*) AS c GROUP BY doc", CodeNonGroupableGroupBy, "I isGroupable:32, E NonGroupableGroupBy:221"},
		{"SELECT pt, count(*) AS c GROUP BY pt", "", "I isGroupable:32: C Equatable:24 has point"},

		// Unknown stays unknown: functions the rules do not list.
		{"SELECT t WHERE some_new_function(n, t, pt)", "", "unknown: let through"},
	}
	for _, tt := range tests {
		q, err := Parse(tt.soql)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tt.soql, err)
		}
		err = q.Check(tt.soql, everyType)
		var ce *CheckError
		switch {
		case tt.code == "" && err != nil:
			t.Errorf("Check(%q) = %v; want nil (%s)", tt.soql, err, tt.src)
		case tt.code != "" && (!errors.As(err, &ce) || ce.Code != tt.code):
			t.Errorf("Check(%q) = %v; want %s (%s)", tt.soql, err, tt.code, tt.src)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		fixed bool
		want  string // RFC 3339 in UTC; "" refused
	}{
		{"2023", false, "2023-01-01T00:00:00Z"},
		{"2023-02", false, "2023-02-01T00:00:00Z"},
		{"2023-01-01T10", false, "2023-01-01T10:00:00Z"},
		{"2023-01-01T10:11:12.5", false, "2023-01-01T10:11:12.5Z"},
		{"2023-01-01 10:11", false, "2023-01-01T10:11:00Z"},
		{"2023-01-01T00:00:00Z", false, ""},
		{"2023-01-01T00:00:00Z", true, "2023-01-01T00:00:00Z"},
		{"2023-01-01T00:00:00-08:00", true, "2023-01-01T08:00:00Z"},
		{"2024", true, "2024-01-01T00:00:00Z"},
		{"2023-13-45", false, ""},
		{"2023-02-30", false, ""},
		{"2023-01-01T24", false, ""},
		{"23", false, ""},
		{"2023-1-5T9", false, "2023-01-05T09:00:00Z"},
		{"yesterday", false, ""},
	}
	for _, tt := range tests {
		got, ok := ParseTimestamp(tt.in, tt.fixed)
		s := ""
		if ok {
			s = got.Format(time.RFC3339Nano)
		}
		if s != tt.want {
			t.Errorf("ParseTimestamp(%q, %v) = %q; want %q", tt.in, tt.fixed, s, tt.want)
		}
	}
}

func TestParseInterval(t *testing.T) {
	t.Parallel()
	base := time.Date(2023, 1, 31, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		sign int
		want string // "" refused
	}{
		{"P1D", 1, "2023-02-01T10:00:00Z"},
		{"P1M", -1, "2022-12-31T10:00:00Z"},
		{"PT1H30M", 1, "2023-01-31T11:30:00Z"},
		{"P1W", 1, "2023-02-07T10:00:00Z"},
		{"PT1S", -1, "2023-01-31T09:59:59Z"},
		{"p1y", 1, "2024-01-31T10:00:00Z"},
		{"P", 1, ""},
		{"PT", 1, ""},
		{"1 day", 1, ""},
	}
	for _, tt := range tests {
		p, ok := ParseInterval(tt.in)
		s := ""
		if ok {
			s = p.AddTo(base, tt.sign).Format(time.RFC3339)
		}
		if s != tt.want {
			t.Errorf("ParseInterval(%q).AddTo(%v, %d) = %q; want %q", tt.in, base, tt.sign, s, tt.want)
		}
	}
}

// The stable order adds no ORDER BY key Socrata refuses to sort by (I
// isOrdered): a grouped query's point key is left out, its text key kept.
func TestWithStableOrderForLeavesOutUnorderableKeys(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"SELECT pt, t, count(*) AS c GROUP BY pt, t", "SELECT pt, t, count(*) AS c GROUP BY pt, t ORDER BY t"},
		{"SELECT loc AS l, count(*) AS c GROUP BY loc ORDER BY c DESC", "SELECT loc AS l, count(*) AS c GROUP BY loc ORDER BY c DESC"},
		{"SELECT t, count(*) AS c GROUP BY t", "SELECT t, count(*) AS c GROUP BY t ORDER BY t"},
		{"SELECT t, n", "SELECT t, n ORDER BY :id"},
	}
	for _, tt := range tests {
		q, err := Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.WithStableOrderFor(everyType).String(); got != tt.want {
			t.Errorf("WithStableOrderFor(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
