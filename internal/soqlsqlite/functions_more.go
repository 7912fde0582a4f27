package soqlsqlite

import (
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"modernc.org/sqlite"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// This file holds the less common SoQL functions: the caseless_*
// family, greatest/least, ln/round, unaccent, get_utc_date, date_diff_d,
// to_floating_timestamp, within_polygon/intersects, extent, convex_hull,
// num_points, median, the regr_* aggregates, and the data transform
// functions a query plausibly uses (trim, pads, replace, title_case,
// point_latitude, url_url, to_number, ...). docs/soql-functions.md lists
// every documented function and whether it is supported.

func init() {
	for name, f := range moreScalarFunctions {
		scalarFunctions[name] = f
	}
	aggregateFunctions["median"] = numericAggregate("localportal_median")
	aggregateFunctions["extent"] = extentAggregate
	aggregateFunctions["convex_hull"] = convexHullAggregate
}

// twoArgAggregates are the aggregates of (y, x), by name.
var twoArgAggregates = map[string]string{
	"regr_slope":     "localportal_regr_slope",
	"regr_intercept": "localportal_regr_intercept",
	"regr_r2":        "localportal_regr_r2",
}

// extentAggregate is extent(point): the bounding box of the points, a
// GeoJSON MultiPolygon. One Go aggregate reads each row's coordinates once
// (four SQL min/max would read them for each: 250,000 points took seconds
// more, and zero-result hints ask for extents).
func extentAggregate(tr *translator, n *soql.Call, _ string, arg typed) (typed, error) {
	lat, lon, ok := latLon(arg)
	if !ok {
		return typed{}, unsupported(tr, n.Args[0].Pos(), "extent of this argument is not supported by the local portal (it takes a point or location)")
	}
	return typed{sql: "localportal_extent(" + lon + ", " + lat + ")", kind: KindJSON, soda2: "multipolygon", agg: true}, nil
}

// convexHullAggregate is convex_hull(point): a GeoJSON Polygon.
func convexHullAggregate(tr *translator, n *soql.Call, _ string, arg typed) (typed, error) {
	lat, lon, ok := latLon(arg)
	if !ok {
		return typed{}, unsupported(tr, n.Args[0].Pos(), "convex_hull of this argument is not supported by the local portal (it takes a point or location)")
	}
	return typed{sql: "localportal_convex_hull(" + lon + ", " + lat + ")", kind: KindJSON, soda2: "polygon", agg: true}, nil
}

// moreScalarFunctions are merged into scalarFunctions.
var moreScalarFunctions = map[string]function{
	// Caseless comparisons fold case with Unicode rules (Go's, in SQL
	// through localportal_fold), as the portal's do.
	"caseless_eq":          sqlFunction(2, KindBool, "(localportal_fold(%s) = localportal_fold(%s))"),
	"caseless_ne":          sqlFunction(2, KindBool, "(localportal_fold(%s) != localportal_fold(%s))"),
	"caseless_starts_with": sqlFunction(2, KindBool, "(instr(localportal_fold(%s), localportal_fold(%s)) = 1)"),
	"caseless_contains":    sqlFunction(2, KindBool, "(instr(localportal_fold(%s), localportal_fold(%s)) > 0)"),
	"caseless_one_of":      {translate: caselessOneOf(false)},
	"caseless_not_one_of":  {translate: caselessOneOf(true)},

	// upper and lower follow Unicode (SQLite's change ASCII letters only).
	"upper": sqlFunction(1, KindText, "localportal_upper(%s)"),
	"lower": sqlFunction(1, KindText, "localportal_lower(%s)"),

	"greatest": {translate: extremum("localportal_greatest")},
	"least":    {translate: extremum("localportal_least")},
	"ln":       sqlFunction(1, KindNumber, "(CASE WHEN %[1]s > 0 THEN ln(%[1]s) END)"),
	"round":    {arity: []int{1, 2}, translate: roundFunction},
	"unaccent": sqlFunction(1, KindText, "localportal_unaccent(%s)"),

	"get_utc_date":          {arity: []int{0}, translate: utcNow},
	"get_date_utc":          {arity: []int{0}, translate: utcNow},
	"date_diff_d":           sqlFunction(2, KindNumber, "CAST(julianday(substr(%s, 1, 23)) - julianday(substr(%s, 1, 23)) AS INTEGER)"),
	"to_floating_timestamp": sqlFunction(2, KindFloating, "localportal_to_floating(%s, %s)"),

	"within_polygon": {arity: []int{2}, translate: withinPolygon},
	"intersects":     {arity: []int{2}, translate: withinPolygon},
	"num_points":     {arity: []int{1}, translate: numPoints},

	// Data transform functions that read well in a query.
	"trim":                           sqlFunction(1, KindText, "trim(%s)"),
	"trim_leading":                   sqlFunction(1, KindText, "ltrim(%s)"),
	"trim_trailing":                  sqlFunction(1, KindText, "rtrim(%s)"),
	"left_pad":                       sqlFunction(3, KindText, "localportal_pad(%s, %s, %s, 0)"),
	"right_pad":                      sqlFunction(3, KindText, "localportal_pad(%s, %s, %s, 1)"),
	"replace":                        sqlFunction(3, KindText, "replace(%s, %s, %s)"),
	"title_case":                     sqlFunction(1, KindText, "localportal_title(%s)"),
	"slice":                          sqlFunction(3, KindText, "substr(%s, (%s) + 1, %s)"),
	"to_number":                      sqlFunction(1, KindNumber, "CAST(%s AS NUMERIC)"),
	"to_text":                        sqlFunction(1, KindText, "localportal_text(%s)"),
	"is_null":                        sqlFunction(1, KindBool, "(%s IS NULL)"),
	"is_not_null":                    sqlFunction(1, KindBool, "(%s IS NOT NULL)"),
	"url_url":                        sqlFunction(1, KindText, "json_extract(%s, '$.url')"),
	"url_description":                sqlFunction(1, KindText, "json_extract(%s, '$.description')"),
	"point_latitude":                 {arity: []int{1}, translate: coordinate(true)},
	"point_longitude":                {arity: []int{1}, translate: coordinate(false)},
	"location_latitude":              {arity: []int{1}, translate: coordinate(true)},
	"location_longitude":             {arity: []int{1}, translate: coordinate(false)},
	"location_point":                 {arity: []int{1}, translate: locationPoint},
	"location_to_point":              {arity: []int{1}, translate: locationPoint},
	"location_address":               locationPart("address"),
	"location_city":                  locationPart("city"),
	"location_state":                 locationPart("state"),
	"location_zip":                   locationPart("zip"),
	"make_point":                     {arity: []int{2}, translate: makePoint},
	"floating_timestamp_year":        sqlFunction(1, KindNumber, "CAST(substr(%s, 1, 4) AS INTEGER)"),
	"floating_timestamp_month":       sqlFunction(1, KindNumber, "CAST(substr(%s, 6, 2) AS INTEGER)"),
	"floating_timestamp_day":         sqlFunction(1, KindNumber, "CAST(substr(%s, 9, 2) AS INTEGER)"),
	"floating_timestamp_hour":        sqlFunction(1, KindNumber, "CAST(substr(%s, 12, 2) AS INTEGER)"),
	"floating_timestamp_minute":      sqlFunction(1, KindNumber, "CAST(substr(%s, 15, 2) AS INTEGER)"),
	"floating_timestamp_second":      sqlFunction(1, KindNumber, "CAST(substr(%s, 18, 2) AS INTEGER)"),
	"floating_timestamp_day_of_week": sqlFunction(1, KindNumber, "CAST(strftime('%%w', substr(%s, 1, 19)) AS INTEGER)"),
}

// caselessOneOf is caseless_one_of(x, a, b, ...) and its negation.
func caselessOneOf(negate bool) func(tr *translator, n *soql.Call, args []typed) (typed, error) {
	return func(tr *translator, n *soql.Call, args []typed) (typed, error) {
		if len(args) < 2 {
			return typed{}, tr.noSuchFunction(n)
		}
		list := make([]string, 0, len(args)-1)
		for _, a := range args[1:] {
			list = append(list, "localportal_fold("+a.sql+")")
		}
		op := " IN ("
		if negate {
			op = " NOT IN ("
		}
		return typed{sql: "(localportal_fold(" + args[0].sql + ")" + op + strings.Join(list, ", ") + "))", kind: KindBool}, nil
	}
}

// extremum is greatest(...) or least(...): nulls are ignored, as in
// PostgreSQL; the kind is the first argument's.
func extremum(sqlName string) func(tr *translator, n *soql.Call, args []typed) (typed, error) {
	return func(tr *translator, n *soql.Call, args []typed) (typed, error) {
		if len(args) == 0 {
			return typed{}, tr.noSuchFunction(n)
		}
		parts := make([]string, len(args))
		kind := KindNull
		for i, a := range args {
			parts[i] = a.sql
			if kind == KindNull {
				kind = a.kind
			}
		}
		return typed{sql: sqlName + "(" + strings.Join(parts, ", ") + ")", kind: kind}, nil
	}
}

// roundFunction is round(x) or round(x, digits), half away from zero.
func roundFunction(_ *translator, _ *soql.Call, args []typed) (typed, error) {
	digits := "0"
	if len(args) == 2 {
		digits = args[1].sql
	}
	return typed{sql: "localportal_round(" + args[0].sql + ", " + digits + ")", kind: KindNumber}, nil
}

// utcNow is get_utc_date(): the time of the query, a fixed timestamp.
func utcNow(tr *translator, _ *soql.Call, _ []typed) (typed, error) {
	return typed{sql: QuoteString(FormatTimestamp(tr.now.UTC(), true)), kind: KindFixed}, nil
}

// withinPolygon is within_polygon(point, 'MULTIPOLYGON (...)') and
// intersects(point, 'POLYGON (...)'): the point column against a WKT
// polygon or multipolygon literal.
func withinPolygon(tr *translator, n *soql.Call, args []typed) (typed, error) {
	name := strings.ToLower(n.Name.Name)
	lat, lon, ok := latLon(args[0])
	if !ok {
		return typed{}, unsupported(tr, n.Args[0].Pos(), name+" of this argument is not supported by the local portal (it takes a point or location column)")
	}
	lit, isLit := unparen(n.Args[1]).(*soql.StringLit)
	if !isLit {
		return typed{}, unsupported(tr, n.Args[1].Pos(), name+" of this argument is not supported by the local portal (it takes a WKT POLYGON or MULTIPOLYGON literal)")
	}
	if _, err := parseWKTPolygons(lit.Value); err != nil {
		return typed{}, tr.typeMismatch(n.Args[1].Pos(), "Cannot interpret "+lit.Raw+" as a polygon: "+err.Error())
	}
	return typed{sql: "(localportal_in_polygon(" + lat + ", " + lon + ", " + QuoteString(lit.Value) + ") = 1)", kind: KindBool}, nil
}

// numPoints is num_points(geometry): 1 for a point or location, the number
// of positions of a stored GeoJSON shape.
func numPoints(tr *translator, n *soql.Call, args []typed) (typed, error) {
	switch args[0].kind {
	case KindPoint, KindLocation:
		return typed{sql: "(CASE WHEN " + args[0].sql + " IS NULL THEN NULL ELSE 1 END)", kind: KindNumber}, nil
	case KindJSON:
		return typed{sql: "localportal_num_points(" + args[0].sql + ")", kind: KindNumber}, nil
	}
	return typed{}, unsupported(tr, n.Args[0].Pos(), "num_points of this argument is not supported by the local portal (it takes a geometry)")
}

func coordinate(latitude bool) func(tr *translator, n *soql.Call, args []typed) (typed, error) {
	return func(tr *translator, n *soql.Call, args []typed) (typed, error) {
		lat, lon, ok := latLon(args[0])
		if !ok {
			return typed{}, tr.typeMismatch(n.Args[0].Pos(), strings.ToLower(n.Name.Name)+" needs a point or location")
		}
		if latitude {
			return typed{sql: lat, kind: KindNumber}, nil
		}
		return typed{sql: lon, kind: KindNumber}, nil
	}
}

func locationPoint(tr *translator, n *soql.Call, args []typed) (typed, error) {
	lat, lon, ok := latLon(args[0])
	if !ok {
		return typed{}, tr.typeMismatch(n.Args[0].Pos(), strings.ToLower(n.Name.Name)+" needs a location")
	}
	return typed{sql: pointSQL(lat, lon), kind: KindPoint}, nil
}

func makePoint(_ *translator, _ *soql.Call, args []typed) (typed, error) {
	return typed{sql: pointSQL(args[0].sql, args[1].sql), kind: KindPoint}, nil
}

// pointSQL builds GeoJSON point text from latitude and longitude SQL.
func pointSQL(lat, lon string) string {
	return "(CASE WHEN (" + lat + ") IS NULL OR (" + lon + ") IS NULL THEN NULL ELSE json_object('type', 'Point', 'coordinates', json_array(" +
		lon + ", " + lat + ")) END)"
}

func locationPart(part string) function {
	return function{arity: []int{1}, translate: func(tr *translator, n *soql.Call, args []typed) (typed, error) {
		if args[0].kind != KindLocation {
			return typed{}, tr.typeMismatch(n.Args[0].Pos(), strings.ToLower(n.Name.Name)+" needs a location")
		}
		return typed{sql: "json_extract(json_extract(" + args[0].sql + ", '$.human_address'), '$." + part + "')", kind: KindText}, nil
	}}
}

// sqlFunc is one Go function the SQL translation calls: its SQL name, its
// argument count (-1: any) and its body. Arguments and results are SQLite
// values; a nil result is SQL NULL.
type sqlFunc struct {
	name  string
	nargs int32
	fn    func(args []any) (any, error)
}

// sqlAggregate is one Go aggregate the SQL translation calls.
type sqlAggregate struct {
	name  string
	nargs int32
	make  func() sqlite.AggregateFunction
}

// sqlText reads a SQLite value as text; ok is false for NULL.
func sqlText(v any) (string, bool) {
	if v == nil {
		return "", false
	}
	if s, ok := v.(string); ok {
		return s, true
	}
	return FormatScalar(v), true
}

// textFunc is a function of one text argument, NULL for NULL.
func textFunc(name string, f func(string) string) sqlFunc {
	return sqlFunc{name: name, nargs: 1, fn: func(a []any) (any, error) {
		s, ok := sqlText(a[0])
		if !ok {
			return nil, nil
		}
		return f(s), nil
	}}
}

// moreSQLFuncs are the Go functions of this file's SoQL functions, one
// entry each; registerMoreFuncs installs them.
var moreSQLFuncs = []sqlFunc{
	// Unicode case folding, as the portal's caseless_* functions.
	textFunc("localportal_fold", func(s string) string { return strings.ToLower(strings.ToUpper(s)) }),
	textFunc("localportal_upper", strings.ToUpper),
	textFunc("localportal_lower", strings.ToLower),
	textFunc("localportal_unaccent", unaccent),
	textFunc("localportal_title", titleCase),
	{"localportal_pad", 4, padFunc},
	{"localportal_round", 2, roundFunc},
	{"localportal_to_floating", 2, toFloatingFunc},
	{"localportal_in_polygon", 3, inPolygonFunc},
	{"localportal_num_points", 1, numPointsFunc},
	{"localportal_greatest", -1, extremumFunc(true)},
	{"localportal_least", -1, extremumFunc(false)},
	{"localportal_ts_shift", 9, tsShiftFunc},
}

// moreSQLAggregates are the Go aggregates of this file's SoQL functions.
var moreSQLAggregates = []sqlAggregate{
	{"localportal_median", 1, func() sqlite.AggregateFunction { return &median{} }},
	{"localportal_regr_slope", 2, func() sqlite.AggregateFunction { return &regression{kind: "slope"} }},
	{"localportal_regr_intercept", 2, func() sqlite.AggregateFunction { return &regression{kind: "intercept"} }},
	{"localportal_regr_r2", 2, func() sqlite.AggregateFunction { return &regression{kind: "r2"} }},
	{"localportal_convex_hull", 2, func() sqlite.AggregateFunction { return &hull{} }},
	{"localportal_extent", 2, func() sqlite.AggregateFunction { return &extent{} }},
}

// registerMoreFuncs registers moreSQLFuncs with add, the helper of
// register, and moreSQLAggregates with the driver.
func registerMoreFuncs(add func(name string, n int32, fn func(args []any) (any, error))) []error {
	for _, f := range moreSQLFuncs {
		add(f.name, f.nargs, f.fn)
	}
	var errs []error
	for _, ag := range moreSQLAggregates {
		errs = append(errs, sqlite.RegisterFunction(ag.name, &sqlite.FunctionImpl{NArgs: ag.nargs, Deterministic: true,
			MakeAggregate: func(sqlite.FunctionContext) (sqlite.AggregateFunction, error) { return ag.make(), nil }}))
	}
	return errs
}

// padFunc is localportal_pad(s, n, pad, right): s with whole copies of
// pad on the left (right 0) or the right (right 1) until it has at least n
// characters. The result's length is known before it is built: one longer
// than maxValueBytes is an error (tooLong), never an allocation.
func padFunc(a []any) (any, error) {
	s, ok1 := sqlText(a[0])
	n, ok2 := ToFloat(a[1])
	pad, ok3 := sqlText(a[2])
	if !ok1 || !ok2 || !ok3 || pad == "" {
		return nil, nil
	}
	name := "left_pad"
	right, _ := a[3].(int64)
	if right == 1 {
		name = "right_pad"
	}
	have := utf8.RuneCountInString(s)
	// Every character is a byte at least: more missing characters than
	// the bound allows bytes is too long, whatever the pad.
	if n-float64(have) > maxValueBytes {
		return nil, tooLong(name, n)
	}
	missing := int(n) - have
	if missing <= 0 {
		return s, nil
	}
	per := utf8.RuneCountInString(pad)
	copies := (missing + per - 1) / per
	if len(s)+copies*len(pad) > maxValueBytes {
		return nil, tooLong(name, n)
	}
	if right == 1 {
		return s + strings.Repeat(pad, copies), nil
	}
	return strings.Repeat(pad, copies) + s, nil
}

// roundFunc is localportal_round(x, digits), half away from zero.
func roundFunc(a []any) (any, error) {
	x, ok1 := ToFloat(a[0])
	d, ok2 := ToFloat(a[1])
	if !ok1 || !ok2 {
		return nil, nil
	}
	p := math.Pow(10, math.Trunc(d))
	r := math.Round(x*p) / p
	if d <= 0 {
		return int64(r), nil
	}
	// Decimal digits, not binary noise.
	return strconv.ParseFloat(strconv.FormatFloat(r, 'f', int(d), 64), 64)
}

// toFloatingFunc is localportal_to_floating(fixed, zone).
func toFloatingFunc(a []any) (any, error) {
	s, ok1 := a[0].(string)
	zone, ok2 := a[1].(string)
	if !ok1 || !ok2 {
		return nil, nil
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, fmt.Errorf("to_floating_timestamp: unknown time zone %q", zone)
	}
	t, ok := ParseTimestamp(s)
	if !ok {
		return nil, nil
	}
	return FormatTimestamp(t.In(loc), false), nil
}

// inPolygonFunc is localportal_in_polygon(lat, lon, wkt): 1 inside, 0
// outside.
func inPolygonFunc(a []any) (any, error) {
	lat, ok1 := ToFloat(a[0])
	lon, ok2 := ToFloat(a[1])
	wkt, ok3 := a[2].(string)
	if !ok1 || !ok2 || !ok3 {
		return nil, nil
	}
	polys, err := cachedPolygons(wkt)
	if err != nil {
		return nil, err
	}
	if inPolygons(polys, lon, lat) {
		return int64(1), nil
	}
	return int64(0), nil
}

// numPointsFunc is localportal_num_points(geojson): the number of
// positions of a stored shape.
func numPointsFunc(a []any) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return nil, nil
	}
	var g struct {
		Coordinates json.RawMessage `json:"coordinates"`
	}
	if json.Unmarshal([]byte(s), &g) != nil {
		return nil, nil
	}
	// A position is a "[" followed by a number.
	n := int64(0)
	c := g.Coordinates
	for i := 0; i+1 < len(c); i++ {
		if c[i] == '[' && (c[i+1] == '-' || c[i+1] >= '0' && c[i+1] <= '9') {
			n++
		}
	}
	return n, nil
}

