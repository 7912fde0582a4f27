package soql

import (
	"fmt"
	"slices"
	"strings"
)

// This file checks a parsed query against a dataset's columns before it is
// sent, for the errors Socrata would answer after a round trip: names that
// are neither a column nor an alias, duplicate aliases, sum or avg of a
// column that is not a number, and columns outside an aggregate and the
// GROUP BY keys of a grouped stage. Its errors carry Socrata's own error
// codes and wording, so that a caller sees the same message whether the
// query was refused here or by the portal.
//
// The checks err on the side of letting a query through: a name whose
// meaning Check cannot tell (a system field, the output of an unaliased
// expression of an earlier stage, a value of unknown type) is never an
// error.

// Field is one dataset column as Check sees it.
type Field struct {
	Name string // the field name
	// Type is its SoQL type as the X-SODA2-Types header names it (text,
	// number, floating_timestamp, boolean, point, ...); "" when unknown.
	Type string
}

// Socrata's error codes for what Check finds.
const (
	CodeNoSuchColumn        = "query.soql.no-such-column"
	CodeDuplicateAlias      = "query.soql.duplicate-alias"
	CodeTypeMismatch        = "query.soql.type-mismatch"
	CodeColumnNotInGroupBys = "query.soql.column-not-in-group-bys"
	CodeNoSuchFunction      = "query.soql.no-such-function"
	CodeNonBooleanWhere     = "query.soql.non-boolean-where"
	CodeNonBooleanHaving    = "query.soql.non-boolean-having"
	CodeUnorderableOrderBy  = "query.soql.unorderable-order-by"
	CodeNonGroupableGroupBy = "query.soql.non-groupable-group-by"
)

// CheckError is a query that Socrata would refuse. Its Error text is the
// portal's message for the same query ("Query coordinator error:
// query.soql.no-such-column; No such column: x; position: Map(...)").
type CheckError struct {
	Code    string // Socrata's errorCode, one of the Code constants
	Message string // Socrata's words after the code, e.g. "No such column: x"
	Name    string // the column, alias or function at fault
	Type    string // CodeTypeMismatch: the type of the argument
	Clause  string // where: SELECT, WHERE, GROUP BY, HAVING or ORDER BY
	Stage   int    // the |> stage (0 is the first)
	Pos     Pos    // the position of the name
	Line    string // the source line holding Pos
	// Aliases are the aliases the stage defines, for CodeNoSuchColumn.
	Aliases []string

	// For CodeTypeMismatch: the argument refused (of type Type), the class
	// of type expected there (number, text, timestamp, boolean, ordered),
	// the other side of a comparison and its type, and the column the
	// mismatch involves ("" when none is named).
	Arg       Expr
	Want      string
	Other     Expr
	OtherType string
	Column    string

	// Fix is a one-line fix for the codes whose fix the checker knows
	// best (no-such-function and the clause rules); "" otherwise.
	Fix string
}

func (e *CheckError) Error() string {
	return fmt.Sprintf("Query coordinator error: %s; %s; position: Map(row -> %d, column -> %d, line -> %q)",
		e.Code, e.Message, e.Pos.Line, e.Pos.Column, e.Line)
}

// Check reports the first error Socrata would answer for q run against a
// dataset with these columns, or nil. src is the query text q was parsed
// from (for the error's line); it may be "".
func (q *Query) Check(src string, columns []Field) error {
	return q.check(src, columns, false)
}

// CheckTypes reports the first type mismatch Socrata would answer for q
// run against a dataset with these columns, or nil. Unlike Check it does
// not look at names (an unknown name has an unknown type) or grouping.
func (q *Query) CheckTypes(src string, columns []Field) error {
	return q.check(src, columns, true)
}

func (q *Query) check(src string, columns []Field, typesOnly bool) error {
	if len(columns) == 0 {
		return nil // nothing to check against
	}
	scope := map[string]string{} // canonical name -> type ("" unknown)
	for _, c := range columns {
		scope[CanonicalName(c.Name)] = c.Type
	}
	complete := true // scope lists every name the stage can see
	for i, st := range q.Stages {
		c := &checker{src: src, stage: i, st: st, scope: scope, complete: complete && !typesOnly, typesOnly: typesOnly, aliases: map[string]Expr{}}
		if err := c.check(); err != nil {
			return err
		}
		scope, complete = c.output()
	}
	return nil
}

