package soqlsqlite

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// This file translates SoQL expressions into SQLite expressions; function
// calls are in functions.go.

// expr translates one expression.
func (tr *translator) expr(e soql.Expr) (typed, error) {
	switch n := e.(type) {
	case *soql.Ident:
		return tr.ident(n)
	case *soql.StringLit, *soql.NumberLit, *soql.BoolLit, *soql.NullLit:
		return literal(n), nil
	case *soql.Paren:
		return tr.paren(n)
	case *soql.Unary:
		return tr.unary(n)
	case *soql.Binary:
		return tr.binary(n)
	case *soql.In:
		return tr.in(n)
	case *soql.Between:
		return tr.between(n)
	case *soql.Like:
		return tr.like(n)
	case *soql.IsNull:
		return tr.isNull(n)
	case *soql.Cast:
		return tr.cast(n)
	case *soql.Dot:
		return tr.dot(n)
	case *soql.Case:
		return tr.caseExpr(n)
	case *soql.Call:
		return tr.call(n)
	case *soql.Index:
		return typed{}, unsupported(tr, e.Pos(), "subscripts (a[i]) are not supported by the local portal")
	default:
		return typed{}, unsupported(tr, e.Pos(), fmt.Sprintf("expression %T is not supported by the local portal", e))
	}
}

// literal translates a string, number, boolean or null literal.
func literal(e soql.Expr) typed {
	switch n := e.(type) {
	case *soql.StringLit:
		return typed{sql: QuoteString(n.Value), kind: KindText}
	case *soql.NumberLit:
		return typed{sql: numberSQL(n.Raw), kind: KindNumber}
	case *soql.BoolLit:
		if n.Value {
			return typed{sql: "1", kind: KindBool}
		}
		return typed{sql: "0", kind: KindBool}
	default:
		return typed{sql: "NULL", kind: KindNull}
	}
}

func (tr *translator) paren(n *soql.Paren) (typed, error) {
	t, err := tr.expr(n.X)
	if err != nil {
		return t, err
	}
	t.sql = "(" + t.sql + ")"
	return t, nil
}

func (tr *translator) unary(n *soql.Unary) (typed, error) {
	t, err := tr.expr(n.X)
	if err != nil {
		return t, err
	}
	switch n.Op {
	case "not":
		return typed{sql: "(NOT " + t.sql + ")", kind: KindBool, agg: t.agg}, nil
	case "-":
		return typed{sql: "(-" + t.sql + ")", kind: KindNumber, agg: t.agg}, nil
	default:
		return typed{sql: t.sql, kind: t.kind, agg: t.agg}, nil
	}
}

// not prefixes the SQL operator op with NOT when negate is set.
func not(negate bool, op string) string {
	if negate {
		return "NOT " + op
	}
	return op
}

func (tr *translator) in(n *soql.In) (typed, error) {
	x, err := tr.expr(n.X)
	if err != nil {
		return x, err
	}
	list := make([]string, 0, len(n.List))
	agg := x.agg
	for _, item := range n.List {
		t, err := tr.operand(item, x)
		if err != nil {
			return t, err
		}
		agg = agg || t.agg
		list = append(list, t.sql)
	}
	return typed{sql: "(" + x.sql + " " + not(n.Not, "IN") + " (" + strings.Join(list, ", ") + "))", kind: KindBool, agg: agg}, nil
}

func (tr *translator) between(n *soql.Between) (typed, error) {
	x, err := tr.expr(n.X)
	if err != nil {
		return x, err
	}
	lo, err := tr.operand(n.Lo, x)
	if err != nil {
		return lo, err
	}
	hi, err := tr.operand(n.Hi, x)
	if err != nil {
		return hi, err
	}
	return typed{sql: "(" + x.sql + " " + not(n.Not, "BETWEEN") + " " + lo.sql + " AND " + hi.sql + ")",
		kind: KindBool, agg: x.agg || lo.agg || hi.agg}, nil
}

func (tr *translator) like(n *soql.Like) (typed, error) {
	x, err := tr.expr(n.X)
	if err != nil {
		return x, err
	}
	if lit, ok := unparen(n.Pattern).(*soql.StringLit); ok {
		// Case-sensitive LIKE through GLOB, which SQLite runs natively.
		return typed{sql: "(" + x.sql + " " + not(n.Not, "GLOB") + " " + QuoteString(likeToGlob(lit.Value)) + ")", kind: KindBool, agg: x.agg}, nil
	}
	p, err := tr.expr(n.Pattern)
	if err != nil {
		return p, err
	}
	return typed{sql: "(" + not(n.Not, "localportal_like(") + x.sql + ", " + p.sql + "))", kind: KindBool, agg: x.agg || p.agg}, nil
}

func (tr *translator) isNull(n *soql.IsNull) (typed, error) {
	x, err := tr.expr(n.X)
	if err != nil {
		return x, err
	}
	op := " IS NULL"
	if n.Not {
		op = " IS NOT NULL"
	}
	return typed{sql: "(" + x.sql + op + ")", kind: KindBool, agg: x.agg}, nil
}