// extremumFunc is localportal_greatest (greatest) or localportal_least:
// nulls are ignored.
func extremumFunc(greatest bool) func(a []any) (any, error) {
	return func(a []any) (any, error) {
		var best any
		for _, v := range a {
			if v == nil {
				continue
			}
			if best == nil || (compareValues(v, best) > 0) == greatest && compareValues(v, best) != 0 {
				best = v
			}
		}
		return best, nil
	}
}

// tsShiftFunc is localportal_ts_shift(ts, years, months, days, hours,
// minutes, seconds, sign, fixed): a stored timestamp moved by an ISO
// period (soql.Period.AddTo), in the stored form of its type.
func tsShiftFunc(a []any) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return nil, nil
	}
	t, ok := ParseTimestamp(s)
	if !ok {
		return nil, nil
	}
	var f [8]float64
	for i := range f {
		if f[i], ok = ToFloat(a[i+1]); !ok {
			return nil, nil
		}
	}
	p := soql.Period{Years: int(f[0]), Months: int(f[1]), Days: int(f[2]), Hours: int(f[3]), Minutes: int(f[4]), Seconds: f[5]}
	return FormatTimestamp(p.AddTo(t, int(f[6])), f[7] == 1), nil
}

// compareValues orders two SQLite values: numerically when both are
// numbers, else as text.
func compareValues(a, b any) int {
	fa, okA := a.(float64)
	if i, ok := a.(int64); ok {
		fa, okA = float64(i), true
	}
	fb, okB := b.(float64)
	if i, ok := b.(int64); ok {
		fb, okB = float64(i), true
	}
	if okA && okB {
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	}
	return strings.Compare(FormatScalar(a), FormatScalar(b))
}

