package soqlsqlite

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// This file translates a parsed SoQL query (package soql) into one SQLite
// SELECT statement. Each |> stage becomes a subquery read by the next stage.
//
// Storage conventions (see storage.go): numbers are NUMERIC, checkboxes 0/1,
// floating timestamps fixed-width text 'YYYY-MM-DDTHH:MM:SS.000' (so text
// comparison orders them), points GeoJSON text, locations JSON text. Text
// comparison uses SQLite's BINARY collation and is case-sensitive, as SoQL's.

// defaultLimit is the number of rows Socrata returns when no limit is given.
const defaultLimit = 1000

// Error is a query Socrata refuses, with the portal's answer: the HTTP
// status and the JSON error envelope (errorCode, message, data), in
// Socrata's words.
type Error struct {
	Status int
	Body   map[string]any
}

func (e *Error) Error() string {
	if m, ok := e.Body["message"].(string); ok {
		return m
	}
	return fmt.Sprint(e.Body)
}

// Table is what a query reads: one dataset's rows in SQLite.
type Table struct {
	// ID is the dataset's 4x4 identifier, named in error answers.
	ID string
	// From is the SQL the first stage reads: a quoted table name or a
	// parenthesised subquery. It has the column RowIDColumn and, for each
	// of Columns, a column named QuoteIdent(FieldName) holding values in
	// the storage form of KindOf(DataType).
	From string
	// Columns are the dataset's columns, DataType a Views dataTypeName;
	// system fields (":id", ...) are not among them.
	Columns []socrata.Column
	// CreatedAt is the dataset's :created_at and :updated_at.
	CreatedAt time.Time
}

// Statement is a compiled query: one SQLite SELECT and its result columns.
type Statement struct {
	// SQL is the statement's text. Literals are written into it, quoted;
	// it takes no arguments.
	SQL     string
	Columns []Column
}

// Column is one result column of a Statement.
type Column struct {
	Name  string // Socrata field name (alias or implicit name)
	Kind  Kind   // storage kind of its values, drives their encoding
	SODA2 string // its X-SODA2-Types name
}

// scopeCol is a column visible to a stage's expressions.
type scopeCol struct {
	name   string
	sql    string
	kind   Kind
	soda2  string
	system bool
}

// typed is a translated expression.
type typed struct {
	sql   string
	kind  Kind
	soda2 string // set when the value is a column's, so its exact type shows in headers
	agg   bool   // contains an aggregate call
}

type translator struct {
	table     *Table
	datasetID string
	src       string // query text, for error positions
	now       time.Time
	stage     int
	cols      map[string]scopeCol // fieldKey -> column
	colOrder  []scopeCol
	aliases   map[string]typed // fieldKey(alias) -> expression, for WHERE/GROUP/HAVING/ORDER
}

// Options are the choices of one compilation; the zero value compiles a
// query as the SODA3 API runs it, without a default limit, at time.Now().
type Options struct {
	// DefaultLimit gives the last stage without a LIMIT Socrata's default
	// LIMIT 1000, as the Resource API does.
	DefaultLimit bool
	// Now is the time of the query, get_utc_date()'s value; zero means
	// time.Now().
	Now time.Time
}