// caseExpr translates CASE WHEN ... THEN ... [ELSE ...] END; its kind is
// that of the first branch whose value is not the null literal.
func (tr *translator) caseExpr(n *soql.Case) (typed, error) {
	var b strings.Builder
	b.WriteString("(CASE")
	res := typed{kind: KindNull}
	branch := func(keyword string, e soql.Expr, isValue bool) error {
		v, err := tr.expr(e)
		if err != nil {
			return err
		}
		if isValue && res.kind == KindNull {
			res.kind = v.kind
		}
		res.agg = res.agg || v.agg
		b.WriteString(keyword + v.sql)
		return nil
	}
	for _, w := range n.Whens {
		if err := branch(" WHEN ", w.Cond, false); err != nil {
			return typed{}, err
		}
		if err := branch(" THEN ", w.Value, true); err != nil {
			return typed{}, err
		}
	}
	if n.Else != nil {
		if err := branch(" ELSE ", n.Else, true); err != nil {
			return typed{}, err
		}
	}
	b.WriteString(" END)")
	res.sql = b.String()
	return res, nil
}

func numberSQL(raw string) string {
	if _, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return raw
	}
	if f, err := strconv.ParseFloat(raw, 64); err == nil {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "NULL"
}

func (tr *translator) ident(n *soql.Ident) (typed, error) {
	key := fieldKey(n.Name)
	if t, ok := tr.aliases[key]; ok {
		return t, nil
	}
	if c, ok := tr.cols[key]; ok {
		return typed{sql: c.sql, kind: c.kind, soda2: c.soda2}, nil
	}
	return typed{}, tr.noSuchColumn(n)
}

// operand translates the other side of a comparison with x, converting a
// string literal to x's type as Socrata's analyzer does (soql's literal
// rules): a timestamp literal, partial ones included ('2023' is
// 2023-01-01T00:00:00), to the stored form so that it compares as a
// timestamp; a numeric string to a number; true, false, 1 or 0 to a
// boolean.
func (tr *translator) operand(e soql.Expr, x typed) (typed, error) {
	lit, ok := unparen(e).(*soql.StringLit)
	if !ok {
		return tr.expr(e)
	}
	switch x.kind {
	case KindFloating, KindFixed:
		fixed := x.kind == KindFixed
		t, ok := soql.ParseTimestamp(lit.Value, fixed)
		if !ok {
			return typed{}, tr.typeMismatch(lit.Pos(), fmt.Sprintf("Cannot interpret %s as a timestamp", lit.Raw))
		}
		return typed{sql: QuoteString(FormatTimestamp(t, fixed)), kind: x.kind}, nil
	case KindNumber:
		if f, err := strconv.ParseFloat(strings.TrimSpace(lit.Value), 64); err == nil {
			return typed{sql: strconv.FormatFloat(f, 'g', -1, 64), kind: KindNumber}, nil
		}
	case KindBool:
		if b, ok := soql.ParseBoolean(lit.Value); ok {
			if b {
				return typed{sql: "1", kind: KindBool}, nil
			}
			return typed{sql: "0", kind: KindBool}, nil
		}
	}
	return tr.expr(e)
}

// shiftTimestamp is ts + 'P1D' or ts - 'P1M': a timestamp moved by an ISO
// period literal (F TimeStampPlus, TimeStampMinus), of the timestamp's
// type. ok is false when n is not that form.
func (tr *translator) shiftTimestamp(n *soql.Binary, l typed) (typed, bool) {
	lit, isLit := unparen(n.Right).(*soql.StringLit)
	if !isLit || (n.Op != "+" && n.Op != "-") || (l.kind != KindFloating && l.kind != KindFixed) {
		return typed{}, false
	}
	p, ok := soql.ParseInterval(lit.Value)
	if !ok {
		return typed{}, false
	}
	sign := "+"
	if n.Op == "-" {
		sign = "-"
	}
	fixed := int64(0)
	if l.kind == KindFixed {
		fixed = 1
	}
	sql := fmt.Sprintf("localportal_ts_shift(%s, %d, %d, %d, %d, %d, %s, %s1, %d)", l.sql, p.Years, p.Months, p.Days, p.Hours, p.Minutes,
		strconv.FormatFloat(p.Seconds, 'g', -1, 64), sign, fixed)
	return typed{sql: sql, kind: l.kind, soda2: l.soda2, agg: l.agg}, true
}