// unaccent drops combining marks after canonical decomposition: "Café" is
// "Cafe".
func unaccent(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}

// smallWords stay lower case inside a title (the data transform's rule,
// after the New York Times style guide).
var smallWords = map[string]bool{"a": true, "an": true, "and": true, "as": true, "at": true, "but": true, "by": true,
	"en": true, "for": true, "if": true, "in": true, "of": true, "on": true, "or": true, "the": true, "to": true, "v": true, "via": true, "vs": true}

func titleCase(s string) string {
	words := strings.Fields(strings.ToLower(s))
	for i, w := range words {
		if i > 0 && smallWords[w] {
			continue
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}

// polygon is one polygon's rings (the first the outer one), as [lon, lat].
type polygon [][][2]float64

var polygonCache sync.Map // WKT text -> []polygon

func cachedPolygons(wkt string) ([]polygon, error) {
	if v, ok := polygonCache.Load(wkt); ok {
		return v.([]polygon), nil
	}
	p, err := parseWKTPolygons(wkt)
	if err != nil {
		return nil, err
	}
	polygonCache.Store(wkt, p)
	return p, nil
}

// parseWKTPolygons reads "POLYGON ((x y, ...), (...))" or
// "MULTIPOLYGON (((x y, ...)), ...)".
func parseWKTPolygons(wkt string) ([]polygon, error) {
	s := strings.TrimSpace(wkt)
	up := strings.ToUpper(s)
	var body string
	multi := false
	switch {
	case strings.HasPrefix(up, "MULTIPOLYGON"):
		body, multi = strings.TrimSpace(s[len("MULTIPOLYGON"):]), true
	case strings.HasPrefix(up, "POLYGON"):
		body = strings.TrimSpace(s[len("POLYGON"):])
	default:
		return nil, errors.New("want POLYGON or MULTIPOLYGON")
	}
	// Turn the nested parentheses into JSON arrays of "x y" strings.
	var js strings.Builder
	depth := 0
	for _, r := range body {
		switch r {
		case '(':
			js.WriteString(`[`)
			depth++
		case ')':
			js.WriteString(`]`)
			depth--
		case ',':
			js.WriteString(`,`)
		default:
			js.WriteRune(r)
		}
	}
	text := js.String()
	// Quote the coordinate pairs: [[x y,x y]] -> [["x y","x y"]].
	var q strings.Builder
	inPair := false
	for _, r := range text {
		isNum := r == '-' || r == '.' || r == ' ' || r == 'e' || r == 'E' || r == '+' || (r >= '0' && r <= '9')
		switch {
		case isNum && !inPair && r != ' ':
			q.WriteString(`"`)
			q.WriteRune(r)
			inPair = true
		case !isNum && inPair:
			q.WriteString(`"`)
			q.WriteRune(r)
			inPair = false
		case r == ' ' && !inPair:
		default:
			q.WriteRune(r)
		}
	}
	var nested any
	if err := json.Unmarshal([]byte(q.String()), &nested); err != nil || depth != 0 {
		return nil, errors.New("unbalanced or malformed coordinates")
	}
	ringOf := func(v any) ([][2]float64, error) {
		pts, ok := v.([]any)
		if !ok || len(pts) < 3 {
			return nil, errors.New("a ring needs at least 3 points")
		}
		ring := make([][2]float64, 0, len(pts))
		for _, p := range pts {
			str, ok := p.(string)
			f := strings.Fields(str)
			if !ok || len(f) != 2 {
				return nil, fmt.Errorf("bad point %v", p)
			}
			x, err1 := strconv.ParseFloat(f[0], 64)
			y, err2 := strconv.ParseFloat(f[1], 64)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("bad point %q", str)
			}
			ring = append(ring, [2]float64{x, y})
		}
		return ring, nil
	}
	polyOf := func(v any) (polygon, error) {
		rings, ok := v.([]any)
		if !ok || len(rings) == 0 {
			return nil, errors.New("a polygon needs a ring")
		}
		var p polygon
		for _, r := range rings {
			ring, err := ringOf(r)
			if err != nil {
				return nil, err
			}
			p = append(p, ring)
		}
		return p, nil
	}
	top, ok := nested.([]any)
	if !ok {
		return nil, errors.New("malformed")
	}
	if !multi {
		p, err := polyOf(top)
		if err != nil {
			return nil, err
		}
		return []polygon{p}, nil
	}
	var out []polygon
	for _, v := range top {
		p, err := polyOf(v)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// inPolygons reports whether (x, y) is inside any polygon (inside the
// outer ring and outside its holes), by ray casting.
func inPolygons(polys []polygon, x, y float64) bool {
	inRing := func(ring [][2]float64) bool {
		in := false
		for i, j := 0, len(ring)-1; i < len(ring); j, i = i, i+1 {
			xi, yi, xj, yj := ring[i][0], ring[i][1], ring[j][0], ring[j][1]
			if (yi > y) != (yj > y) && x < (xj-xi)*(y-yi)/(yj-yi)+xi {
				in = !in
			}
		}
		return in
	}
	for _, p := range polys {
		if !inRing(p[0]) {
			continue
		}
		hole := false
		for _, h := range p[1:] {
			hole = hole || inRing(h)
		}
		if !hole {
			return true
		}
	}
	return false
}

// median is the median aggregate: the middle value, or the mean of the two
// middle values (PostgreSQL's percentile_cont(0.5)).
type median struct{ xs []float64 }

func (a *median) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	if x, ok := ToFloat(args[0]); ok {
		a.xs = append(a.xs, x)
	}
	return nil
}

func (a *median) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return errors.New("soqlsqlite: median is not a window function")
}

func (a *median) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if len(a.xs) == 0 {
		return nil, nil
	}
	sort.Float64s(a.xs)
	n := len(a.xs)
	if n%2 == 1 {
		return a.xs[n/2], nil
	}
	return (a.xs[n/2-1] + a.xs[n/2]) / 2, nil
}

