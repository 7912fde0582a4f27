package hints

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Every zero explained, beyond text literals (hints.go):
//
//   - a spatial filter (within_circle, within_box, within_polygon,
//     intersects) whose coordinates look swapped (the longitude where the
//     latitude goes: within_circle takes latitude, longitude; WKT writes
//     longitude latitude) or fall outside the points of the column: the
//     hint gives the column's extent and the call with the coordinates
//     swapped;
//   - a number or date compared with a value outside the column's range
//     (supervisor_district = -1, incident_date > '2030-01-01'): the hint
//     gives the range;
//   - the spatial extents and ranges come from one request ("the
//     profile", at most profileColumns columns);
//   - when no condition alone explains the zero: a later stage that keeps
//     none of the first's rows, OFFSET past the end (one count without
//     it), HAVING that excludes every group (one count of the groups), a
//     SEARCH that matches nothing (one count without it), or conditions
//     that each match rows but not together (one request counting each
//     condition alone); at most two of these requests;
//   - a dataset with no rows at all (its schema's row count is 0): said,
//     with no request.
//
// A failed request only means fewer hints.

const (
	profileColumns    = 6 // columns whose extent or range the profile reads
	maxConjuncts      = 6 // conditions counted alone
	maxFallbackAsks   = 2 // requests of the fallbacks, at most
	maxWKTShown       = 160
	metresPerDegree   = 111_320.0
	coordinateDecimal = 4 // decimals of the coordinates a hint writes
)

// ZeroHint is a hint of this file: a spatial filter, a range, a clause or
// the dataset that explains an empty answer.
type ZeroHint struct {
	// Kind is "spatial_swapped", "spatial_outside", "out_of_range",
	// "offset_past_end", "having_excludes_all", "search_matches_none",
	// "later_stage_excludes_all", "conditions_together" or
	// "empty_dataset".
	Kind      string `json:"kind"`
	Condition string `json:"condition,omitempty"` // the condition, as SoQL
	Column    string `json:"column,omitempty"`
	// Fix is the condition with its coordinates swapped
	// (spatial_swapped).
	Fix string `json:"fix,omitempty"`
	// Extent is the bounding box of the column's points (spatial kinds).
	Extent *Extent `json:"extent,omitempty"`
	// Min and Max are the column's range (out_of_range).
	Min string `json:"min,omitempty"`
	Max string `json:"max,omitempty"`
	// Counts are each condition's rows alone (conditions_together), or
	// the rows or groups without the clause (offset_past_end,
	// having_excludes_all).
	Counts  map[string]int64 `json:"counts,omitempty"`
	Message string           `json:"message"`
}

// HintMessage is the sentence the answer's summary says.
func (h ZeroHint) HintMessage() string { return h.Message }

// Extent is a bounding box in degrees.
type Extent struct {
	MinLatitude  float64 `json:"min_latitude"`
	MaxLatitude  float64 `json:"max_latitude"`
	MinLongitude float64 `json:"min_longitude"`
	MaxLongitude float64 `json:"max_longitude"`
	// placeholders: the points at 0, 0 were left out of the box.
	placeholders bool
}

// reachesZero says the box stretches from far away to 0, 0: a dataset
// whose missing locations are written as the point 0, 0 (DataSF's food
// truck permits have dozens), whose extent() then runs from the
// Gulf of Guinea to the city and says nothing about where the points lie.
func (e Extent) reachesZero() bool {
	const near = 0.01 // degrees
	return e.MinLatitude <= near && e.MaxLatitude >= -near && e.MinLongitude <= near && e.MaxLongitude >= -near &&
		(e.MaxLatitude-e.MinLatitude > 1 || e.MaxLongitude-e.MinLongitude > 1)
}

func (e Extent) intersects(o Extent) bool {
	return e.MinLatitude <= o.MaxLatitude && o.MinLatitude <= e.MaxLatitude &&
		e.MinLongitude <= o.MaxLongitude && o.MinLongitude <= e.MaxLongitude
}

func (e Extent) swapped() Extent {
	return Extent{MinLatitude: e.MinLongitude, MaxLatitude: e.MaxLongitude, MinLongitude: e.MinLatitude, MaxLongitude: e.MaxLatitude}
}

