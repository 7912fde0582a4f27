package soqlsqlite

import (
	"fmt"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// This file translates SoQL function calls. Each function is one entry of
// scalarFunctions or aggregateFunctions: adding a function is adding an
// entry. Which names are aggregates is soql's decision (soql.IsAggregate);
// an aggregate SoQL knows but this file does not translate is answered with
// a query.soql.unsupported error.

// function translates calls of one scalar SoQL function.
type function struct {
	// arity lists the accepted argument counts; nil accepts any count and
	// leaves the check to translate.
	arity []int
	// translate builds the call from the translated arguments. The caller
	// marks the result as aggregated when an argument is.
	translate func(tr *translator, n *soql.Call, args []typed) (typed, error)
}

// scalarFunctions are the scalar SoQL functions, by lower-case name.
var scalarFunctions = map[string]function{
	"upper":       sqlFunction(1, KindText, "upper(%s)"),
	"lower":       sqlFunction(1, KindText, "lower(%s)"),
	"abs":         sqlFunction(1, KindNumber, "abs(%s)"),
	"length":      sqlFunction(1, KindNumber, "length(%s)"),
	"starts_with": sqlFunction(2, KindBool, "(instr(%s, %s) = 1)"),
	"contains":    sqlFunction(2, KindBool, "(instr(%s, %s) > 0)"),

	// Timestamps are stored as fixed-width text (see storage.go), so truncating
	// and extracting are substrings of it.
	"date_trunc_y":     sqlFunction(1, KindFloating, "(CASE WHEN %[1]s IS NULL THEN NULL ELSE substr(%[1]s, 1, 4) || '-01-01T00:00:00.000' END)"),
	"date_trunc_ym":    sqlFunction(1, KindFloating, "(CASE WHEN %[1]s IS NULL THEN NULL ELSE substr(%[1]s, 1, 7) || '-01T00:00:00.000' END)"),
	"date_trunc_ymd":   sqlFunction(1, KindFloating, "(CASE WHEN %[1]s IS NULL THEN NULL ELSE substr(%[1]s, 1, 10) || 'T00:00:00.000' END)"),
	"date_extract_y":   sqlFunction(1, KindNumber, "CAST(substr(%s, 1, 4) AS INTEGER)"),
	"date_extract_m":   sqlFunction(1, KindNumber, "CAST(substr(%s, 6, 2) AS INTEGER)"),
	"date_extract_d":   sqlFunction(1, KindNumber, "CAST(substr(%s, 9, 2) AS INTEGER)"),
	"date_extract_hh":  sqlFunction(1, KindNumber, "CAST(substr(%s, 12, 2) AS INTEGER)"),
	"date_extract_mm":  sqlFunction(1, KindNumber, "CAST(substr(%s, 15, 2) AS INTEGER)"),
	"date_extract_ss":  sqlFunction(1, KindNumber, "CAST(substr(%s, 18, 2) AS INTEGER)"),
	"date_extract_dow": sqlFunction(1, KindNumber, "CAST(strftime('%%w', substr(%s, 1, 19)) AS INTEGER)"),
	"date_extract_woy": sqlFunction(1, KindNumber, "CAST(strftime('%%V', substr(%s, 1, 19)) AS INTEGER)"),

	"coalesce": {translate: coalesce},
	"case":     {translate: caseFunction},

	"within_circle":      {arity: []int{4}, translate: withinCircle},
	"within_box":         {arity: []int{5}, translate: withinBox},
	"distance_in_meters": {arity: []int{2}, translate: distanceInMeters},
}

// sqlFunction is a function of arity arguments whose SQL is format filled
// with the SQL of the arguments, giving a value of kind k.
func sqlFunction(arity int, k Kind, format string) function {
	return function{arity: []int{arity}, translate: func(_ *translator, _ *soql.Call, args []typed) (typed, error) {
		sqls := make([]any, len(args))
		for i, a := range args {
			sqls[i] = a.sql
		}
		return typed{sql: fmt.Sprintf(format, sqls...), kind: k}, nil
	}}
}

// aggregate translates calls of one aggregate SoQL function with one
// argument; distinct is "DISTINCT " for f(DISTINCT x), else "".
type aggregate func(tr *translator, n *soql.Call, distinct string, arg typed) (typed, error)

// aggregateFunctions are the aggregates (per soql.IsAggregate) that the
// portal translates, by lower-case name; count(*) is handled by call.
var aggregateFunctions = map[string]aggregate{
	"count": numberAggregate("count"),
	"sum":   numberAggregate("sum"),
	"avg":   numberAggregate("avg"),
	"min":   sameTypeAggregate("min"),
	"max":   sameTypeAggregate("max"),
	// SQLite has no standard deviation: Go aggregates registered in sqlfuncs.go.
	"stddev_pop":  numericAggregate("localportal_stddev_pop"),
	"stddev_samp": numericAggregate("localportal_stddev_samp"),
}

// numberAggregate is sqlName(x), a number, for any x.
func numberAggregate(sqlName string) aggregate {
	return func(_ *translator, _ *soql.Call, distinct string, arg typed) (typed, error) {
		return typed{sql: sqlName + "(" + distinct + arg.sql + ")", kind: KindNumber, agg: true}, nil
	}
}

// numericAggregate is sqlName(x), a number, for a number x.
func numericAggregate(sqlName string) aggregate {
	return func(tr *translator, n *soql.Call, distinct string, arg typed) (typed, error) {
		if arg.kind != KindNumber && arg.kind != KindNull {
			// The checker refused what Socrata refuses (soql's
			// signatures); median of text (F MedianDisc) remains.
			return typed{}, unsupported(tr, n.Args[0].Pos(), strings.ToLower(n.Name.Name)+" of a value that is not a number is not supported by the local portal")
		}
		return typed{sql: sqlName + "(" + distinct + arg.sql + ")", kind: KindNumber, agg: true}, nil
	}
}

// sameTypeAggregate is sqlName(x), of x's type (min and max; DISTINCT
// changes nothing for them).
func sameTypeAggregate(sqlName string) aggregate {
	return func(_ *translator, _ *soql.Call, _ string, arg typed) (typed, error) {
		return typed{sql: sqlName + "(" + arg.sql + ")", kind: arg.kind, soda2: arg.soda2, agg: true}, nil
	}
}

// call translates a function call: an aggregate (as soql.IsAggregate
// decides) or a scalar function.
func (tr *translator) call(n *soql.Call) (typed, error) {
	args := make([]typed, len(n.Args))
	anyAgg := false
	for i, a := range n.Args {
		t, err := tr.expr(a)
		if err != nil {
			return t, err
		}
		args[i] = t
		anyAgg = anyAgg || t.agg
	}
	name := strings.ToLower(n.Name.Name)
	if soql.IsAggregate(name) {
		return tr.aggregateCall(n, name, args, anyAgg)
	}
	f, ok := scalarFunctions[name]
	if !ok && soql.Signatures(name) != nil {
		// A function of Socrata's this portal does not translate.
		return typed{}, unsupported(tr, n.Name.NamePos, "function "+name+" is not supported by the local portal")
	}
	if ok && len(args) == 2 && strings.HasPrefix(name, "date_trunc_") && args[0].kind == KindFixed {
		// date_trunc_ym(fixed, zone) truncates the wall time in the zone
		// (F FixedTimeStampTruncYmAtTimeZone): a floating timestamp.
		args = []typed{{sql: "localportal_to_floating(" + args[0].sql + ", " + args[1].sql + ")", kind: KindFloating, agg: anyAgg}}
	}
	if ok && !n.Star && !arityOK(f.arity, len(args)) && soqlArity(name, len(args)) {
		return typed{}, unsupported(tr, n.Name.NamePos, fmt.Sprintf("%s with %d arguments is not supported by the local portal", name, len(args)))
	}
	if !ok || n.Star || !arityOK(f.arity, len(args)) {
		return typed{}, tr.noSuchFunction(n)
	}
	t, err := f.translate(tr, n, args)
	t.agg = t.agg || anyAgg
	return t, err
}

// soqlArity reports whether Socrata's rules have an overload of name that
// takes n arguments.
func soqlArity(name string, n int) bool {
	for _, s := range soql.Signatures(name) {
		if s.ArityOK(n) {
			return true
		}
	}
	return false
}

func arityOK(arity []int, n int) bool {
	if arity == nil {
		return true
	}
	for _, a := range arity {
		if a == n {
			return true
		}
	}
	return false
}

func (tr *translator) aggregateCall(n *soql.Call, name string, args []typed, nested bool) (typed, error) {
	translate, ok := aggregateFunctions[name]
	if _, two := twoArgAggregates[name]; two {
		ok = true
	}
	if !ok {
		return typed{}, unsupported(tr, n.Name.NamePos, "aggregate function "+name+" is not supported by the local portal")
	}
	if nested {
		return typed{}, tr.typeMismatch(n.Name.NamePos, "Aggregate function '"+name+"' cannot be nested in another aggregate")
	}
	if n.Star {
		if name != "count" {
			return typed{}, tr.noSuchFunction(n)
		}
		return typed{sql: "count(*)", kind: KindNumber, agg: true}, nil
	}
	if sqlName, ok := twoArgAggregates[name]; ok && len(args) == 2 {
		for i, a := range args {
			if a.kind != KindNumber && a.kind != KindNull {
				return typed{}, tr.typeMismatch(n.Args[i].Pos(), name+" needs numbers")
			}
		}
		return typed{sql: sqlName + "(" + args[0].sql + ", " + args[1].sql + ")", kind: KindNumber, agg: true}, nil
	}
	if len(args) != 1 {
		return typed{}, tr.noSuchFunction(n)
	}
	distinct := ""
	if n.Distinct {
		distinct = "DISTINCT "
	}
	return translate(tr, n, distinct, args[0])
}

// coalesce is coalesce(a, b, ...), of the kind of its first argument that
// is not the null literal.
func coalesce(tr *translator, n *soql.Call, args []typed) (typed, error) {
	if len(args) == 0 {
		return typed{}, tr.noSuchFunction(n)
	}
	kind := KindNull
	parts := make([]string, 0, len(args))
	for _, a := range args {
		if kind == KindNull {
			kind = a.kind
		}
		parts = append(parts, a.sql)
	}
	if len(parts) == 1 {
		return typed{sql: parts[0], kind: kind}, nil
	}
	return typed{sql: "coalesce(" + strings.Join(parts, ", ") + ")", kind: kind}, nil
}

// caseFunction is case(cond1, value1, cond2, value2, ...).
func caseFunction(tr *translator, n *soql.Call, args []typed) (typed, error) {
	if len(args) == 0 || len(args)%2 != 0 {
		return typed{}, tr.noSuchFunction(n)
	}
	var b strings.Builder
	b.WriteString("(CASE")
	kind := KindNull
	for i := 0; i < len(args); i += 2 {
		if kind == KindNull {
			kind = args[i+1].kind
		}
		b.WriteString(" WHEN " + args[i].sql + " THEN " + args[i+1].sql)
	}
	b.WriteString(" END)")
	return typed{sql: b.String(), kind: kind}, nil
}

// withinCircle is within_circle(location, lat, lon, radius_meters).
func withinCircle(tr *translator, n *soql.Call, args []typed) (typed, error) {
	lat, lon, ok := latLon(args[0])
	if !ok {
		return typed{}, unsupported(tr, n.Args[0].Pos(), "within_circle of this argument is not supported by the local portal (it takes a point or location column)")
	}
	return typed{sql: "(localportal_distance(" + lat + ", " + lon + ", " + args[1].sql + ", " + args[2].sql + ") <= " + args[3].sql + ")", kind: KindBool}, nil
}

// withinBox is within_box(location, lat1, lon1, lat2, lon2), corners in
// either order.
func withinBox(tr *translator, n *soql.Call, args []typed) (typed, error) {
	lat, lon, ok := latLon(args[0])
	if !ok {
		return typed{}, unsupported(tr, n.Args[0].Pos(), "within_box of this argument is not supported by the local portal (it takes a point or location column)")
	}
	a1, o1, a2, o2 := args[1].sql, args[2].sql, args[3].sql, args[4].sql
	return typed{sql: fmt.Sprintf("(%s BETWEEN min(%s, %s) AND max(%s, %s) AND %s BETWEEN min(%s, %s) AND max(%s, %s))",
		lat, a1, a2, a1, a2, lon, o1, o2, o1, o2), kind: KindBool}, nil
}

// distanceInMeters is distance_in_meters(point, point), the second point
// possibly a 'POINT (lon lat)' literal.
func distanceInMeters(tr *translator, n *soql.Call, args []typed) (typed, error) {
	lat1, lon1, ok := latLon(args[0])
	if !ok {
		return typed{}, unsupported(tr, n.Args[0].Pos(), "distance_in_meters of this argument is not supported by the local portal (it takes a point)")
	}
	lat2, lon2, ok := latLon(args[1])
	if !ok {
		lit, isLit := unparen(n.Args[1]).(*soql.StringLit)
		if !isLit {
			return typed{}, unsupported(tr, n.Args[1].Pos(), "distance_in_meters of this argument is not supported by the local portal (it takes a point)")
		}
		lo, la, ok := ParseWKTPoint(lit.Value)
		if !ok {
			return typed{}, tr.typeMismatch(n.Args[1].Pos(), "Cannot interpret "+lit.Raw+" as a point")
		}
		lat2, lon2 = FormatFloat(la), FormatFloat(lo)
	}
	return typed{sql: "localportal_distance(" + lat1 + ", " + lon1 + ", " + lat2 + ", " + lon2 + ")", kind: KindNumber}, nil
}