func (a *median) Final(*sqlite.FunctionContext) {}

// regression is regr_slope, regr_intercept or regr_r2 of (y, x): least
// squares over the rows where both are numbers, as PostgreSQL computes them.
type regression struct {
	kind                     string
	n, sx, sy, sxx, syy, sxy float64
}

func (a *regression) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	y, ok1 := ToFloat(args[0])
	x, ok2 := ToFloat(args[1])
	if !ok1 || !ok2 {
		return nil
	}
	a.n++
	a.sx += x
	a.sy += y
	a.sxx += x * x
	a.syy += y * y
	a.sxy += x * y
	return nil
}

func (a *regression) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return errors.New("soqlsqlite: regression is not a window function")
}

func (a *regression) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if a.n == 0 {
		return nil, nil
	}
	vx := a.sxx - a.sx*a.sx/a.n
	vy := a.syy - a.sy*a.sy/a.n
	cxy := a.sxy - a.sx*a.sy/a.n
	if vx == 0 {
		return nil, nil
	}
	slope := cxy / vx
	switch a.kind {
	case "slope":
		return slope, nil
	case "intercept":
		return (a.sy - slope*a.sx) / a.n, nil
	default: // r2
		if vy == 0 {
			return 1.0, nil
		}
		return cxy * cxy / (vx * vy), nil
	}
}