func (e Extent) valid() bool {
	return e.MinLatitude >= -90 && e.MaxLatitude <= 90 && e.MinLongitude >= -180 && e.MaxLongitude <= 180
}

// words describes the extent: "latitude 37.7079 to 37.8299, longitude
// -122.5136 to -122.3649".
func (e Extent) words() string {
	w := fmt.Sprintf("latitude %s to %s, longitude %s to %s", coord(e.MinLatitude), coord(e.MaxLatitude), coord(e.MinLongitude), coord(e.MaxLongitude))
	if e.placeholders {
		w += " (leaving out points at 0, 0, which stand for a missing location)"
	}
	return w
}

func coord(f float64) string { return strconv.FormatFloat(f, 'f', coordinateDecimal, 64) }

// distanceKm is the great-circle distance from (lat, lon) to the nearest
// point of the extent, roughly (to its box's nearest corner or edge).
func (e Extent) distanceKm(lat, lon float64) float64 {
	clat := math.Max(e.MinLatitude, math.Min(lat, e.MaxLatitude))
	clon := math.Max(e.MinLongitude, math.Min(lon, e.MaxLongitude))
	const r = 6371.0
	p1, p2 := lat*math.Pi/180, clat*math.Pi/180
	dp, dl := (clat-lat)*math.Pi/180, (clon-lon)*math.Pi/180
	a := math.Sin(dp/2)*math.Sin(dp/2) + math.Cos(p1)*math.Cos(p2)*math.Sin(dl/2)*math.Sin(dl/2)
	return 2 * r * math.Asin(math.Sqrt(math.Min(1, a)))
}

// spatialTerm is a spatial filter of the WHERE: the call, its column and
// the shape it asks for as written (latitudes and longitudes as the
// function reads them).
type spatialTerm struct {
	call   *soql.Call
	column string
	box    Extent // the shape's bounding box as written
	// lat, lon is the shape's centre (within_circle) or first point.
	lat, lon float64
	fix      string // the call with its coordinates swapped ("" when too long)
	wkt      bool
}

// rangeTerm is a number or date column compared with a literal.
type rangeTerm struct {
	expr   soql.Expr // the comparison, for its text
	column string
	date   bool
	op     string // =, <, <=, >, >=, between
	lo, hi string // the literal (lo; hi for between)
}

// coordinates are the numbers of a WKT literal.
var wktNumber = regexp.MustCompile(`[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?`)

// wktPair is two numbers of a WKT literal, x then y.
var wktPair = regexp.MustCompile(`([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(\s+)([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)`)

// number reads a numeric literal (a sign and parentheses allowed) and its
// text.
func number(e soql.Expr) (float64, string, bool) {
	e = unparen(e)
	sign := ""
	if u, ok := e.(*soql.Unary); ok && (u.Op == "-" || u.Op == "+") {
		sign = u.Op
		e = unparen(u.X)
	}
	n, ok := e.(*soql.NumberLit)
	if !ok {
		return 0, "", false
	}
	f, err := strconv.ParseFloat(n.Raw, 64)
	if err != nil {
		return 0, "", false
	}
	if sign == "-" {
		f = -f
	}
	return f, strings.TrimPrefix(sign, "+") + n.Raw, true
}

func unparen(e soql.Expr) soql.Expr {
	for {
		p, ok := e.(*soql.Paren)
		if !ok {
			return e
		}
		e = p.X
	}
}

// conjuncts are the conditions a WHERE ANDs together.
func conjuncts(e soql.Expr) []soql.Expr {
	e = unparen(e)
	if b, ok := e.(*soql.Binary); ok && b.Op == "and" {
		return append(conjuncts(b.Left), conjuncts(b.Right)...)
	}
	if e == nil {
		return nil
	}
	return []soql.Expr{e}
}

// columnTypes maps canonical column names to their field name and type.
type columnTypes map[string]struct{ field, typ string }

