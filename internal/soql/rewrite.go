package soql

import (
	"slices"
	"strings"
)

// Clone returns a deep copy of q.
func (q *Query) Clone() *Query {
	if q == nil {
		return nil
	}
	out := &Query{Stages: make([]*Select, len(q.Stages))}
	for i, s := range q.Stages {
		out.Stages[i] = s.clone()
	}
	return out
}

func (s *Select) clone() *Select {
	c := *s
	if s.Selection != nil {
		c.Selection = make([]*SelectItem, len(s.Selection))
		for i, it := range s.Selection {
			c.Selection[i] = &SelectItem{Star: it.Star, Expr: CloneExpr(it.Expr), Alias: cloneIdent(it.Alias)}
		}
	}
	c.Where = CloneExpr(s.Where)
	c.GroupBy = cloneExprs(s.GroupBy)
	c.Having = CloneExpr(s.Having)
	if s.OrderBy != nil {
		c.OrderBy = make([]*OrderItem, len(s.OrderBy))
		for i, o := range s.OrderBy {
			c.OrderBy[i] = &OrderItem{Expr: CloneExpr(o.Expr), Desc: o.Desc, Nulls: o.Nulls}
		}
	}
	c.Search = clonePtr(s.Search)
	c.Limit = clonePtr(s.Limit)
	c.Offset = clonePtr(s.Offset)
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneIdent(id *Ident) *Ident {
	if id == nil {
		return nil
	}
	c := *id
	return &c
}

func cloneExprs(es []Expr) []Expr {
	if es == nil {
		return nil
	}
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = CloneExpr(e)
	}
	return out
}

// CloneExpr returns a deep copy of e (nil for nil).
func CloneExpr(e Expr) Expr {
	switch n := e.(type) {
	case nil:
		return nil
	case *Ident:
		return cloneIdent(n)
	case *StringLit:
		c := *n
		return &c
	case *NumberLit:
		c := *n
		return &c
	case *BoolLit:
		c := *n
		return &c
	case *NullLit:
		c := *n
		return &c
	case *Call:
		c := *n
		c.Name = cloneIdent(n.Name)
		c.Args = cloneExprs(n.Args)
		return &c
	case *Binary:
		c := *n
		c.Left, c.Right = CloneExpr(n.Left), CloneExpr(n.Right)
		return &c
	case *Unary:
		c := *n
		c.X = CloneExpr(n.X)
		return &c
	case *In:
		c := *n
		c.X = CloneExpr(n.X)
		c.List = cloneExprs(n.List)
		return &c
	case *Between:
		c := *n
		c.X, c.Lo, c.Hi = CloneExpr(n.X), CloneExpr(n.Lo), CloneExpr(n.Hi)
		return &c
	case *Like:
		c := *n
		c.X, c.Pattern = CloneExpr(n.X), CloneExpr(n.Pattern)
		return &c
	case *IsNull:
		c := *n
		c.X = CloneExpr(n.X)
		return &c
	case *Cast:
		c := *n
		c.X, c.Type = CloneExpr(n.X), cloneIdent(n.Type)
		return &c
	case *Paren:
		c := *n
		c.X = CloneExpr(n.X)
		return &c
	case *Index:
		c := *n
		c.X, c.Index = CloneExpr(n.X), CloneExpr(n.Index)
		return &c
	case *Dot:
		c := *n
		c.X, c.Field = CloneExpr(n.X), cloneIdent(n.Field)
		return &c
	case *Case:
		c := *n
		c.Whens = make([]When, len(n.Whens))
		for i, w := range n.Whens {
			c.Whens[i] = When{Cond: CloneExpr(w.Cond), Value: CloneExpr(w.Value)}
		}
		c.Else = CloneExpr(n.Else)
		return &c
	}
	panic("soql: CloneExpr: unknown expression type")
}

// aggregates are the SoQL aggregate functions (lower-case).
var aggregates = map[string]bool{
	"count": true, "count_distinct": true, "sum": true, "avg": true, "min": true, "max": true,
	"stddev_pop": true, "stddev_samp": true, "median": true,
	"convex_hull": true, "extent": true, "spatial_union": true,
	"regr_slope": true, "regr_intercept": true, "regr_r2": true,
}

// IsAggregate reports whether name (any case) is a SoQL aggregate function.
func IsAggregate(name string) bool { return aggregates[strings.ToLower(name)] }

// HasAggregate reports whether e calls an aggregate function.
func HasAggregate(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*Call); ok && IsAggregate(c.Name.Name) {
			found = true
		}
		return !found
	})
	return found
}