func (a *regression) Final(*sqlite.FunctionContext) {}

// hull is the convex_hull aggregate of points given as (lon, lat): a
// GeoJSON Polygon (monotone chain), or null for fewer than 3 distinct
// points.
type hull struct{ pts [][2]float64 }

func (a *hull) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	x, ok1 := ToFloat(args[0])
	y, ok2 := ToFloat(args[1])
	if ok1 && ok2 {
		a.pts = append(a.pts, [2]float64{x, y})
	}
	return nil
}

func (a *hull) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return errors.New("soqlsqlite: convex_hull is not a window function")
}

func (a *hull) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	p := a.pts
	sort.Slice(p, func(i, j int) bool { return p[i][0] < p[j][0] || p[i][0] == p[j][0] && p[i][1] < p[j][1] })
	cross := func(o, a, b [2]float64) float64 { return (a[0]-o[0])*(b[1]-o[1]) - (a[1]-o[1])*(b[0]-o[0]) }
	var h [][2]float64
	for pass := 0; pass < 2; pass++ {
		start := len(h)
		for i := range p {
			q := p[i]
			if pass == 1 {
				q = p[len(p)-1-i]
			}
			for len(h) >= start+2 && cross(h[len(h)-2], h[len(h)-1], q) <= 0 {
				h = h[:len(h)-1]
			}
			h = append(h, q)
		}
		h = h[:len(h)-1]
	}
	if len(h) < 3 {
		return nil, nil
	}
	ring := make([][]float64, 0, len(h)+1)
	for _, q := range append(h, h[0]) {
		ring = append(ring, []float64{q[0], q[1]})
	}
	b, err := json.Marshal(map[string]any{"type": "Polygon", "coordinates": [][][]float64{ring}})
	return string(b), err
}