func typesOf(sc *socrata.Schema) columnTypes {
	m := columnTypes{}
	for _, c := range sc.Columns {
		m[fuzzymatch.Canonical(c.FieldName)] = struct{ field, typ string }{c.FieldName, socrata.ColumnType(c.DataType)}
	}
	return m
}

// column returns the field name and type of a column reference.
func (m columnTypes) column(e soql.Expr, aliases map[string]bool) (string, string) {
	id, ok := unparen(e).(*soql.Ident)
	if !ok || id.System() || aliases[fuzzymatch.Canonical(id.Name)] {
		return "", ""
	}
	c, ok := m[fuzzymatch.Canonical(id.Name)]
	if !ok {
		return "", ""
	}
	return c.field, c.typ
}

// spatialAndRangeTerms collects the spatial filters and the range
// comparisons of the first stage's WHERE (not under NOT).
func spatialAndRangeTerms(q *soql.Query, sc *socrata.Schema) ([]spatialTerm, []rangeTerm) {
	if len(q.Stages) == 0 || q.Stages[0].Where == nil {
		return nil, nil
	}
	types := typesOf(sc)
	aliases := map[string]bool{}
	for _, it := range q.Stages[0].Selection {
		if it.Alias != nil {
			aliases[fuzzymatch.Canonical(it.Alias.Name)] = true
		}
	}
	var spatial []spatialTerm
	var ranges []rangeTerm
	soql.Walk(q.Stages[0].Where, func(e soql.Expr) bool {
		switch n := e.(type) {
		case *soql.Unary:
			return n.Op != "not"
		case *soql.Call:
			if t, ok := spatialCall(n, types, aliases); ok {
				spatial = append(spatial, t)
			}
		case *soql.Binary:
			switch n.Op {
			case "=", "<", "<=", ">", ">=":
				if t, ok := rangeComparison(n, n.Op, n.Left, n.Right, types, aliases); ok {
					ranges = append(ranges, t)
				} else if t, ok := rangeComparison(n, flip(n.Op), n.Right, n.Left, types, aliases); ok {
					ranges = append(ranges, t)
				}
			}
		case *soql.Between:
			if n.Not {
				return true
			}
			col, typ := types.column(n.X, aliases)
			lo, okLo := literal(n.Lo, typ)
			hi, okHi := literal(n.Hi, typ)
			if col != "" && okLo && okHi {
				ranges = append(ranges, rangeTerm{expr: n, column: col, date: isDate(typ), op: "between", lo: lo, hi: hi})
			}
		}
		return true
	})
	return spatial, ranges
}

func flip(op string) string {
	switch op {
	case "<":
		return ">"
	case "<=":
		return ">="
	case ">":
		return "<"
	case ">=":
		return "<="
	}
	return op
}

func isDate(typ string) bool { return typ == "floating_timestamp" || typ == "fixed_timestamp" }

// literal reads the literal a column of type typ is compared with: a
// number for number columns, a quoted date for date columns.
func literal(e soql.Expr, typ string) (string, bool) {
	switch {
	case typ == "number" || typ == "double":
		_, raw, ok := number(e)
		return raw, ok
	case isDate(typ):
		s, ok := unparen(e).(*soql.StringLit)
		if !ok {
			return "", false
		}
		return s.Value, true
	}
	return "", false
}

func rangeComparison(e soql.Expr, op string, colExpr, litExpr soql.Expr, types columnTypes, aliases map[string]bool) (rangeTerm, bool) {
	col, typ := types.column(colExpr, aliases)
	if col == "" {
		return rangeTerm{}, false
	}
	lit, ok := literal(litExpr, typ)
	if !ok {
		return rangeTerm{}, false
	}
	return rangeTerm{expr: e, column: col, date: isDate(typ), op: op, lo: lit}, true
}