func (s *Select) grouped() bool {
	if len(s.GroupBy) > 0 || HasAggregate(s.Having) {
		return true
	}
	for _, it := range s.Selection {
		if HasAggregate(it.Expr) {
			return true
		}
	}
	return false
}

func (q *Query) last() *Select { return q.Stages[len(q.Stages)-1] }

// Grouped reports whether the last stage aggregates: it has GROUP BY, or an
// aggregate call (count, sum, avg, min, max, ...) in SELECT or HAVING.
func (q *Query) Grouped() bool { return len(q.Stages) > 0 && q.last().grouped() }

// sameExpr compares two expressions by canonical text, ignoring case (SoQL
// names are case-insensitive) and redundant parentheses around the whole.
func sameExpr(a, b Expr) bool {
	return strings.EqualFold(Format(unparen(a)), Format(unparen(b)))
}

func unparen(e Expr) Expr {
	for {
		p, ok := e.(*Paren)
		if !ok {
			return e
		}
		e = p.X
	}
}

func isIdentNamed(e Expr, name string) bool {
	id, ok := unparen(e).(*Ident)
	return ok && strings.EqualFold(id.Name, name)
}

// WithStableOrder returns a copy of q whose last stage has a deterministic
// order, so that paging through it neither skips nor repeats rows. The user's
// ORDER BY keys come first. An ungrouped stage then gets the `:id`
// tie-breaker; a DISTINCT stage, or a later |> stage whose input does not
// carry :id, gets every output column not already ordered instead (as its
// alias when it has one). A grouped stage gets every GROUP BY key not already
// ordered, written as its alias when the select list aliases it.
func (q *Query) WithStableOrder() *Query {
	out := q.Clone()
	if len(out.Stages) == 0 {
		return out
	}
	i := len(out.Stages) - 1
	st := out.Stages[i]
	ordered := func(e Expr) bool {
		for _, o := range st.OrderBy {
			if sameExpr(o.Expr, e) {
				return true
			}
		}
		return false
	}
	if st.grouped() {
		for _, k := range st.GroupBy {
			key := k
			for _, it := range st.Selection {
				if it.Alias != nil && it.Expr != nil && sameExpr(it.Expr, k) {
					key = &Ident{Name: it.Alias.Name, Raw: formatIdent(it.Alias), Quoted: it.Alias.Quoted}
					break
				}
			}
			if ordered(key) || ordered(k) {
				continue
			}
			st.OrderBy = append(st.OrderBy, &OrderItem{Expr: CloneExpr(key)})
		}
		return out
	}
	if st.Distinct || (i > 0 && !outputHasID(out.Stages[i-1])) {
		// No :id to break ties: order by every output column instead, so
		// rows that differ are always in the same order (rows that do not
		// differ are interchangeable). A * selection cannot be listed here.
		for _, it := range st.Selection {
			if it.Star != NoStar || it.Expr == nil {
				continue
			}
			key := CloneExpr(it.Expr)
			if it.Alias != nil {
				key = &Ident{Name: it.Alias.Name, Raw: formatIdent(it.Alias), Quoted: it.Alias.Quoted}
			}
			if !ordered(key) && !ordered(it.Expr) {
				st.OrderBy = append(st.OrderBy, &OrderItem{Expr: key})
			}
		}
		return out
	}
	id := &Ident{Name: ":id", Raw: ":id"}
	if !ordered(id) {
		st.OrderBy = append(st.OrderBy, &OrderItem{Expr: id})
	}
	return out
}

// outputHasID reports whether a stage's output rows carry the :id column
// (it selects :id or :* and does not aggregate or de-duplicate).
func outputHasID(s *Select) bool {
	if s.Distinct || s.grouped() {
		return false
	}
	for _, it := range s.Selection {
		if it.Star == SystemStar {
			return true
		}
		if it.Expr != nil && isIdentNamed(it.Expr, ":id") && (it.Alias == nil || strings.EqualFold(it.Alias.Name, ":id")) {
			return true
		}
	}
	return false
}

// WithoutPaging returns a copy of q without ORDER BY, LIMIT and OFFSET on its
// last stage.
func (q *Query) WithoutPaging() *Query {
	out := q.Clone()
	if len(out.Stages) > 0 {
		st := out.last()
		st.OrderBy, st.Limit, st.Offset = nil, nil, nil
	}
	return out
}