// Compile translates q, parsed from src, into one SQLite statement reading
// t. src is the query's text, quoted in error positions. A query Socrata refuses (an unknown column or function, a type
// mismatch, an aggregate in WHERE, ...) is an *Error in Socrata's words;
// one Socrata runs but this package cannot translate is an *Error with
// code query.soql.unsupported.
func Compile(t *Table, src string, q *soql.Query, opts Options) (*Statement, error) {
	if q == nil || len(q.Stages) == 0 {
		return nil, malformed(src, soql.Pos{Line: 1, Column: 1}, "empty query")
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	tr := &translator{table: t, datasetID: t.ID, src: src, now: now}
	// Socrata's analyzer resolves names, then types, before it plans the
	// query; the rules are the documented ones soql implements.
	if err := tr.analyze(q); err != nil {
		return nil, err
	}
	var prev *Statement
	for i, st := range q.Stages {
		tr.stage = i
		tr.setScope(prev)
		c, err := tr.selectStage(st, prev, opts.DefaultLimit && i == len(q.Stages)-1)
		if err != nil {
			return nil, err
		}
		prev = c
	}
	return prev, nil
}

// fieldKey canonicalises a field name for lookups, as Socrata compares
// column names (soql.CanonicalName).
func fieldKey(name string) string { return soql.CanonicalName(name) }

// setScope makes the dataset's columns (stage 0) or the previous stage's
// output (later stages) visible.
func (tr *translator) setScope(prev *Statement) {
	tr.cols = map[string]scopeCol{}
	tr.colOrder = nil
	tr.aliases = map[string]typed{}
	add := func(c scopeCol) {
		tr.cols[fieldKey(c.name)] = c
		tr.colOrder = append(tr.colOrder, c)
	}
	if prev == nil {
		created := QuoteString(FormatTimestamp(tr.table.CreatedAt, true))
		add(scopeCol{name: ":id", sql: "localportal_row_id(t." + RowIDColumn + ")", kind: KindText, soda2: "text", system: true})
		add(scopeCol{name: ":created_at", sql: created, kind: KindFixed, soda2: "fixed_timestamp", system: true})
		add(scopeCol{name: ":updated_at", sql: created, kind: KindFixed, soda2: "fixed_timestamp", system: true})
		for _, c := range tr.table.Columns {
			add(scopeCol{name: c.FieldName, sql: "t." + QuoteIdent(c.FieldName), kind: KindOf(c.DataType), soda2: soda2Type(c.DataType)})
		}
		return
	}
	for _, c := range prev.Columns {
		add(scopeCol{name: c.Name, sql: "t." + QuoteIdent(c.Name), kind: c.Kind, soda2: c.SODA2,
			system: strings.HasPrefix(c.Name, ":") && !strings.HasPrefix(c.Name, ":@")})
	}
}

// selectStage translates one stage of the query into a SELECT statement
// reading from the dataset's table (the first stage) or from prev.
func (tr *translator) selectStage(st *soql.Select, prev *Statement, withDefaultLimit bool) (*Statement, error) {
	from := tr.table.From + " AS t"
	if prev != nil {
		from = "(" + prev.SQL + ") AS t"
	}
	sel, err := tr.selectList(st)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	if st.Distinct {
		b.WriteString("DISTINCT ")
	}
	b.WriteString(strings.Join(sel.exprs, ", "))
	b.WriteString(" FROM " + from)
	where, err := tr.whereClause(st)
	if err != nil {
		return nil, err
	}
	groupBy, err := tr.groupByClause(st)
	if err != nil {
		return nil, err
	}
	having, err := tr.havingClause(st, sel.grouped)
	if err != nil {
		return nil, err
	}
	orderBy, err := tr.orderByClause(st, prev == nil)
	if err != nil {
		return nil, err
	}
	b.WriteString(where + groupBy + having + orderBy + limitClause(st, withDefaultLimit))
	return &Statement{SQL: b.String(), Columns: sel.cols}, nil
}

// selection is a translated SELECT list.
type selection struct {
	cols    []Column
	exprs   []string // "expr AS name", one per column
	used    map[string]int
	grouped bool // the stage aggregates (GROUP BY or an aggregate call)
}

// add appends an output column, renaming it ("name_1", ...) when the name
// is taken.
func (sel *selection) add(name string, t typed) {
	base := name
	for n := 1; sel.used[name] > 0; n++ {
		name = base + "_" + strconv.Itoa(n)
	}
	sel.used[name]++
	soda2 := t.soda2
	if soda2 == "" {
		soda2 = kindSODA2(t.kind)
	}
	sel.cols = append(sel.cols, Column{Name: name, Kind: t.kind, SODA2: soda2})
	sel.exprs = append(sel.exprs, t.sql+" AS "+QuoteIdent(name))
}

// selectList translates the SELECT list (all columns when there is none)
// and makes its aliases visible to the later clauses.
func (tr *translator) selectList(st *soql.Select) (*selection, error) {
	sel := &selection{used: map[string]int{}, grouped: len(st.GroupBy) > 0}
	items := st.Selection
	if len(items) == 0 {
		items = []*soql.SelectItem{{Star: soql.AllStar}}
	}
	aliases := map[string]typed{}
	for _, it := range items {
		if it.Star != soql.NoStar {
			tr.selectStar(sel, it.Star == soql.SystemStar)
			continue
		}
		t, err := tr.expr(it.Expr)
		if err != nil {
			return nil, err
		}
		sel.grouped = sel.grouped || t.agg
		name := implicitName(it.Expr)
		if it.Alias != nil {
			name = it.Alias.Name
			aliases[fieldKey(it.Alias.Name)] = t
		}
		sel.add(name, t)
	}
	if len(sel.cols) == 0 {
		return nil, malformed(tr.src, st.SelectPos, "the query selects no columns")
	}
	for k, t := range aliases {
		tr.aliases[k] = t
	}
	return sel, nil
}

// selectStar adds the user columns (*) or the system columns (:*) in scope.
func (tr *translator) selectStar(sel *selection, system bool) {
	for _, c := range tr.colOrder {
		if c.system == system {
			sel.add(c.name, typed{sql: c.sql, kind: c.kind, soda2: c.soda2})
		}
	}
}

// whereClause translates WHERE and SEARCH ($q) into " WHERE ...", or "".
func (tr *translator) whereClause(st *soql.Select) (string, error) {
	var conds []string
	if st.Where != nil {
		t, err := tr.exprIn(st.Where, false)
		if err != nil {
			return "", err
		}
		if t.agg {
			return "", aggregateInWhere(tr, st.Where)
		}
		conds = append(conds, t.sql)
	}
	if st.Search != nil {
		conds = append(conds, tr.search(*st.Search))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), nil
}

// groupByClause translates GROUP BY into " GROUP BY ...", or "".
func (tr *translator) groupByClause(st *soql.Select) (string, error) {
	if len(st.GroupBy) == 0 {
		return "", nil
	}
	keys := make([]string, 0, len(st.GroupBy))
	for _, g := range st.GroupBy {
		t, err := tr.exprIn(g, true)
		if err != nil {
			return "", err
		}
		keys = append(keys, t.sql)
	}
	return " GROUP BY " + strings.Join(keys, ", "), nil
}

// havingClause translates HAVING into " HAVING ...", or "". Socrata refuses
// HAVING in a stage that neither groups nor aggregates.
func (tr *translator) havingClause(st *soql.Select, grouped bool) (string, error) {
	if st.Having == nil {
		return "", nil
	}
	t, err := tr.exprIn(st.Having, true)
	if err != nil {
		return "", err
	}
	if !grouped && !t.agg {
		return "", &Error{Status: http.StatusBadRequest, Body: map[string]any{
			"errorCode": "query.soql.having-without-group-by",
			"message":   "Query coordinator error: query.soql.having-without-group-by; HAVING used without GROUP BY or an aggregate",
			"data":      map[string]any{"dataset": tr.datasetID, "position": tr.position(st.Having.Pos())},
		}}
	}
	return " HAVING " + t.sql, nil
}

// orderByClause translates ORDER BY into " ORDER BY ...", or "", with
// Socrata's null ordering: ascending puts nulls last, descending puts them
// first, unless NULLS FIRST/LAST says otherwise. In the first stage, :id
// orders by the row number.
func (tr *translator) orderByClause(st *soql.Select, firstStage bool) (string, error) {
	if len(st.OrderBy) == 0 {
		return "", nil
	}
	keys := make([]string, 0, len(st.OrderBy))
	for _, o := range st.OrderBy {
		key, err := tr.orderKey(o.Expr, firstStage)
		if err != nil {
			return "", err
		}
		if key == "t."+RowIDColumn {
			// The row number is never null: without a null ordering,
			// SQLite walks the table in its order instead of sorting it
			// (a whole result's sort per page, in memory).
			dir := " ASC"
			if o.Desc {
				dir = " DESC"
			}
			keys = append(keys, key+dir)
			continue
		}
		keys = append(keys, key+orderDirection(o))
	}
	return " ORDER BY " + strings.Join(keys, ", "), nil
}

func (tr *translator) orderKey(e soql.Expr, firstStage bool) (string, error) {
	if id, ok := unparen(e).(*soql.Ident); ok && firstStage && id.Name == ":id" {
		return "t." + RowIDColumn, nil
	}
	t, err := tr.exprIn(e, true)
	return t.sql, err
}

// orderDirection is " ASC NULLS LAST" and the like for o.
func orderDirection(o *soql.OrderItem) string {
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
	return dir + nulls
}

// limitClause is " LIMIT n OFFSET m", " LIMIT n" or "". Without a LIMIT the
// last stage gets Socrata's default limit.
func limitClause(st *soql.Select, withDefaultLimit bool) string {
	limit := int64(-1)
	if st.Limit != nil {
		limit = *st.Limit
	} else if withDefaultLimit {
		limit = defaultLimit
	}
	if limit < 0 && st.Offset == nil {
		return ""
	}
	s := " LIMIT " + strconv.FormatInt(limit, 10)
	if st.Offset != nil {
		s += " OFFSET " + strconv.FormatInt(*st.Offset, 10)
	}
	return s
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
		if c.kind == KindText && !c.system {
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
		lit := QuoteString(strings.ToLower(w))
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
	return &Error{Status: http.StatusBadRequest, Body: map[string]any{
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
	return &Error{Status: http.StatusBadRequest, Body: map[string]any{
		"errorCode": "query.soql.no-such-function",
		"message": fmt.Sprintf("Query coordinator error: query.soql.no-such-function; No such function '%s'; arity=%d; position: Map(row -> %d, column -> %d, line -> %q)",
			n.Name.Name, arity, pos["row"], pos["column"], pos["line"]),
		"data": map[string]any{"function": n.Name.Name, "arity": arity, "dataset": tr.datasetID, "position": pos},
	}}
}

func (tr *translator) typeMismatch(pos soql.Pos, msg string) error {
	return &Error{Status: http.StatusBadRequest, Body: map[string]any{
		"errorCode": "query.soql.type-mismatch",
		"message":   "Query coordinator error: query.soql.type-mismatch; " + msg,
		"data":      map[string]any{"dataset": tr.datasetID, "position": tr.position(pos)},
	}}
}

// analyze refuses a query with a name that is neither a column nor an
// alias, or that Socrata's analyzer refuses by its type rules (soql's
// signatures), with the portal's envelope for the code: no-such-column,
// type-mismatch, no-such-function, non-boolean-where, non-boolean-having,
// unorderable-order-by, non-groupable-group-by, duplicate-alias,
// column-not-in-group-bys. The checker sees the column types datasf sees
// (socrata.ColumnType), so that an answer here means the checker there
// lets the query through.
func (tr *translator) analyze(q *soql.Query) error {
	fields := make([]soql.Field, len(tr.table.Columns))
	for i, c := range tr.table.Columns {
		fields[i] = soql.Field{Name: c.FieldName, Type: socrata.ColumnType(c.DataType)}
	}
	var ce *soql.CheckError
	if !errors.As(q.Check(tr.src, fields), &ce) {
		return nil
	}
	data := map[string]any{"dataset": tr.datasetID, "position": tr.position(ce.Pos)}
	message := ce.Error()
	switch ce.Code {
	case soql.CodeNoSuchColumn:
		data["column"] = ce.Name
		message = "Query coordinator error: " + soql.CodeNoSuchColumn + "; " + ce.Message
	case soql.CodeTypeMismatch:
		data["function"], data["type"] = ce.Name, ce.Type
	case soql.CodeNoSuchFunction:
		data["function"] = ce.Name
	default:
		if ce.Type != "" {
			data["type"] = ce.Type
		}
	}
	return &Error{Status: http.StatusBadRequest, Body: map[string]any{"errorCode": ce.Code, "message": message, "data": data}}
}

func aggregateInWhere(tr *translator, e soql.Expr) error {
	return &Error{Status: http.StatusBadRequest, Body: map[string]any{
		"errorCode": "query.soql.aggregate-in-ungrouped-context",
		"message":   "Query coordinator error: query.soql.aggregate-in-ungrouped-context; Aggregate function used in ungrouped context: WHERE",
		"data":      map[string]any{"clause": "WHERE", "dataset": tr.datasetID, "position": tr.position(e.Pos())},
	}}
}

func unsupported(tr *translator, pos soql.Pos, msg string) error {
	return &Error{Status: http.StatusBadRequest, Body: map[string]any{
		"errorCode": "query.soql.unsupported",
		"message":   "Query coordinator error: query.soql.unsupported; " + msg,
		"data":      map[string]any{"dataset": tr.datasetID, "position": tr.position(pos)},
	}}
}

// ParseError is the error Socrata answers a query src with when soql.Parse
// returned err for it: a malformed-query envelope at the
// syntax error's position.
func ParseError(src string, err error) error {
	var se *soql.SyntaxError
	if !errors.As(err, &se) {
		return malformed(src, soql.Pos{Line: 1, Column: 1}, err.Error())
	}
	detail := se.Msg
	if se.Expected != "" {
		detail = "Expected " + se.Expected + ", but got `" + se.Got + "'"
	} else if detail == "" {
		detail = se.Error()
	}
	return malformed(src, se.Pos, detail)
}

// malformed is the error Socrata answers a query it cannot parse with (code
// query.compiler.malformed): detail says what is wrong at pos of src.
func malformed(src string, pos soql.Pos, detail string) error {
	return &Error{Status: http.StatusBadRequest, Body: map[string]any{
		"code":    "query.compiler.malformed",
		"error":   true,
		"message": fmt.Sprintf("Could not parse SoQL query '%s' at line %d character %d: %s", src, pos.Line, pos.Column, detail),
		"data":    map[string]any{"query": src},
	}}
}