// spatialCall reads within_circle(col, lat, lon, r), within_box(col,
// lat1, lon1, lat2, lon2), within_polygon(col, 'WKT') and intersects(col,
// 'WKT') with literal coordinates.
func spatialCall(n *soql.Call, types columnTypes, aliases map[string]bool) (spatialTerm, bool) {
	name := strings.ToLower(n.Name.Name)
	if len(n.Args) == 0 {
		return spatialTerm{}, false
	}
	col, typ := types.column(n.Args[0], aliases)
	switch typ {
	case "point", "location", "multipoint", "line", "multiline", "polygon", "multipolygon":
	default:
		return spatialTerm{}, false
	}
	t := spatialTerm{call: n, column: col}
	nums := func(args []soql.Expr) ([]float64, []string, bool) {
		f := make([]float64, len(args))
		raw := make([]string, len(args))
		for i, a := range args {
			var ok bool
			if f[i], raw[i], ok = number(a); !ok {
				return nil, nil, false
			}
		}
		return f, raw, true
	}
	colText := soql.Format(n.Args[0])
	switch {
	case name == "within_circle" && len(n.Args) == 4:
		f, raw, ok := nums(n.Args[1:])
		if !ok {
			return spatialTerm{}, false
		}
		t.lat, t.lon = f[0], f[1]
		dlat := f[2] / metresPerDegree
		dlon := dlat
		if c := math.Cos(t.lat * math.Pi / 180); math.Abs(t.lat) < 89 {
			dlon = dlat / c
		}
		t.box = Extent{MinLatitude: t.lat - dlat, MaxLatitude: t.lat + dlat, MinLongitude: t.lon - dlon, MaxLongitude: t.lon + dlon}
		t.fix = fmt.Sprintf("%s(%s, %s, %s, %s)", n.Name.Name, colText, raw[1], raw[0], raw[2])
	case name == "within_box" && len(n.Args) == 5:
		f, raw, ok := nums(n.Args[1:])
		if !ok {
			return spatialTerm{}, false
		}
		t.lat, t.lon = f[0], f[1]
		t.box = Extent{MinLatitude: math.Min(f[0], f[2]), MaxLatitude: math.Max(f[0], f[2]), MinLongitude: math.Min(f[1], f[3]), MaxLongitude: math.Max(f[1], f[3])}
		t.fix = fmt.Sprintf("%s(%s, %s, %s, %s, %s)", n.Name.Name, colText, raw[1], raw[0], raw[3], raw[2])
	case (name == "within_polygon" || name == "intersects") && len(n.Args) == 2:
		s, ok := unparen(n.Args[1]).(*soql.StringLit)
		if !ok {
			return spatialTerm{}, false
		}
		vals := wktNumber.FindAllString(s.Value, -1)
		if len(vals) < 2 || len(vals)%2 != 0 {
			return spatialTerm{}, false
		}
		t.wkt = true
		first := true
		for i := 0; i < len(vals); i += 2 {
			x, err1 := strconv.ParseFloat(vals[i], 64)
			y, err2 := strconv.ParseFloat(vals[i+1], 64)
			if err1 != nil || err2 != nil {
				return spatialTerm{}, false
			}
			if first {
				t.box = Extent{MinLatitude: y, MaxLatitude: y, MinLongitude: x, MaxLongitude: x}
				t.lat, t.lon, first = y, x, false
			}
			t.box.MinLatitude, t.box.MaxLatitude = math.Min(t.box.MinLatitude, y), math.Max(t.box.MaxLatitude, y)
			t.box.MinLongitude, t.box.MaxLongitude = math.Min(t.box.MinLongitude, x), math.Max(t.box.MaxLongitude, x)
		}
		swapped := wktPair.ReplaceAllString(s.Value, "${3}${2}${1}")
		if len(swapped) <= maxWKTShown {
			t.fix = fmt.Sprintf("%s(%s, '%s')", n.Name.Name, colText, strings.ReplaceAll(swapped, "'", "''"))
		}
	default:
		return spatialTerm{}, false
	}
	return t, true
}

// condition is a condition's SoQL text, cut for a sentence.
func condition(e soql.Expr) string { return clip(soql.Format(e), maxWKTShown) }