var comparisonOps = map[string]string{"=": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

func (tr *translator) binary(n *soql.Binary) (typed, error) {
	if op, ok := comparisonOps[n.Op]; ok {
		l, err := tr.expr(n.Left)
		if err != nil {
			return l, err
		}
		r, err := tr.operand(n.Right, l)
		if err != nil {
			return r, err
		}
		if _, lit := unparen(n.Left).(*soql.StringLit); lit {
			// 'literal' op column: convert the left literal instead.
			if l2, err := tr.operand(n.Left, r); err == nil {
				l = l2
			}
		}
		return typed{sql: "(" + l.sql + " " + op + " " + r.sql + ")", kind: KindBool, agg: l.agg || r.agg}, nil
	}
	l, err := tr.expr(n.Left)
	if err != nil {
		return l, err
	}
	if t, ok := tr.shiftTimestamp(n, l); ok {
		return t, nil
	}
	r, err := tr.expr(n.Right)
	if err != nil {
		return r, err
	}
	agg := l.agg || r.agg
	switch n.Op {
	case "and":
		return typed{sql: "(" + l.sql + " AND " + r.sql + ")", kind: KindBool, agg: agg}, nil
	case "or":
		return typed{sql: "(" + l.sql + " OR " + r.sql + ")", kind: KindBool, agg: agg}, nil
	case "+", "-", "*", "%":
		return typed{sql: "(" + l.sql + " " + n.Op + " " + r.sql + ")", kind: KindNumber, agg: agg}, nil
	case "/":
		// SoQL numbers are decimals: 5/2 is 2.5, not SQLite's integer 2.
		return typed{sql: "(CAST(" + l.sql + " AS REAL) / " + r.sql + ")", kind: KindNumber, agg: agg}, nil
	case "^":
		return typed{sql: "localportal_pow(" + l.sql + ", " + r.sql + ")", kind: KindNumber, agg: agg}, nil
	case "||":
		return typed{sql: "(localportal_text(" + l.sql + ") || localportal_text(" + r.sql + "))", kind: KindText, agg: agg}, nil
	}
	return typed{}, unsupported(tr, n.OpPos, "operator "+n.Op+" is not supported by the local portal")
}

func (tr *translator) cast(n *soql.Cast) (typed, error) {
	x, err := tr.expr(n.X)
	if err != nil {
		return x, err
	}
	switch strings.ToLower(n.Type.Name) {
	case "number", "double", "money":
		return typed{sql: "CAST(" + x.sql + " AS NUMERIC)", kind: KindNumber, agg: x.agg}, nil
	case "text":
		return typed{sql: "localportal_text(" + x.sql + ")", kind: KindText, agg: x.agg}, nil
	case "floating_timestamp":
		return typed{sql: "localportal_ts(" + x.sql + ")", kind: KindFloating, agg: x.agg}, nil
	case "boolean":
		return typed{sql: "(CASE WHEN lower(localportal_text(" + x.sql + ")) IN ('true','1') THEN 1 WHEN lower(localportal_text(" +
			x.sql + ")) IN ('false','0') THEN 0 END)", kind: KindBool, agg: x.agg}, nil
	}
	return typed{}, unsupported(tr, n.Type.NamePos, "cast to "+n.Type.Name+" is not supported by the local portal")
}

// latLon returns SQL for the latitude and longitude of a point or location.
func latLon(t typed) (lat, lon string, ok bool) {
	switch t.kind {
	case KindPoint:
		return "json_extract(" + t.sql + ", '$.coordinates[1]')", "json_extract(" + t.sql + ", '$.coordinates[0]')", true
	case KindLocation:
		return "CAST(json_extract(" + t.sql + ", '$.latitude') AS REAL)", "CAST(json_extract(" + t.sql + ", '$.longitude') AS REAL)", true
	}
	return "", "", false
}

func (tr *translator) dot(n *soql.Dot) (typed, error) {
	x, err := tr.expr(n.X)
	if err != nil {
		return x, err
	}
	field := strings.ToLower(n.Field.Name)
	if lat, lon, ok := latLon(x); ok {
		switch field {
		case "latitude":
			return typed{sql: lat, kind: KindNumber, agg: x.agg}, nil
		case "longitude":
			return typed{sql: lon, kind: KindNumber, agg: x.agg}, nil
		}
	}
	if x.kind == KindLocation || x.kind == KindJSON {
		switch field {
		case "human_address", "url", "description":
			return typed{sql: "json_extract(" + x.sql + ", " + QuoteString("$."+field) + ")", kind: KindText, agg: x.agg}, nil
		}
	}
	return typed{}, &Error{Status: http.StatusBadRequest, Body: map[string]any{
		"errorCode": "query.soql.no-such-column",
		"message":   "Query coordinator error: query.soql.no-such-column; No such column: " + n.Field.Name,
		"data":      map[string]any{"column": n.Field.Name, "dataset": tr.datasetID, "position": tr.position(n.Field.NamePos)},
	}}
}

// likeToGlob converts a LIKE pattern to an equivalent GLOB pattern.
func likeToGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		switch r {
		case '%':
			b.WriteByte('*')
		case '_':
			b.WriteByte('?')
		case '*', '?', '[', ']':
			b.WriteByte('[')
			b.WriteRune(r)
			b.WriteByte(']')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
