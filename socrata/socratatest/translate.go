package socratatest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/soql"
)

// This file translates a parsed SoQL query (package soql) into one SQLite
// SELECT statement. Each |> stage becomes a subquery read by the next stage.
//
// Storage conventions (see store.go): numbers are NUMERIC, checkboxes 0/1,
// floating timestamps fixed-width text 'YYYY-MM-DDTHH:MM:SS.000' (so text
// comparison orders them), points GeoJSON text, locations JSON text. Text
// comparison uses SQLite's BINARY collation and is case-sensitive, as SoQL's.

// defaultLimit is the number of rows Socrata returns when no limit is given.
const defaultLimit = 1000

// queryError is a SoQL error answered with a Socrata error envelope.
type queryError struct {
	status int
	body   map[string]any
}

func (e *queryError) Error() string {
	if m, ok := e.body["message"].(string); ok {
		return m
	}
	return fmt.Sprint(e.body)
}

// outCol is one output column of a stage.
type outCol struct {
	name  string    // Socrata field name (alias or implicit name)
	kind  valueKind // storage kind, drives encoding
	soda2 string    // X-SODA2-Types name
}

// compiled is a translated query.
type compiled struct {
	sql  string
	cols []outCol
}

// scopeCol is a column visible to a stage's expressions.
type scopeCol struct {
	name   string
	sql    string
	kind   valueKind
	soda2  string
	system bool
}

// typed is a translated expression.
type typed struct {
	sql   string
	kind  valueKind
	soda2 string // set when the value is a column's, so its exact type shows in headers
	agg   bool   // contains an aggregate call
}

type translator struct {
	ds        *dataset
	datasetID string
	src       string // query text, for error positions
	stage     int
	cols      map[string]scopeCol // fieldKey -> column
	colOrder  []scopeCol
	aliases   map[string]typed // fieldKey(alias) -> expression, for WHERE/GROUP/HAVING/ORDER
}

// translate compiles q against ds. withDefaultLimit applies Socrata's
// default LIMIT 1000 to the last stage when it has no LIMIT.
func translate(ds *dataset, src string, q *soql.Query, withDefaultLimit bool) (*compiled, error) {
	if q == nil || len(q.Stages) == 0 {
		return nil, malformed(src, soql.Pos{Line: 1, Column: 1}, "empty query")
	}
	tr := &translator{ds: ds, datasetID: ds.schema.ID, src: src}
	var prev *compiled
	for i, st := range q.Stages {
		tr.stage = i
		tr.setScope(prev)
		c, err := tr.selectStage(st, prev, withDefaultLimit && i == len(q.Stages)-1)
		if err != nil {
			return nil, err
		}
		prev = c
	}
	return prev, nil
}

// setScope makes the dataset's columns (stage 0) or the previous stage's
// output (later stages) visible.
func (tr *translator) setScope(prev *compiled) {
	tr.cols = map[string]scopeCol{}
	tr.colOrder = nil
	tr.aliases = map[string]typed{}
	add := func(c scopeCol) {
		tr.cols[fieldKey(c.name)] = c
		tr.colOrder = append(tr.colOrder, c)
	}
	if prev == nil {
		created := quoteString(formatTimestamp(tr.ds.createdAt, true))
		add(scopeCol{name: ":id", sql: "socratatest_row_id(t." + rowIDColumn + ")", kind: kindText, soda2: "text", system: true})
		add(scopeCol{name: ":created_at", sql: created, kind: kindFixed, soda2: "fixed_timestamp", system: true})
		add(scopeCol{name: ":updated_at", sql: created, kind: kindFixed, soda2: "fixed_timestamp", system: true})
		for _, c := range tr.ds.cols {
			add(scopeCol{name: c.FieldName, sql: "t." + c.sqlName, kind: c.kind, soda2: soda2Type(c.DataType)})
		}
		return
	}
	for _, c := range prev.cols {
		add(scopeCol{name: c.name, sql: "t." + quoteIdent(c.name), kind: c.kind, soda2: c.soda2,
			system: strings.HasPrefix(c.name, ":") && !strings.HasPrefix(c.name, ":@")})
	}
}