// spatialHint explains a spatial filter, knowing the column's extent
// (nil when unknown): nil when nothing is wrong with it that the hint can
// see.
func spatialHint(t spatialTerm, extent *Extent) *ZeroHint {
	name := strings.ToLower(t.call.Name.Name)
	call := condition(t.call)
	order := name + " takes the latitude first, then the longitude"
	if t.wkt {
		order = "WKT writes each point longitude first, then latitude (POINT (-122.4194 37.7749))"
	}
	fix := ""
	if t.fix != "" {
		fix = " Swapped: " + t.fix + "."
	} else {
		fix = " Swap the two numbers of every point."
	}
	h := &ZeroHint{Condition: call, Column: t.column, Extent: extent}
	where := ""
	if extent != nil {
		where = fmt.Sprintf("; the points of %s lie at %s", t.column, extent.words())
	}
	sw := t.box.swapped()
	switch {
	case extent != nil && t.box.intersects(*extent):
		return nil // the filter reaches the points: another condition excludes them
	case !t.box.valid() && sw.valid():
		// Surely swapped: a latitude past 90 degrees.
		h.Kind, h.Fix = "spatial_swapped", t.fix
		bad := t.lat
		if math.Abs(bad) <= 90 {
			bad = t.box.MinLatitude
			if math.Abs(bad) <= 90 {
				bad = t.box.MaxLatitude
			}
		}
		h.Message = fmt.Sprintf("%s matches no row: %s, and %s is no latitude.%s", call, order, coord(bad), fix)
		switch {
		case extent != nil && !sw.intersects(*extent):
			h.Message += fmt.Sprintf(" Even swapped, it lies outside the points of %s, which lie at %s.", t.column, extent.words())
		case extent != nil:
			h.Message += fmt.Sprintf(" The points of %s lie at %s.", t.column, extent.words())
		}
	case extent == nil:
		return nil
	case sw.valid() && sw.intersects(*extent):
		h.Kind, h.Fix = "spatial_swapped", t.fix
		h.Message = fmt.Sprintf("%s matches no row: %s%s, and the coordinates as written fall outside them: they look swapped.%s", call, order, where, fix)
	default:
		h.Kind = "spatial_outside"
		away := ""
		if t.box.valid() {
			away = fmt.Sprintf(", about %s km from the ones given", Thousands(int64(math.Round(extent.distanceKm(t.lat, t.lon)))))
		}
		h.Message = fmt.Sprintf("%s matches no row: the points of %s lie at %s%s. Use coordinates within them.", call, t.column, extent.words(), away)
	}
	return h
}

// normalDate writes a date literal or value as Socrata's floating
// timestamps are written, so that two compare as text: 2024 is
// 2024-01-01T00:00:00.000.
func normalDate(s string) string {
	s = strings.Replace(strings.TrimSpace(s), " ", "T", 1)
	const full = "0000-01-01T00:00:00.000"
	if len(s) < len(full) && len(s) >= 4 {
		s += full[len(s):]
	}
	if len(s) > len(full) {
		s = s[:len(full)]
	}
	return s
}

// compare compares two values of a range term's column: numbers as
// numbers, dates as their normal text.
func (t rangeTerm) compare(a, b string) (int, bool) {
	if t.date {
		return strings.Compare(normalDate(a), normalDate(b)), true
	}
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	switch {
	case x < y:
		return -1, true
	case x > y:
		return 1, true
	}
	return 0, true
}

// rangeHint explains a comparison with a value outside the column's range
// [lo, hi] (its min and max): nil when the value is within it.
func rangeHint(t rangeTerm, lo, hi string) *ZeroHint {
	c := func(a, b string) int {
		n, ok := t.compare(a, b)
		if !ok {
			return 0
		}
		return n
	}
	none := false
	switch t.op {
	case "=":
		none = c(t.lo, lo) < 0 || c(t.lo, hi) > 0
	case ">":
		none = c(t.lo, hi) >= 0
	case ">=":
		none = c(t.lo, hi) > 0
	case "<":
		none = c(t.lo, lo) <= 0
	case "<=":
		none = c(t.lo, lo) < 0
	case "between":
		none = c(t.hi, lo) < 0 || c(t.lo, hi) > 0 || c(t.lo, t.hi) > 0
	}
	if !none {
		return nil
	}
	cond := condition(t.expr)
	msg := fmt.Sprintf("%s matches no row: %s runs from %s to %s.", cond, t.column, lo, hi)
	if t.op == "between" && c(t.lo, t.hi) > 0 {
		msg = fmt.Sprintf("%s matches no row: BETWEEN takes the low end first (BETWEEN %s AND %s).", cond, t.hi, t.lo)
	}
	return &ZeroHint{Kind: "out_of_range", Condition: cond, Column: t.column, Min: lo, Max: hi, Message: msg}
}

