package soql

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// This file types SoQL expressions the way Socrata's analyzer does before
// it runs a query, by the rules of signatures.go and literals.go, so that
// a query it would refuse is refused before any request, with its code:
//
//   - query.soql.type-mismatch: no overload of a function or operator takes
//     the arguments' types (a literal takes any type it converts to);
//   - query.soql.no-such-function: no overload takes that many arguments;
//   - query.soql.non-boolean-where / non-boolean-having: the filter is not
//     a boolean (I isBoolean:31; E NonBooleanWhere:220, NonBooleanHaving:222);
//   - query.soql.unorderable-order-by: ORDER BY a type outside C Ordered:7
//     (I isOrdered:30; E UnorderableOrderBy:223);
//   - query.soql.non-groupable-group-by: GROUP BY a type outside
//     C Equatable:24 (I isGroupable:32; E NonGroupableGroupBy:221).
//
// A type the checker cannot tell (a function the rules do not list, a
// subscript, a name outside the schema) is unknown, and an unknown type is
// never an error: the checker only refuses what it is sure the portal
// refuses.

// valType is an expression's type as the checker infers it.
type valType struct {
	name string  // the type to report; "" unknown, "null" for the null literal
	set  typeSet // every type the value can take (a literal's conversions); 0 unknown
}

func (v valType) known() bool { return v.set != 0 && v.name != "null" }

// types is the set to bind: unknown values take any type.
func (v valType) types() typeSet {
	if v.set == 0 {
		return allTypes
	}
	return v.set
}

func typeOf(name string) valType {
	if b, ok := typeBits[name]; ok {
		return valType{name: name, set: b}
	}
	return valType{}
}

// className names the class of types a parameter wants, for messages and
// fixes: ordered, number, timestamp, text, boolean, geometry, or a type.
func className(s typeSet) string {
	switch {
	case s == 0 || s == allTypes:
		return ""
	case s == classOrderedSet:
		return "ordered"
	case s == classEquatableSet:
		return "equatable"
	case s&classNumLikeSet != 0:
		return "number"
	case s&classTimestampTS != 0:
		return "timestamp"
	case s.has("text"):
		return "text"
	case s.has("boolean"):
		return "boolean"
	case s&classGeoSet != 0 || s.has("location"):
		return "geometry"
	}
	return s.names()[0]
}

// typer infers types within one stage.
type typer struct {
	c        *checker
	visiting map[string]bool // aliases being inferred (no cycles)
	err      *CheckError
	clause   string
}

// columnOf is the column an expression names, or "".
func columnOf(e Expr) string {
	if id, ok := unparen(e).(*Ident); ok && !id.System() {
		return id.Name
	}
	return ""
}

// infer returns e's type, recording the first error.
func (ty *typer) infer(e Expr) valType {
	if ty.err != nil {
		return valType{}
	}
	switch n := e.(type) {
	case *Paren:
		return ty.infer(n.X)
	case *StringLit:
		return valType{name: "text", set: stringLiteralSet(n.Value)}
	case *NumberLit:
		return valType{name: "number", set: numberLiteralSet}
	case *BoolLit:
		return typeOf("boolean")
	case *NullLit:
		return valType{name: "null", set: allTypes}
	case *Ident:
		return ty.ident(n)
	case *Cast:
		x := ty.infer(n.X)
		t := castTarget(n.Type.Name)
		if t == "" {
			return valType{}
		}
		return ty.apply("cast$"+t, n.Type.NamePos, []Expr{n.X}, []valType{x})
	case *Unary:
		x := ty.infer(n.X)
		return ty.apply("op$"+n.Op, n.Pos(), []Expr{n.X}, []valType{x})
	case *Binary:
		l, r := ty.infer(n.Left), ty.infer(n.Right)
		return ty.apply("op$"+n.Op, n.OpPos, []Expr{n.Left, n.Right}, []valType{l, r})
	case *In:
		args := append([]Expr{n.X}, n.List...)
		return ty.apply("op$in", n.Pos(), args, ty.inferAll(args))
	case *Between:
		args := []Expr{n.X, n.Lo, n.Hi}
		return ty.apply("op$between", n.Pos(), args, ty.inferAll(args))
	case *Like:
		args := []Expr{n.X, n.Pattern}
		return ty.apply("op$like", n.Pos(), args, ty.inferAll(args))
	case *IsNull:
		ty.infer(n.X)
		return typeOf("boolean")
	case *Case:
		// CASE WHEN c THEN v ... ELSE e END is case(c, v, ..., true, e).
		var args []Expr
		for _, w := range n.Whens {
			args = append(args, w.Cond, w.Value)
		}
		if n.Else != nil {
			args = append(args, &BoolLit{Value: true, LitPos: n.Else.Pos()}, n.Else)
		}
		return ty.apply("case", n.CasePos, args, ty.inferAll(args))
	case *Call:
		if n.Star {
			return typeOf("number") // F CountStar:350
		}
		return ty.apply(strings.ToLower(n.Name.Name), n.Name.NamePos, n.Args, ty.inferAll(n.Args))
	case *Dot, *Index:
		return valType{}
	}
	return valType{}
}