func (a *hull) Final(*sqlite.FunctionContext) {}

// extent is localportal_extent(lon, lat): the bounding box of the points
// as a GeoJSON MultiPolygon, NULL without a point.
type extent struct {
	n                      int64
	minX, minY, maxX, maxY float64
}

func (a *extent) Step(_ *sqlite.FunctionContext, args []driver.Value) error {
	x, ok1 := ToFloat(args[0])
	y, ok2 := ToFloat(args[1])
	if !ok1 || !ok2 {
		return nil
	}
	if a.n == 0 {
		a.minX, a.maxX, a.minY, a.maxY = x, x, y, y
	}
	a.n++
	a.minX, a.maxX = math.Min(a.minX, x), math.Max(a.maxX, x)
	a.minY, a.maxY = math.Min(a.minY, y), math.Max(a.maxY, y)
	return nil
}

func (a *extent) WindowInverse(*sqlite.FunctionContext, []driver.Value) error {
	return errors.New("soqlsqlite: extent is not a window function")
}

func (a *extent) WindowValue(*sqlite.FunctionContext) (driver.Value, error) {
	if a.n == 0 {
		return nil, nil
	}
	ring := [][]float64{{a.minX, a.minY}, {a.maxX, a.minY}, {a.maxX, a.maxY}, {a.minX, a.maxY}, {a.minX, a.minY}}
	b, err := json.Marshal(map[string]any{"type": "MultiPolygon", "coordinates": [][][][]float64{{ring}}})
	return string(b), err
}

func (a *extent) Final(*sqlite.FunctionContext) {}