// canonicalName is how Socrata compares names: case-insensitively, with
// '-' equal to '_'.
// CanonicalName is the form in which Socrata compares column names and
// aliases: case-insensitive, with '-' equal to '_'. Two names mean the same
// column exactly when their CanonicalNames are equal.
func CanonicalName(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }

type checker struct {
	src       string
	stage     int
	st        *Select
	scope     map[string]string // the names the stage reads, with their types
	complete  bool              // false: scope may lack names (skip name checks)
	typesOnly bool              // check types only
	aliases   map[string]Expr   // canonical alias -> its expression
	names     []string          // the aliases as written, in order
}

func (c *checker) fail(code, msg, name, clause string, pos Pos) *CheckError {
	line := c.src
	if lines := strings.Split(c.src, "\n"); pos.Line >= 1 && pos.Line <= len(lines) {
		line = lines[pos.Line-1]
	}
	return &CheckError{Code: code, Message: msg, Name: name, Clause: clause, Stage: c.stage, Pos: pos, Line: line,
		Aliases: slices.Clone(c.names)}
}

// clauses calls fn for every expression of the stage, with its clause.
func (c *checker) clauses(fn func(clause string, e Expr) error) error {
	for _, it := range c.st.Selection {
		if it.Expr != nil {
			if err := fn("SELECT", it.Expr); err != nil {
				return err
			}
		}
	}
	if c.st.Where != nil {
		if err := fn("WHERE", c.st.Where); err != nil {
			return err
		}
	}
	for _, e := range c.st.GroupBy {
		if err := fn("GROUP BY", e); err != nil {
			return err
		}
	}
	if c.st.Having != nil {
		if err := fn("HAVING", c.st.Having); err != nil {
			return err
		}
	}
	for _, o := range c.st.OrderBy {
		if err := fn("ORDER BY", o.Expr); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) check() error {
	for _, it := range c.st.Selection {
		if it.Alias == nil {
			continue
		}
		k := CanonicalName(it.Alias.Name)
		if _, dup := c.aliases[k]; dup && !c.typesOnly {
			return c.fail(CodeDuplicateAlias, "Duplicate alias: "+it.Alias.Name, it.Alias.Name, "SELECT", it.Alias.NamePos)
		}
		c.aliases[k] = it.Expr
		c.names = append(c.names, it.Alias.Name)
	}
	// Names: every identifier is a column the stage reads or one of its
	// aliases (SoQL lets any clause use an alias of the select list).
	if c.complete {
		err := c.clauses(func(clause string, e Expr) error {
			var bad *Ident
			Walk(e, func(x Expr) bool {
				if id, ok := x.(*Ident); ok && bad == nil && !id.System() {
					k := CanonicalName(id.Name)
					if _, col := c.scope[k]; !col {
						if _, alias := c.aliases[k]; !alias {
							bad = id
						}
					}
				}
				return bad == nil
			})
			if bad != nil {
				return c.fail(CodeNoSuchColumn, "No such column: "+bad.Name, bad.Name, clause, bad.NamePos)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	// Types: every expression, as Socrata's analyzer types it (types.go).
	if err := c.checkTypes(); err != nil {
		return err
	}
	if c.typesOnly {
		return nil
	}
	return c.checkGrouping()
}

// checkGrouping refuses, in a grouped stage, a column outside every
// aggregate and every GROUP BY key (Socrata's column-not-in-group-bys).
func (c *checker) checkGrouping() error {
	if !c.st.grouped() {
		return nil
	}
	var keys []Expr
	for _, k := range c.st.GroupBy {
		keys = append(keys, k)
		if id, ok := unparen(k).(*Ident); ok {
			if a, isAlias := c.aliases[CanonicalName(id.Name)]; isAlias && a != nil {
				keys = append(keys, a)
			}
		}
	}
	grouped := func(e Expr) bool {
		for _, k := range keys {
			if sameGroupKey(k, e) {
				return true
			}
		}
		return false
	}
	var bad *Ident
	visit := func(e Expr, aliasesVisible bool) {

		Walk(e, func(x Expr) bool {
			if bad != nil || grouped(x) {
				return false
			}
			switch n := x.(type) {
			case *Call:
				if IsAggregate(n.Name.Name) {
					return false
				}
			case *Ident:
				k := CanonicalName(n.Name)
				if n.System() {
					return false
				}
				if _, alias := c.aliases[k]; alias {
					// An alias stands for a select item, checked itself.
					if _, col := c.scope[k]; aliasesVisible || !col {
						return false
					}
				}
				bad = n
				return false
			}
			return true
		})
	}
	clause := ""
	for _, it := range c.st.Selection {
		if it.Expr != nil && bad == nil {
			clause = "SELECT"
			visit(it.Expr, false)
		}
	}
	if c.st.Having != nil && bad == nil {
		clause = "HAVING"
		visit(c.st.Having, true)
	}
	for _, o := range c.st.OrderBy {
		if bad == nil {
			clause = "ORDER BY"
			visit(o.Expr, true)
		}
	}
	if bad != nil {
		return c.fail(CodeColumnNotInGroupBys, fmt.Sprintf("Column '%s' is not in group by", bad.Name), bad.Name, clause, bad.NamePos)
	}
	return nil
}

// sameGroupKey compares two expressions as Socrata's aggregate checker
// does: by their canonical text, names compared case-insensitively.
func sameGroupKey(a, b Expr) bool {
	return CanonicalName(Format(unparen(a))) == CanonicalName(Format(unparen(b)))
}

// output returns the names (canonical, with types) the stage's result has,
// for the next stage, and whether that list is complete.
func (c *checker) output() (map[string]string, bool) {
	out := map[string]string{}
	complete := c.complete
	if len(c.st.Selection) == 0 {
		return c.scope, complete
	}
	for _, it := range c.st.Selection {
		switch {
		case it.Star == AllStar:
			for k, t := range c.scope {
				out[k] = t
			}
		case it.Star == SystemStar:
			// system fields are never checked
		case it.Alias != nil:
			out[CanonicalName(it.Alias.Name)] = c.exprType(it.Expr)
		default:
			if id, ok := unparen(it.Expr).(*Ident); ok && !id.System() {
				out[CanonicalName(id.Name)] = c.exprType(id)
			} else if !ok {
				// Socrata names an unaliased expression itself
				// (count(*) is "count"): the next stage may read names
				// this check cannot list.
				complete = false
			}
		}
	}
	return out, complete
}

// WithStableOrderFor is WithStableOrder on a dataset with these columns:
// an ORDER BY key it would add whose type does not sort (a point, a
// photo: outside C Ordered:7, so Socrata refuses to order by it,
// query.soql.unorderable-order-by) is left out. Without columns it is
// WithStableOrder.
func (q *Query) WithStableOrderFor(columns []Field) *Query {
	out := q.WithStableOrder()
	if len(columns) == 0 || len(out.Stages) == 0 {
		return out
	}
	scope := map[string]string{}
	for _, c := range columns {
		scope[CanonicalName(c.Name)] = c.Type
	}
	last := len(out.Stages) - 1
	for i, st := range out.Stages {
		c := &checker{stage: i, st: st, scope: scope, typesOnly: true, aliases: map[string]Expr{}}
		for _, it := range st.Selection {
			if it.Alias != nil {
				c.aliases[CanonicalName(it.Alias.Name)] = it.Expr
			}
		}
		if i < last {
			scope, _ = c.output()
			continue
		}
		kept := st.OrderBy[:0:0]
		for j, o := range st.OrderBy {
			if j >= len(q.Stages[last].OrderBy) {
				if t := c.exprType(o.Expr); t != "" && typeBits[t]&classOrderedSet == 0 {
					continue // added, and it does not sort
				}
			}
			kept = append(kept, o)
		}
		st.OrderBy = kept
	}
	return out
}