func (ty *typer) inferAll(es []Expr) []valType {
	vs := make([]valType, len(es))
	for i, e := range es {
		vs[i] = ty.infer(e)
	}
	return vs
}

// ident types a column or alias.
func (ty *typer) ident(n *Ident) valType {
	if n.System() {
		switch strings.ToLower(n.Name) {
		case ":id":
			return typeOf("text")
		case ":created_at", ":updated_at":
			return typeOf("fixed_timestamp")
		}
		return valType{}
	}
	k := CanonicalName(n.Name)
	if a, ok := ty.c.aliases[k]; ok {
		if id, isIdent := unparen(a).(*Ident); isIdent && CanonicalName(id.Name) == k {
			return typeOf(ty.c.scope[k]) // SELECT x AS x
		}
		if ty.visiting[k] {
			return valType{}
		}
		ty.visiting[k] = true
		defer delete(ty.visiting, k)
		saved := ty.err
		v := ty.infer(a) // the alias's own errors are reported where it is defined
		ty.err = saved
		return v
	}
	return typeOf(ty.c.scope[k])
}

// bind matches the arguments against one overload: each argument's types
// meet what its parameter allows, and the arguments of one type variable
// share a type. It returns the result's types, or the index of the first
// argument that does not fit (-1 when all fit).
func bind(s *Signature, vals []valType) (result typeSet, bad int) {
	vars := map[string]typeSet{}
	for i, v := range vals {
		p := s.param(i)
		got := v.types() & s.allowed(p)
		if isTypeVar(p) {
			if prev, ok := vars[p]; ok {
				got &= prev
			}
			vars[p] = got
		}
		if got == 0 {
			return 0, i
		}
	}
	if isTypeVar(s.Result) {
		if r, ok := vars[s.Result]; ok {
			return r, -1
		}
		return allTypes, -1
	}
	return setOf(s.Result), -1
}

// apply types a call of fn (a function, "op$x" or "cast$t") with these
// arguments by its overloads, recording the portal's error when none fits.
func (ty *typer) apply(fn string, pos Pos, args []Expr, vals []valType) valType {
	if ty.err != nil {
		return valType{}
	}
	sigs := signaturesByName[fn]
	if len(sigs) == 0 {
		return valType{}
	}
	var fit []*Signature
	for i := range sigs {
		if sigs[i].ArityOK(len(vals)) {
			fit = append(fit, &sigs[i])
		}
	}
	if len(fit) == 0 {
		if !strings.HasPrefix(fn, "op$") && !strings.HasPrefix(fn, "cast$") {
			ty.noSuchFunction(fn, pos, len(vals), sigs)
		}
		return valType{}
	}
	var result typeSet
	bad := -1
	for _, s := range fit {
		r, b := bind(s, vals)
		if b < 0 {
			result |= r
		} else if b > bad {
			bad = b // the overload that went furthest names the argument at fault
		}
	}
	if result != 0 {
		name := result.single()
		if name == "" && len(vals) > 0 && result.has(vals[0].name) {
			name = vals[0].name
		}
		if name == "" {
			name = result.names()[0]
		}
		if result == allTypes {
			return valType{}
		}
		return valType{name: name, set: result}
	}
	ty.mismatch(fn, fit, args, vals, bad)
	return valType{}
}