func (tr *translator) selectStage(st *soql.Select, prev *compiled, withDefaultLimit bool) (*compiled, error) {
	from := tr.ds.table + " AS t"
	if prev != nil {
		from = "(" + prev.sql + ") AS t"
	}

	// SELECT list.
	var cols []outCol
	var exprs []string
	used := map[string]int{}
	addOut := func(name string, t typed) {
		base := name
		for n := 1; used[name] > 0; n++ {
			name = base + "_" + strconv.Itoa(n)
		}
		used[name]++
		soda2 := t.soda2
		if soda2 == "" {
			soda2 = kindSODA2(t.kind)
		}
		cols = append(cols, outCol{name: name, kind: t.kind, soda2: soda2})
		exprs = append(exprs, t.sql+" AS "+quoteIdent(name))
	}
	items := st.Selection
	if len(items) == 0 {
		items = []*soql.SelectItem{{Star: soql.AllStar}}
	}
	grouped := len(st.GroupBy) > 0
	type pendingAlias struct {
		key string
		t   typed
	}
	var aliasList []pendingAlias
	for _, it := range items {
		switch it.Star {
		case soql.AllStar:
			for _, c := range tr.colOrder {
				if !c.system {
					addOut(c.name, typed{sql: c.sql, kind: c.kind, soda2: c.soda2})
				}
			}
			continue
		case soql.SystemStar:
			for _, c := range tr.colOrder {
				if c.system {
					addOut(c.name, typed{sql: c.sql, kind: c.kind, soda2: c.soda2})
				}
			}
			continue
		}
		t, err := tr.expr(it.Expr)
		if err != nil {
			return nil, err
		}
		if t.agg {
			grouped = true
		}
		name := implicitName(it.Expr)
		if it.Alias != nil {
			name = it.Alias.Name
			aliasList = append(aliasList, pendingAlias{fieldKey(it.Alias.Name), t})
		}
		addOut(name, t)
	}
	if len(cols) == 0 {
		return nil, malformed(tr.src, st.SelectPos, "the query selects no columns")
	}
	for _, a := range aliasList {
		tr.aliases[a.key] = a.t
	}

	var b strings.Builder
	b.WriteString("SELECT ")
	if st.Distinct {
		b.WriteString("DISTINCT ")
	}
	b.WriteString(strings.Join(exprs, ", "))
	b.WriteString(" FROM " + from)

	// WHERE and SEARCH.
	var conds []string
	if st.Where != nil {
		t, err := tr.exprIn(st.Where, false)
		if err != nil {
			return nil, err
		}
		if t.agg {
			return nil, aggregateInWhere(tr, st.Where)
		}
		conds = append(conds, t.sql)
	}
	if st.Search != nil {
		conds = append(conds, tr.search(*st.Search))
	}
	if len(conds) > 0 {
		b.WriteString(" WHERE " + strings.Join(conds, " AND "))
	}

	// GROUP BY and HAVING.
	if len(st.GroupBy) > 0 {
		var keys []string
		for _, g := range st.GroupBy {
			t, err := tr.exprIn(g, true)
			if err != nil {
				return nil, err
			}
			keys = append(keys, t.sql)
		}
		b.WriteString(" GROUP BY " + strings.Join(keys, ", "))
	}
	if st.Having != nil {
		t, err := tr.exprIn(st.Having, true)
		if err != nil {
			return nil, err
		}
		if !grouped && !t.agg {
			return nil, &queryError{status: http.StatusBadRequest, body: map[string]any{
				"errorCode": "query.soql.having-without-group-by",
				"message":   "Query coordinator error: query.soql.having-without-group-by; HAVING used without GROUP BY or an aggregate",
				"data":      map[string]any{"dataset": tr.datasetID, "position": tr.position(st.Having.Pos())},
			}}
		}
		b.WriteString(" HAVING " + t.sql)
	}

	// ORDER BY with Socrata's null ordering: ascending puts nulls last,
	// descending puts them first, unless NULLS FIRST/LAST says otherwise.
	if len(st.OrderBy) > 0 {
		var keys []string
		for _, o := range st.OrderBy {
			var key string
			if id, ok := unparen(o.Expr).(*soql.Ident); ok && prev == nil && id.Name == ":id" {
				key = "t." + rowIDColumn
			} else {
				t, err := tr.exprIn(o.Expr, true)
				if err != nil {
					return nil, err
				}
				key = t.sql
			}
			dir, nulls := " ASC", " NULLS LAST"
			if o.Desc {
				dir, nulls = " DESC", " NULLS FIRST"
			}
			switch o.Nulls {
			case soql.NullsFirst:
				nulls = " NULLS FIRST"
			case soql.NullsLast:
				nulls = " NULLS LAST"
			}
			keys = append(keys, key+dir+nulls)
		}
		b.WriteString(" ORDER BY " + strings.Join(keys, ", "))
	}

	// LIMIT and OFFSET.
	limit := int64(-1)
	if st.Limit != nil {
		limit = *st.Limit
	} else if withDefaultLimit {
		limit = defaultLimit
	}
	if limit >= 0 || st.Offset != nil {
		fmt.Fprintf(&b, " LIMIT %d", limit)
		if st.Offset != nil {
			fmt.Fprintf(&b, " OFFSET %d", *st.Offset)
		}
	}
	return &compiled{sql: b.String(), cols: cols}, nil
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

// search implements SEARCH / $q: every word must occur, case-insensitively,
// in some text column.
func (tr *translator) search(q string) string {
	var textCols []string
	for _, c := range tr.colOrder {
		if c.kind == kindText && !c.system {
			textCols = append(textCols, c.sql)
		}
	}
	words := strings.Fields(q)
	if len(words) == 0 {
		return "1"
	}
	if len(textCols) == 0 {
		return "0"
	}
	var all []string
	for _, w := range words {
		lit := quoteString(strings.ToLower(w))
		var any []string
		for _, c := range textCols {
			any = append(any, "instr(lower("+c+"), "+lit+") > 0")
		}
		all = append(all, "("+strings.Join(any, " OR ")+")")
	}
	return "(" + strings.Join(all, " AND ") + ")"
}

// implicitName is the field name Socrata gives an unaliased select item:
// a column's name, "count" for count(*), "sum_x" for sum(x), and so on.
func implicitName(e soql.Expr) string {
	var parts []string
	var walk func(e soql.Expr)
	walk = func(e soql.Expr) {
		switch n := e.(type) {
		case *soql.Ident:
			parts = append(parts, strings.ToLower(n.Name))
		case *soql.Call:
			parts = append(parts, strings.ToLower(n.Name.Name))
			for _, a := range n.Args {
				walk(a)
			}
		case *soql.Paren:
			walk(n.X)
		case *soql.Dot:
			walk(n.X)
			parts = append(parts, strings.ToLower(n.Field.Name))
		case *soql.Cast:
			walk(n.X)
		default:
			soql.Walk(e, func(x soql.Expr) bool {
				if x == e {
					return true
				}
				walk(x)
				return false
			})
		}
	}
	walk(e)
	if id, ok := unparen(e).(*soql.Ident); ok {
		return id.Name
	}
	name := strings.Join(parts, "_")
	if name == "" {
		name = "_expr"
	}
	return name
}

// exprIn translates e where aliases of the select list may be used:
// preferred over columns in GROUP BY / HAVING / ORDER BY (preferAlias), and
// as a fallback in WHERE.
func (tr *translator) exprIn(e soql.Expr, preferAlias bool) (typed, error) {
	saved := tr.aliases
	defer func() { tr.aliases = saved }()
	if !preferAlias {
		// In WHERE, a column of the same name wins over an alias.
		filtered := map[string]typed{}
		for k, v := range saved {
			if _, isCol := tr.cols[k]; !isCol {
				filtered[k] = v
			}
		}
		tr.aliases = filtered
	}
	return tr.expr(e)
}

func (tr *translator) expr(e soql.Expr) (typed, error) {
	switch n := e.(type) {
	case *soql.Ident:
		return tr.ident(n)
	case *soql.StringLit:
		return typed{sql: quoteString(n.Value), kind: kindText}, nil
	case *soql.NumberLit:
		return typed{sql: numberSQL(n.Raw), kind: kindNumber}, nil
	case *soql.BoolLit:
		if n.Value {
			return typed{sql: "1", kind: kindBool}, nil
		}
		return typed{sql: "0", kind: kindBool}, nil
	case *soql.NullLit:
		return typed{sql: "NULL", kind: kindNull}, nil
	case *soql.Paren:
		t, err := tr.expr(n.X)
		if err != nil {
			return t, err
		}
		t.sql = "(" + t.sql + ")"
		return t, nil
	case *soql.Unary:
		t, err := tr.expr(n.X)
		if err != nil {
			return t, err
		}
		switch n.Op {
		case "not":
			return typed{sql: "(NOT " + t.sql + ")", kind: kindBool, agg: t.agg}, nil
		case "-":
			return typed{sql: "(-" + t.sql + ")", kind: kindNumber, agg: t.agg}, nil
		default:
			return typed{sql: t.sql, kind: t.kind, agg: t.agg}, nil
		}
	case *soql.Binary:
		return tr.binary(n)
	case *soql.In:
		x, err := tr.expr(n.X)
		if err != nil {
			return x, err
		}
		var list []string
		agg := x.agg
		for _, item := range n.List {
			t, err := tr.operand(item, x)
			if err != nil {
				return t, err
			}
			agg = agg || t.agg
			list = append(list, t.sql)
		}
		op := " IN "
		if n.Not {
			op = " NOT IN "
		}
		return typed{sql: "(" + x.sql + op + "(" + strings.Join(list, ", ") + "))", kind: kindBool, agg: agg}, nil
	case *soql.Between:
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
		op := " BETWEEN "
		if n.Not {
			op = " NOT BETWEEN "
		}
		return typed{sql: "(" + x.sql + op + lo.sql + " AND " + hi.sql + ")", kind: kindBool, agg: x.agg || lo.agg || hi.agg}, nil
	case *soql.Like:
		x, err := tr.expr(n.X)
		if err != nil {
			return x, err
		}
		not := ""
		if n.Not {
			not = "NOT "
		}
		if lit, ok := unparen(n.Pattern).(*soql.StringLit); ok {
			// Case-sensitive LIKE through GLOB, which SQLite runs natively.
			return typed{sql: "(" + x.sql + " " + not + "GLOB " + quoteString(likeToGlob(lit.Value)) + ")", kind: kindBool, agg: x.agg}, nil
		}
		p, err := tr.expr(n.Pattern)
		if err != nil {
			return p, err
		}
		return typed{sql: "(" + not + "socratatest_like(" + x.sql + ", " + p.sql + "))", kind: kindBool, agg: x.agg || p.agg}, nil
	case *soql.IsNull:
		x, err := tr.expr(n.X)
		if err != nil {
			return x, err
		}
		op := " IS NULL"
		if n.Not {
			op = " IS NOT NULL"
		}
		return typed{sql: "(" + x.sql + op + ")", kind: kindBool, agg: x.agg}, nil
	case *soql.Cast:
		return tr.cast(n)
	case *soql.Dot:
		return tr.dot(n)
	case *soql.Case:
		var b strings.Builder
		b.WriteString("(CASE")
		kind := kindNull
		agg := false
		for _, w := range n.Whens {
			c, err := tr.expr(w.Cond)
			if err != nil {
				return c, err
			}
			v, err := tr.expr(w.Value)
			if err != nil {
				return v, err
			}
			if kind == kindNull {
				kind = v.kind
			}
			agg = agg || c.agg || v.agg
			b.WriteString(" WHEN " + c.sql + " THEN " + v.sql)
		}
		if n.Else != nil {
			v, err := tr.expr(n.Else)
			if err != nil {
				return v, err
			}
			if kind == kindNull {
				kind = v.kind
			}
			agg = agg || v.agg
			b.WriteString(" ELSE " + v.sql)
		}
		b.WriteString(" END)")
		return typed{sql: b.String(), kind: kind, agg: agg}, nil
	case *soql.Call:
		return tr.call(n)
	case *soql.Index:
		return typed{}, unsupported(tr, e.Pos(), "subscripts (a[i]) are not supported by socratatest")
	default:
		return typed{}, unsupported(tr, e.Pos(), fmt.Sprintf("expression %T is not supported by socratatest", e))
	}
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
// string literal to x's type: a timestamp literal to the stored form so
// that it compares as a timestamp, a numeric string to a number.
func (tr *translator) operand(e soql.Expr, x typed) (typed, error) {
	lit, ok := unparen(e).(*soql.StringLit)
	if !ok {
		return tr.expr(e)
	}
	switch x.kind {
	case kindFloating, kindFixed:
		ts, ok := normalizeTimestamp(lit.Value, x.kind == kindFixed)
		if !ok {
			return typed{}, tr.typeMismatch(lit.Pos(), fmt.Sprintf("Cannot interpret %s as a timestamp", lit.Raw))
		}
		return typed{sql: quoteString(ts), kind: x.kind}, nil
	case kindNumber:
		if f, err := strconv.ParseFloat(strings.TrimSpace(lit.Value), 64); err == nil {
			return typed{sql: strconv.FormatFloat(f, 'g', -1, 64), kind: kindNumber}, nil
		}
	case kindBool:
		switch strings.ToLower(lit.Value) {
		case "true":
			return typed{sql: "1", kind: kindBool}, nil
		case "false":
			return typed{sql: "0", kind: kindBool}, nil
		}
	}
	return tr.expr(e)
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
		return typed{sql: "(" + l.sql + " " + op + " " + r.sql + ")", kind: kindBool, agg: l.agg || r.agg}, nil
	}
	l, err := tr.expr(n.Left)
	if err != nil {
		return l, err
	}
	r, err := tr.expr(n.Right)
	if err != nil {
		return r, err
	}
	agg := l.agg || r.agg
	switch n.Op {
	case "and":
		return typed{sql: "(" + l.sql + " AND " + r.sql + ")", kind: kindBool, agg: agg}, nil
	case "or":
		return typed{sql: "(" + l.sql + " OR " + r.sql + ")", kind: kindBool, agg: agg}, nil
	case "+", "-", "*", "%":
		return typed{sql: "(" + l.sql + " " + n.Op + " " + r.sql + ")", kind: kindNumber, agg: agg}, nil
	case "/":
		// SoQL numbers are decimals: 5/2 is 2.5, not SQLite's integer 2.
		return typed{sql: "(CAST(" + l.sql + " AS REAL) / " + r.sql + ")", kind: kindNumber, agg: agg}, nil
	case "^":
		return typed{sql: "socratatest_pow(" + l.sql + ", " + r.sql + ")", kind: kindNumber, agg: agg}, nil
	case "||":
		return typed{sql: "(socratatest_text(" + l.sql + ") || socratatest_text(" + r.sql + "))", kind: kindText, agg: agg}, nil
	}
	return typed{}, unsupported(tr, n.OpPos, "operator "+n.Op+" is not supported by socratatest")
}

func (tr *translator) cast(n *soql.Cast) (typed, error) {
	x, err := tr.expr(n.X)
	if err != nil {
		return x, err
	}
	switch strings.ToLower(n.Type.Name) {
	case "number", "double", "money":
		return typed{sql: "CAST(" + x.sql + " AS NUMERIC)", kind: kindNumber, agg: x.agg}, nil
	case "text":
		return typed{sql: "socratatest_text(" + x.sql + ")", kind: kindText, agg: x.agg}, nil
	case "floating_timestamp":
		return typed{sql: "socratatest_ts(" + x.sql + ")", kind: kindFloating, agg: x.agg}, nil
	case "boolean":
		return typed{sql: "(CASE WHEN lower(socratatest_text(" + x.sql + ")) IN ('true','1') THEN 1 WHEN lower(socratatest_text(" +
			x.sql + ")) IN ('false','0') THEN 0 END)", kind: kindBool, agg: x.agg}, nil
	}
	return typed{}, unsupported(tr, n.Type.NamePos, "cast to "+n.Type.Name+" is not supported by socratatest")
}

// latLon returns SQL for the latitude and longitude of a point or location.
func latLon(t typed) (lat, lon string, ok bool) {
	switch t.kind {
	case kindPoint:
		return "json_extract(" + t.sql + ", '$.coordinates[1]')", "json_extract(" + t.sql + ", '$.coordinates[0]')", true
	case kindLocation:
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
			return typed{sql: lat, kind: kindNumber, agg: x.agg}, nil
		case "longitude":
			return typed{sql: lon, kind: kindNumber, agg: x.agg}, nil
		}
	}
	if x.kind == kindLocation || x.kind == kindJSON {
		switch field {
		case "human_address", "url", "description":
			return typed{sql: "json_extract(" + x.sql + ", " + quoteString("$."+field) + ")", kind: kindText, agg: x.agg}, nil
		}
	}
	return typed{}, &queryError{status: http.StatusBadRequest, body: map[string]any{
		"errorCode": "query.soql.no-such-column",
		"message":   "Query coordinator error: query.soql.no-such-column; No such column: " + n.Field.Name,
		"data":      map[string]any{"column": n.Field.Name, "dataset": tr.datasetID, "position": tr.position(n.Field.NamePos)},
	}}
}