// WithPage returns a copy of q limited to one page of its result: rows
// offset .. offset+limit-1 of what q returns. The page lies inside the user's
// own window: with LIMIT n OFFSET m on the last stage the result is
// OFFSET m+offset LIMIT min(limit, n-offset), and LIMIT 0 once the page
// starts past the user's n rows. Negative arguments count as 0.
func (q *Query) WithPage(offset, limit int64) *Query {
	out := q.Clone()
	if len(out.Stages) == 0 {
		return out
	}
	offset, limit = max(offset, 0), max(limit, 0)
	st := out.last()
	var userOff int64
	if st.Offset != nil {
		userOff = *st.Offset
	}
	newLimit := limit
	if st.Limit != nil {
		newLimit = min(limit, max(*st.Limit-offset, 0))
	}
	newOff := userOff + offset
	if newOff < userOff { // overflow
		newOff = 1<<63 - 1
	}
	st.Limit = &newLimit
	if newOff > 0 || st.Offset != nil {
		st.Offset = &newOff
	} else {
		st.Offset = nil
	}
	return out
}

// CountQuery returns a query whose single row, column "count", is the number
// of rows q returns: q with the last stage's ORDER BY removed (its LIMIT and
// OFFSET are kept, so a user LIMIT n caps the count at n), followed by
// `|> SELECT count(*) AS count`.
func (q *Query) CountQuery() *Query {
	out := q.Clone()
	if len(out.Stages) == 0 {
		out.Stages = []*Select{{}}
	}
	out.last().OrderBy = nil
	if stageEmpty(out.last()) {
		// An empty stage cannot precede |>; count the dataset directly.
		out.Stages = out.Stages[:len(out.Stages)-1]
	}
	out.Stages = append(out.Stages, &Select{Selection: []*SelectItem{{
		Expr:  &Call{Name: &Ident{Name: "count", Raw: "count"}, Star: true},
		Alias: &Ident{Name: "count", Raw: "count"},
	}}})
	return out
}

// ColumnRefs returns every identifier of stage 0 that refers to a dataset
// column, in source order. Not included: function names, cast types, Dot
// field names (for location.latitude only location), system fields such as
// :id, and names in WHERE, GROUP BY, HAVING or ORDER BY that refer to an
// alias defined in the stage's select list. Identifiers in later |> stages
// refer to the previous stage's output and are not returned.
func (q *Query) ColumnRefs() []*Ident {
	if len(q.Stages) == 0 {
		return nil
	}
	st := q.Stages[0]
	aliases := map[string]bool{}
	for _, it := range st.Selection {
		if it.Alias != nil {
			aliases[strings.ToLower(it.Alias.Name)] = true
		}
	}
	var refs []*Ident
	collect := func(e Expr, aliasesVisible bool) {
		Walk(e, func(x Expr) bool {
			if id, ok := x.(*Ident); ok && !id.System() && !(aliasesVisible && aliases[strings.ToLower(id.Name)]) {
				refs = append(refs, id)
			}
			return true
		})
	}
	for _, it := range st.Selection {
		collect(it.Expr, false)
	}
	collect(st.Where, true)
	for _, e := range st.GroupBy {
		collect(e, true)
	}
	collect(st.Having, true)
	for _, o := range st.OrderBy {
		collect(o.Expr, true)
	}
	slices.SortStableFunc(refs, func(a, b *Ident) int { return a.NamePos.Offset - b.NamePos.Offset })
	return refs
}

// Column returns an identifier that refers to the column called name,
// printed bare when it can be and in backticks otherwise.
func Column(name string) *Ident {
	id := &Ident{Name: name}
	id.Raw = formatIdent(id)
	return id
}

// SortedBy returns q followed by one more stage that orders q's result:
// `<q> |> SELECT columns ORDER BY keys`. The keys and columns name q's output
// columns, so the new order applies after q's own LIMIT and OFFSET and never
// changes which rows q selects; columns keeps the result's columns as they
// were (with none, the stage selects *). When q's last stage has no LIMIT
// or OFFSET its ORDER BY cannot matter and is dropped, and a stage left
// empty is dropped with it, so `SELECT *` sorts the dataset directly.
func (q *Query) SortedBy(columns []string, keys []*OrderItem) *Query {
	out := q.Clone()
	if n := len(out.Stages); n > 0 {
		st := out.last()
		if st.Limit == nil && st.Offset == nil {
			st.OrderBy = nil
			if stageEmpty(st) {
				out.Stages = out.Stages[:n-1]
			}
		}
	}
	sel := &Select{OrderBy: make([]*OrderItem, len(keys))}
	for i, k := range keys {
		sel.OrderBy[i] = &OrderItem{Expr: CloneExpr(k.Expr), Desc: k.Desc, Nulls: k.Nulls}
	}
	if len(columns) == 0 {
		sel.Selection = []*SelectItem{{Star: AllStar}}
	}
	for _, c := range columns {
		sel.Selection = append(sel.Selection, &SelectItem{Expr: Column(c)})
	}
	out.Stages = append(out.Stages, sel)
	return out
}