// mismatch records the type-mismatch of argument bad of a call of fn.
func (ty *typer) mismatch(fn string, fit []*Signature, args []Expr, vals []valType, bad int) {
	// The argument no overload takes by itself is at fault; when each
	// fits alone, the one that disagrees with an earlier argument of the
	// same type variable is, or that earlier one when it is not a bare
	// column and the later is (incident_datetime = 2023 blames 2023).
	other := -1
	var want typeSet
	for _, s := range fit {
		want |= s.allowed(s.param(bad))
	}
	if vals[bad].types()&want != 0 {
		for _, s := range fit {
			p := s.param(bad)
			if !isTypeVar(p) {
				continue
			}
			for j := 0; j < bad; j++ {
				if s.param(j) == p && vals[j].known() {
					other = j
					break
				}
			}
			if other >= 0 {
				break
			}
		}
		if other >= 0 {
			if columnOf(args[bad]) != "" && columnOf(args[other]) == "" {
				bad, other = other, bad
			}
			want = vals[other].types()
		}
	}
	got := vals[bad]
	name := got.name
	if name == "" || name == "null" {
		name = got.types().names()[0]
	}
	e := ty.c.fail(CodeTypeMismatch, fmt.Sprintf("Type mismatch for %s, is %s", fn, name), fn, ty.clause, args[bad].Pos())
	e.Type = name
	e.Want = className(want)
	e.Arg = args[bad]
	e.Column = columnOf(args[bad])
	if other >= 0 {
		e.Other = args[other]
		e.OtherType = vals[other].name
		if e.Column == "" {
			e.Column = columnOf(args[other])
		}
	}
	ty.err = e
}

// noSuchFunction records a call of fn with an argument count no overload
// takes; the fix lists the counts it takes.
func (ty *typer) noSuchFunction(fn string, pos Pos, n int, sigs []Signature) {
	var counts []string
	for _, s := range sigs {
		c := strconv.Itoa(len(s.Params))
		if len(s.Repeat) > 0 {
			c += " or more"
		}
		if !slices.Contains(counts, c) {
			counts = append(counts, c)
		}
	}
	slices.Sort(counts)
	e := ty.c.fail(CodeNoSuchFunction, fmt.Sprintf("No such function '%s'; arity=%d", fn, n), fn, ty.clause, pos)
	e.Fix = fmt.Sprintf("%s takes %s argument(s), not %d", fn, strings.Join(counts, " or "), n)
	if fn == "round" {
		e.Fix += ": round(x, 0) rounds to a whole number"
	}
	ty.err = e
}

// clauseRule is what a clause needs of its expressions' type (I isBoolean:31,
// isOrdered:30, isGroupable:32), the code and the wording of its refusal
// (E NonBooleanWhere:220 ... UnorderableOrderBy:223; see signatures.go for
// the keys and pinned commits).
var clauseRules = map[string]struct {
	allowed typeSet
	code    string
	verb    string
}{
	"WHERE":    {setOf("boolean"), CodeNonBooleanWhere, "filter by"},
	"HAVING":   {setOf("boolean"), CodeNonBooleanHaving, "filter by"},
	"ORDER BY": {classOrderedSet, CodeUnorderableOrderBy, "order by"},
	"GROUP BY": {classEquatableSet, CodeNonGroupableGroupBy, "group by"},
}

// checkTypes types every expression of the stage and applies the clause
// rules.
func (c *checker) checkTypes() error {
	ty := &typer{c: c, visiting: map[string]bool{}}
	return c.clauses(func(clause string, e Expr) error {
		ty.clause = clause
		v := ty.infer(e)
		if ty.err != nil {
			return ty.err
		}
		rule, ok := clauseRules[clause]
		if !ok || !v.known() || v.set&rule.allowed != 0 {
			return nil
		}
		ce := c.fail(rule.code, fmt.Sprintf("Cannot %s an expression of type `%s'", rule.verb, v.name), v.name, clause, e.Pos())
		ce.Type = v.name
		ce.Arg = e
		ce.Column = columnOf(e)
		switch rule.code {
		case CodeNonBooleanWhere, CodeNonBooleanHaving:
			ce.Fix = fmt.Sprintf("%s needs a condition, e.g. %s IS NOT NULL or %s = <value>", clause, Format(e), Format(e))
		case CodeUnorderableOrderBy:
			ce.Fix = fmt.Sprintf("a %s value does not sort: order by another column or a number computed from it", v.name)
		default:
			ce.Fix = fmt.Sprintf("a %s value cannot be a group key: group by another column", v.name)
		}
		return ce
	})
}

// exprType is the type of e in the stage, "" when unknown.
func (c *checker) exprType(e Expr) string {
	ty := &typer{c: c, visiting: map[string]bool{}}
	v := ty.infer(e)
	if !v.known() {
		return ""
	}
	return v.name
}