// profile asks, in one request, the extents of the spatial terms' point
// columns and the ranges of the range terms' columns, and returns the
// hints they give.
func profile(ctx context.Context, client Portal, datasetID string, sc *socrata.Schema, spatial []spatialTerm, ranges []rangeTerm, log *slog.Logger) []dualresp.Hint {
	types := typesOf(sc)
	var items []string
	extentOf := map[string]string{} // column -> alias
	rangeOf := map[string]int{}     // column -> index
	for _, t := range spatial {
		typ := types[fuzzymatch.Canonical(t.column)].typ
		if _, ok := extentOf[t.column]; ok || len(items) >= 2*profileColumns || (typ != "point" && typ != "location") {
			continue
		}
		alias := fmt.Sprintf("hint_extent_%d", len(extentOf))
		extentOf[t.column] = alias
		items = append(items, fmt.Sprintf("extent(%s) AS %s", soql.Format(soql.Column(t.column)), alias))
	}
	for _, t := range ranges {
		if _, ok := rangeOf[t.column]; ok || len(items) >= 2*profileColumns {
			continue
		}
		i := len(rangeOf)
		rangeOf[t.column] = i
		col := soql.Format(soql.Column(t.column))
		items = append(items, fmt.Sprintf("min(%s) AS hint_min_%d", col, i), fmt.Sprintf("max(%s) AS hint_max_%d", col, i))
	}
	var row socrata.Row
	if len(items) > 0 {
		res, err := client.Query(ctx, datasetID, "SELECT "+strings.Join(items, ", "))
		switch {
		case err != nil:
			log.Debug("zero-result hints: the profile request failed", "dataset", datasetID, "err", err)
		case len(res.Rows) == 1:
			row = res.Rows[0]
		}
	}
	var out []dualresp.Hint
	extents := map[string]*Extent{}
	for _, t := range spatial {
		alias, ok := extentOf[t.column]
		if !ok || row == nil {
			continue
		}
		if _, done := extents[t.column]; !done {
			extents[t.column] = withoutZeros(ctx, client, datasetID, t.column, readExtent(row[alias]), log)
		}
	}
	for _, t := range spatial {
		ext := extents[t.column]
		if h := spatialHint(t, ext); h != nil {
			out = append(out, *h)
		}
	}
	for _, t := range ranges {
		i, ok := rangeOf[t.column]
		if !ok || row == nil {
			continue
		}
		lo, ok1 := row[fmt.Sprintf("hint_min_%d", i)].(string)
		hi, ok2 := row[fmt.Sprintf("hint_max_%d", i)].(string)
		if !ok1 || !ok2 {
			if f1, ok := row[fmt.Sprintf("hint_min_%d", i)].(float64); ok {
				lo, ok1 = strconv.FormatFloat(f1, 'f', -1, 64), true
			}
			if f2, ok := row[fmt.Sprintf("hint_max_%d", i)].(float64); ok {
				hi, ok2 = strconv.FormatFloat(f2, 'f', -1, 64), true
			}
		}
		if !ok1 || !ok2 {
			continue // no value at all: the empty dataset says it
		}
		if h := rangeHint(t, lo, hi); h != nil {
			out = append(out, *h)
		}
	}
	return out
}

// withoutZeros is ext, or when it reaches 0, 0 (placeholder points), the
// extent of column's other points, asked of the portal in one more
// request; nil when that fails, since the box with the placeholders
// would let any filter in the hemisphere's quarter look right.
func withoutZeros(ctx context.Context, client Portal, datasetID, column string, ext *Extent, log *slog.Logger) *Extent {
	if ext == nil || !ext.reachesZero() {
		return ext
	}
	col := soql.Format(soql.Column(column))
	res, err := client.Query(ctx, datasetID, fmt.Sprintf("SELECT extent(%s) AS hint_extent WHERE NOT within_circle(%s, 0, 0, %d)", col, col, zeroRadiusMeters))
	if err != nil || len(res.Rows) != 1 {
		log.Debug("zero-result hints: the extent without placeholder points failed", "dataset", datasetID, "column", column, "err", err)
		return nil
	}
	e := readExtent(res.Rows[0]["hint_extent"])
	if e == nil || e.reachesZero() {
		return nil
	}
	e.placeholders = true
	return e
}