// dateParts gives the substring (start, length) of the stored timestamp
// text that each date_extract_* function reads.
var dateParts = map[string][2]int{"date_extract_y": {1, 4}, "date_extract_m": {6, 2}, "date_extract_d": {9, 2},
	"date_extract_hh": {12, 2}, "date_extract_mm": {15, 2}, "date_extract_ss": {18, 2}}

var aggregates = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true}

func (tr *translator) call(n *soql.Call) (typed, error) {
	name := strings.ToLower(n.Name.Name)
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
	arity := func(want ...int) error {
		for _, w := range want {
			if len(args) == w {
				return nil
			}
		}
		return tr.noSuchFunction(n)
	}
	if aggregates[name] {
		if anyAgg {
			return typed{}, tr.typeMismatch(n.Name.NamePos, "Aggregate function '"+name+"' cannot be nested in another aggregate")
		}
		if name == "count" && n.Star {
			return typed{sql: "count(*)", kind: kindNumber, agg: true}, nil
		}
		if err := arity(1); err != nil {
			return typed{}, err
		}
		distinct := ""
		if n.Distinct {
			distinct = "DISTINCT "
		}
		switch name {
		case "count":
			return typed{sql: "count(" + distinct + args[0].sql + ")", kind: kindNumber, agg: true}, nil
		case "sum", "avg":
			return typed{sql: name + "(" + distinct + args[0].sql + ")", kind: kindNumber, agg: true}, nil
		default: // min, max keep their argument's type
			return typed{sql: name + "(" + args[0].sql + ")", kind: args[0].kind, soda2: args[0].soda2, agg: true}, nil
		}
	}
	agg := anyAgg
	switch name {
	case "upper", "lower":
		if err := arity(1); err != nil {
			return typed{}, err
		}
		return typed{sql: name + "(" + args[0].sql + ")", kind: kindText, agg: agg}, nil
	case "starts_with":
		if err := arity(2); err != nil {
			return typed{}, err
		}
		return typed{sql: "(instr(" + args[0].sql + ", " + args[1].sql + ") = 1)", kind: kindBool, agg: agg}, nil
	case "contains":
		if err := arity(2); err != nil {
			return typed{}, err
		}
		return typed{sql: "(instr(" + args[0].sql + ", " + args[1].sql + ") > 0)", kind: kindBool, agg: agg}, nil
	case "date_trunc_y", "date_trunc_ym", "date_trunc_ymd":
		if err := arity(1); err != nil {
			return typed{}, err
		}
		var s string
		switch name {
		case "date_trunc_y":
			s = "substr(" + args[0].sql + ", 1, 4) || '-01-01T00:00:00.000'"
		case "date_trunc_ym":
			s = "substr(" + args[0].sql + ", 1, 7) || '-01T00:00:00.000'"
		default:
			s = "substr(" + args[0].sql + ", 1, 10) || 'T00:00:00.000'"
		}
		return typed{sql: "(CASE WHEN " + args[0].sql + " IS NULL THEN NULL ELSE " + s + " END)", kind: kindFloating, agg: agg}, nil
	case "date_extract_y", "date_extract_m", "date_extract_d", "date_extract_hh", "date_extract_mm", "date_extract_ss":
		if err := arity(1); err != nil {
			return typed{}, err
		}
		part := dateParts[name]
		return typed{sql: fmt.Sprintf("CAST(substr(%s, %d, %d) AS INTEGER)", args[0].sql, part[0], part[1]), kind: kindNumber, agg: agg}, nil
	case "date_extract_dow":
		if err := arity(1); err != nil {
			return typed{}, err
		}
		return typed{sql: "CAST(strftime('%w', substr(" + args[0].sql + ", 1, 19)) AS INTEGER)", kind: kindNumber, agg: agg}, nil
	case "date_extract_woy":
		if err := arity(1); err != nil {
			return typed{}, err
		}
		return typed{sql: "CAST(strftime('%V', substr(" + args[0].sql + ", 1, 19)) AS INTEGER)", kind: kindNumber, agg: agg}, nil
	case "coalesce":
		if len(args) == 0 {
			return typed{}, tr.noSuchFunction(n)
		}
		kind := kindNull
		var parts []string
		for _, a := range args {
			if kind == kindNull {
				kind = a.kind
			}
			parts = append(parts, a.sql)
		}
		if len(parts) == 1 {
			return typed{sql: parts[0], kind: kind, agg: agg}, nil
		}
		return typed{sql: "coalesce(" + strings.Join(parts, ", ") + ")", kind: kind, agg: agg}, nil
	case "case":
		if len(args) == 0 || len(args)%2 != 0 {
			return typed{}, tr.noSuchFunction(n)
		}
		var b strings.Builder
		b.WriteString("(CASE")
		kind := kindNull
		for i := 0; i < len(args); i += 2 {
			if kind == kindNull {
				kind = args[i+1].kind
			}
			b.WriteString(" WHEN " + args[i].sql + " THEN " + args[i+1].sql)
		}
		b.WriteString(" END)")
		return typed{sql: b.String(), kind: kind, agg: agg}, nil
	case "within_circle":
		if err := arity(4); err != nil {
			return typed{}, err
		}
		lat, lon, ok := latLon(args[0])
		if !ok {
			return typed{}, tr.typeMismatch(n.Args[0].Pos(), "within_circle needs a point or location column")
		}
		return typed{sql: "(socratatest_distance(" + lat + ", " + lon + ", " + args[1].sql + ", " + args[2].sql + ") <= " + args[3].sql + ")", kind: kindBool, agg: agg}, nil
	case "within_box":
		if err := arity(5); err != nil {
			return typed{}, err
		}
		lat, lon, ok := latLon(args[0])
		if !ok {
			return typed{}, tr.typeMismatch(n.Args[0].Pos(), "within_box needs a point or location column")
		}
		a1, o1, a2, o2 := args[1].sql, args[2].sql, args[3].sql, args[4].sql
		return typed{sql: fmt.Sprintf("(%s BETWEEN min(%s, %s) AND max(%s, %s) AND %s BETWEEN min(%s, %s) AND max(%s, %s))",
			lat, a1, a2, a1, a2, lon, o1, o2, o1, o2), kind: kindBool, agg: agg}, nil
	case "distance_in_meters":
		if err := arity(2); err != nil {
			return typed{}, err
		}
		lat1, lon1, ok := latLon(args[0])
		if !ok {
			return typed{}, tr.typeMismatch(n.Args[0].Pos(), "distance_in_meters needs a point")
		}
		lat2, lon2, ok := latLon(args[1])
		if !ok {
			lit, isLit := unparen(n.Args[1]).(*soql.StringLit)
			if !isLit {
				return typed{}, tr.typeMismatch(n.Args[1].Pos(), "distance_in_meters needs a point")
			}
			lo, la, ok := parseWKTPoint(lit.Value)
			if !ok {
				return typed{}, tr.typeMismatch(n.Args[1].Pos(), "Cannot interpret "+lit.Raw+" as a point")
			}
			lat2, lon2 = formatFloat(la), formatFloat(lo)
		}
		return typed{sql: "socratatest_distance(" + lat1 + ", " + lon1 + ", " + lat2 + ", " + lon2 + ")", kind: kindNumber, agg: agg}, nil
	case "abs":
		if err := arity(1); err != nil {
			return typed{}, err
		}
		return typed{sql: "abs(" + args[0].sql + ")", kind: kindNumber, agg: agg}, nil
	case "length":
		if err := arity(1); err != nil {
			return typed{}, err
		}
		return typed{sql: "length(" + args[0].sql + ")", kind: kindNumber, agg: agg}, nil
	}
	return typed{}, tr.noSuchFunction(n)
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

// position is Socrata's error position object for pos.
func (tr *translator) position(pos soql.Pos) map[string]any {
	line := tr.src
	if pos.Line > 0 {
		lines := strings.Split(tr.src, "\n")
		if pos.Line <= len(lines) {
			line = lines[pos.Line-1]
		}
	}
	return map[string]any{"row": pos.Line, "column": pos.Column, "line": line}
}

func (tr *translator) noSuchColumn(n *soql.Ident) error {
	return &queryError{status: http.StatusBadRequest, body: map[string]any{
		"errorCode": "query.soql.no-such-column",
		"message":   "Query coordinator error: query.soql.no-such-column; No such column: " + n.Name,
		"data":      map[string]any{"column": n.Name, "dataset": tr.datasetID, "position": tr.position(n.NamePos)},
	}}
}

func (tr *translator) noSuchFunction(n *soql.Call) error {
	arity := len(n.Args)
	if n.Star {
		arity = 1
	}
	pos := tr.position(n.Name.NamePos)
	return &queryError{status: http.StatusBadRequest, body: map[string]any{
		"errorCode": "query.soql.no-such-function",
		"message": fmt.Sprintf("Query coordinator error: query.soql.no-such-function; No such function '%s'; arity=%d; position: Map(row -> %d, column -> %d, line -> %q)",
			n.Name.Name, arity, pos["row"], pos["column"], pos["line"]),
		"data": map[string]any{"function": n.Name.Name, "arity": arity, "dataset": tr.datasetID, "position": pos},
	}}
}

func (tr *translator) typeMismatch(pos soql.Pos, msg string) error {
	return &queryError{status: http.StatusBadRequest, body: map[string]any{
		"errorCode": "query.soql.type-mismatch",
		"message":   "Query coordinator error: query.soql.type-mismatch; " + msg,
		"data":      map[string]any{"dataset": tr.datasetID, "position": tr.position(pos)},
	}}
}

func aggregateInWhere(tr *translator, e soql.Expr) error {
	return &queryError{status: http.StatusBadRequest, body: map[string]any{
		"errorCode": "query.soql.aggregate-in-ungrouped-context",
		"message":   "Query coordinator error: query.soql.aggregate-in-ungrouped-context; Aggregate function used in ungrouped context: WHERE",
		"data":      map[string]any{"clause": "WHERE", "dataset": tr.datasetID, "position": tr.position(e.Pos())},
	}}
}

func unsupported(tr *translator, pos soql.Pos, msg string) error {
	return &queryError{status: http.StatusBadRequest, body: map[string]any{
		"errorCode": "query.soql.unsupported",
		"message":   "Query coordinator error: query.soql.unsupported; " + msg,
		"data":      map[string]any{"dataset": tr.datasetID, "position": tr.position(pos)},
	}}
}

// malformed is the parse-error envelope (code query.compiler.malformed).
func malformed(src string, pos soql.Pos, detail string) error {
	return &queryError{status: http.StatusBadRequest, body: map[string]any{
		"code":    "query.compiler.malformed",
		"error":   true,
		"message": fmt.Sprintf("Could not parse SoQL query '%s' at line %d character %d: %s", src, pos.Line, pos.Column, detail),
		"data":    map[string]any{"query": src},
	}}
}