// zeroRadiusMeters is how near 0, 0 a point counts as a placeholder.
const zeroRadiusMeters = 1000

// readExtent reads extent()'s GeoJSON (a MultiPolygon, or any geometry)
// as a bounding box; nil when it holds no point.
func readExtent(v any) *Extent {
	if s, ok := v.(string); ok { // some portals send geometries as text
		var m any
		if json.Unmarshal([]byte(s), &m) != nil {
			return nil
		}
		v = m
	}
	var e *Extent
	var walk func(x any)
	walk = func(x any) {
		switch a := x.(type) {
		case map[string]any:
			walk(a["coordinates"])
		case []any:
			if len(a) >= 2 {
				lon, ok1 := a[0].(float64)
				lat, ok2 := a[1].(float64)
				if ok1 && ok2 {
					if e == nil {
						e = &Extent{MinLatitude: lat, MaxLatitude: lat, MinLongitude: lon, MaxLongitude: lon}
					}
					e.MinLatitude, e.MaxLatitude = math.Min(e.MinLatitude, lat), math.Max(e.MaxLatitude, lat)
					e.MinLongitude, e.MaxLongitude = math.Min(e.MinLongitude, lon), math.Max(e.MaxLongitude, lon)
					return
				}
			}
			for _, y := range a {
				walk(y)
			}
		}
	}
	walk(v)
	return e
}

// countQuery runs a count query (its count is the "n" of its one row).
func countQuery(ctx context.Context, client Portal, datasetID, q string) (int64, bool) {
	res, err := client.Query(ctx, datasetID, q)
	if err != nil || len(res.Rows) != 1 {
		return 0, false
	}
	n, err := strconv.ParseInt(fmt.Sprint(res.Rows[0]["n"]), 10, 64)
	return n, err == nil
}

// fallbacks explain a zero no single condition explained: a later stage
// (after |>) that keeps none of the first's rows, OFFSET past the end,
// HAVING that excludes every group, a SEARCH that matches nothing,
// conditions that match only apart. At most maxFallbackAsks requests.
func fallbacks(ctx context.Context, client Portal, datasetID string, q *soql.Query, log *slog.Logger) []dualresp.Hint {
	if len(q.Stages) > 1 {
		first := &soql.Query{Stages: q.Clone().Stages[:1]}
		first.Stages[0].OrderBy = nil
		n, ok := countQuery(ctx, client, datasetID, first.String()+" |> SELECT count(*) AS n")
		switch {
		case ok && n > 0:
			return []dualresp.Hint{ZeroHint{Kind: "later_stage_excludes_all", Counts: map[string]int64{"first_stage": n},
				Message: fmt.Sprintf("The query's first stage has %s; its later stages (after |>) keep none of them.", rowsOf(n))}}
		case ok:
			// The first stage alone has no row: what empties it is
			// asked as of a query of one stage.
			return fallbacks(ctx, client, datasetID, first, log)
		}
		return nil
	}
	st := q.Stages[0]
	asks := 0
	// The query without OFFSET and LIMIT: how many rows does it have?
	if st.Limit != nil && *st.Limit == 0 {
		return []dualresp.Hint{ZeroHint{Kind: "offset_past_end", Condition: "LIMIT 0", Message: "LIMIT 0 asks for no row."}}
	}
	if st.Offset != nil && *st.Offset > 0 {
		all := q.Clone()
		all.Stages[0].Offset, all.Stages[0].Limit, all.Stages[0].OrderBy = nil, nil, nil
		asks++
		if n, ok := countQuery(ctx, client, datasetID, all.String()+" |> SELECT count(*) AS n"); ok && n > 0 && n <= *st.Offset {
			return []dualresp.Hint{ZeroHint{Kind: "offset_past_end", Condition: fmt.Sprintf("OFFSET %d", *st.Offset),
				Counts:  map[string]int64{"without_offset": n},
				Message: fmt.Sprintf("OFFSET %d is past the end: without it the query has %s.", *st.Offset, rowsOf(n))}}
		}
	}
	if st.Having != nil {
		groups := q.Clone()
		g := groups.Stages[0]
		g.Having, g.Offset, g.Limit, g.OrderBy = nil, nil, nil, nil
		asks++
		if n, ok := countQuery(ctx, client, datasetID, groups.String()+" |> SELECT count(*) AS n"); ok && n > 0 {
			return []dualresp.Hint{ZeroHint{Kind: "having_excludes_all", Condition: condition(st.Having),
				Counts:  map[string]int64{"groups_without_having": n},
				Message: fmt.Sprintf("HAVING %s excludes every group: without it the query has %s.", condition(st.Having), nouns(n, "group"))}}
		}
	}
	if st.Search != nil && asks < maxFallbackAsks {
		all := q.Clone()
		a := all.Stages[0]
		a.Search, a.Offset, a.Limit, a.OrderBy = nil, nil, nil, nil
		asks++
		if n, ok := countQuery(ctx, client, datasetID, all.String()+" |> SELECT count(*) AS n"); ok && n > 0 {
			search := "SEARCH '" + strings.ReplaceAll(*st.Search, "'", "''") + "'"
			return []dualresp.Hint{ZeroHint{Kind: "search_matches_none", Condition: search,
				Counts:  map[string]int64{"without_search": n},
				Message: fmt.Sprintf("%s matches none of the query's %s (SEARCH looks for the words in every text column).", search, rowsOf(n))}}
		}
	}
	conds := conjuncts(st.Where)
	if len(conds) < 2 || asks >= maxFallbackAsks {
		return nil
	}
	conds = conds[:min(len(conds), maxConjuncts)]
	items := make([]string, len(conds))
	for i, c := range conds {
		items[i] = fmt.Sprintf("sum(case(%s, 1, true, 0)) AS hint_alone_%d", soql.Format(c), i)
	}
	res, err := client.Query(ctx, datasetID, "SELECT "+strings.Join(items, ", "))
	if err != nil || len(res.Rows) != 1 {
		log.Debug("zero-result hints: counting the conditions alone failed", "dataset", datasetID, "err", err)
		return nil
	}
	counts := map[string]int64{}
	var parts, none []string
	for i, c := range conds {
		n, err := strconv.ParseInt(strings.TrimSuffix(fmt.Sprint(res.Rows[0][fmt.Sprintf("hint_alone_%d", i)]), ".0"), 10, 64)
		if err != nil {
			n = 0 // a sum of no row is null
		}
		text := condition(c)
		counts[text] = n
		parts = append(parts, fmt.Sprintf("%s: %s", text, rowsOf(n)))
		if n == 0 {
			none = append(none, text)
		}
	}
	msg := fmt.Sprintf("Each condition alone matches rows (%s), but no row meets them all together.", strings.Join(parts, "; "))
	switch len(none) {
	case 0:
	case 1:
		msg = fmt.Sprintf("%s matches no row by itself (alone: %s).", none[0], strings.Join(parts, "; "))
	default:
		msg = fmt.Sprintf("%s each match no row by itself (alone: %s).", strings.Join(none, " and "), strings.Join(parts, "; "))
	}
	return []dualresp.Hint{ZeroHint{Kind: "conditions_together", Counts: counts, Message: msg}}
}

// rowsOf is n rows: "1 row", "2,553 rows".
func rowsOf(n int64) string { return RowCount(n) }

// nouns is n and its noun in the number n takes.
func nouns(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return Thousands(n) + " " + noun + "s"
}

// emptyDataset is the hint of a dataset with no row at all.
func emptyDataset(datasetID string) dualresp.Hint {
	return ZeroHint{Kind: "empty_dataset",
		Message: fmt.Sprintf("The dataset %s has no rows at all (its row count is 0), so every query of it answers none.", datasetID)}
}
