package soql

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// This file types SoQL expressions the way Socrata's analyzer does before
// it runs a query, so that a query it would refuse with
// query.soql.type-mismatch is refused before any request.
//
// The rules follow Socrata's documented type system:
//
//   - number, double and money are the numeric types; they compare with
//     each other and take part in arithmetic (+ - * / % ^, unary -).
//   - floating_timestamp and fixed_timestamp compare with timestamps;
//     text compares with text; boolean with boolean.
//   - A string literal is coerced to the type it is compared with: to a
//     timestamp when it reads as one ('2023-01-01', '2023-01-01T10:00:00'),
//     to a number when it reads as one ('42'), to a boolean when it is
//     'true' or 'false'. A number literal is never coerced to text or to a
//     timestamp (incident_date > 2023-01-01 is arithmetic, 2021, compared
//     with a timestamp: refused).
//   - AND, OR and NOT take booleans; LIKE takes text; IN and BETWEEN
//     compare like =; IS NULL takes anything; :: casts to the named type.
//   - Functions take the argument types their signature lists (funcs).
//
// A type the checker cannot tell (an unknown function, a subscript, a
// field of a location, a name outside the schema) is "unknown", and an
// unknown type is never an error: the checker only refuses what it is sure
// the portal refuses.

// Type classes of the function signatures.
const (
	classAny       = "any"
	classText      = "text"
	classNumber    = "number"
	classTimestamp = "timestamp"
	classBoolean   = "boolean"
	classOrdered   = "ordered" // anything that sorts: not a geometry
)

// signature is a SoQL function's argument classes and result type.
type signature struct {
	args     []string // the class of each argument; the last repeats when variadic
	variadic bool
	// result is the result type; "" is the type of the first argument
	// whose type is known (min, max, coalesce).
	result    string
	aggregate bool
}

// funcs are the SoQL functions whose types the checker knows, by lower-case
// name. A function not listed here is typed unknown and its arguments are
// not checked (the portal decides).
var funcs = map[string]signature{
	// Aggregates.
	"count":       {args: []string{classAny}, result: "number", aggregate: true},
	"sum":         {args: []string{classNumber}, result: "number", aggregate: true},
	"avg":         {args: []string{classNumber}, result: "number", aggregate: true},
	"stddev_pop":  {args: []string{classNumber}, result: "number", aggregate: true},
	"stddev_samp": {args: []string{classNumber}, result: "number", aggregate: true},
	"min":         {args: []string{classOrdered}, aggregate: true},
	"max":         {args: []string{classOrdered}, aggregate: true},
	"median":      {args: []string{classOrdered}, aggregate: true},

	// Text.
	"upper":       {args: []string{classText}, result: "text"},
	"lower":       {args: []string{classText}, result: "text"},
	"length":      {args: []string{classText}, result: "number"},
	"starts_with": {args: []string{classText, classText}, result: "boolean"},
	"contains":    {args: []string{classText, classText}, result: "boolean"},

	// Numbers.
	"abs": {args: []string{classNumber}, result: "number"},
	"ln":  {args: []string{classNumber}, result: "number"},

	// Timestamps.
	"date_trunc_y":     {args: []string{classTimestamp}, result: "floating_timestamp"},
	"date_trunc_ym":    {args: []string{classTimestamp}, result: "floating_timestamp"},
	"date_trunc_ymd":   {args: []string{classTimestamp}, result: "floating_timestamp"},
	"date_extract_y":   {args: []string{classTimestamp}, result: "number"},
	"date_extract_m":   {args: []string{classTimestamp}, result: "number"},
	"date_extract_d":   {args: []string{classTimestamp}, result: "number"},
	"date_extract_hh":  {args: []string{classTimestamp}, result: "number"},
	"date_extract_mm":  {args: []string{classTimestamp}, result: "number"},
	"date_extract_ss":  {args: []string{classTimestamp}, result: "number"},
	"date_extract_dow": {args: []string{classTimestamp}, result: "number"},
	"date_extract_woy": {args: []string{classTimestamp}, result: "number"},

	// Any type.
	"coalesce": {args: []string{classAny}, variadic: true},
}

// class is the class a SODA2 type belongs to ("" for unknown types).
func class(t string) string {
	switch t {
	case "number", "double", "money":
		return classNumber
	case "floating_timestamp", "fixed_timestamp":
		return classTimestamp
	case "text", "boolean":
		return t
	case "point", "multipoint", "line", "multiline", "polygon", "multipolygon", "location":
		return "geometry"
	}
	return ""
}

// fits reports whether a value of SODA2 type t (known) is accepted where an
// argument of class c is expected.
func fits(t, c string) bool {
	switch c {
	case classAny:
		return true
	case classOrdered:
		return class(t) != "geometry"
	}
	return class(t) == c
}

// valType is an expression's type as the checker infers it.
type valType struct {
	name string     // the SODA2 type; "" unknown, "null" for the null literal
	lit  *StringLit // the expression is this string literal (coercible)
}

func (v valType) known() bool { return v.name != "" && v.name != "null" }

// timestampLiteral matches the texts Socrata reads as a timestamp.
var timestampLiteral = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?$`)

// coerces reports whether the string literal s can be read as a value of
// class c (not text).
func coerces(s string, c string) bool {
	switch c {
	case classTimestamp:
		return timestampLiteral.MatchString(strings.TrimSpace(s))
	case classNumber:
		_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return err == nil
	case classBoolean:
		return strings.EqualFold(s, "true") || strings.EqualFold(s, "false")
	case "geometry":
		return true // WKT; the portal parses it
	}
	return false
}

// typer infers types within one stage.
type typer struct {
	c        *checker
	visiting map[string]bool // aliases being inferred (no cycles)
	err      *CheckError
	clause   string
}

// mismatch records the first type error: the function (op$> or a function
// name) refuses arg, of type got, where want was expected.
func (ty *typer) mismatch(fn string, arg Expr, got valType, want string, other Expr, otherType valType) {
	if ty.err != nil {
		return
	}
	e := ty.c.fail(CodeTypeMismatch, fmt.Sprintf("Type mismatch for %s, is %s", fn, got.name), fn, ty.clause, arg.Pos())
	e.Type = got.name
	e.Want = want
	e.Arg = arg
	e.Other = other
	e.OtherType = otherType.name
	e.Column = columnOf(arg)
	if e.Column == "" && other != nil {
		e.Column = columnOf(other)
	}
	ty.err = e
}

// columnOf is the column an expression names, or "".
func columnOf(e Expr) string {
	if id, ok := unparen(e).(*Ident); ok && !id.System() {
		return id.Name
	}
	return ""
}

// infer returns e's type, recording the first mismatch.
func (ty *typer) infer(e Expr) valType {
	if ty.err != nil {
		return valType{}
	}
	switch n := e.(type) {
	case *Paren:
		return ty.infer(n.X)
	case *StringLit:
		return valType{name: "text", lit: n}
	case *NumberLit:
		return valType{name: "number"}
	case *BoolLit:
		return valType{name: "boolean"}
	case *NullLit:
		return valType{name: "null"}
	case *Ident:
		return ty.ident(n)
	case *Cast:
		ty.infer(n.X)
		return valType{name: castTypes[strings.ToLower(n.Type.Name)]}
	case *Unary:
		x := ty.infer(n.X)
		if n.Op == "not" {
			ty.want("op$not", n.X, x, classBoolean)
			return valType{name: "boolean"}
		}
		ty.want("op$"+n.Op, n.X, x, classNumber)
		return valType{name: "number"}
	case *Binary:
		return ty.binary(n)
	case *In:
		x := ty.infer(n.X)
		for _, item := range n.List {
			ty.compare("op$in", n.X, x, item, ty.infer(item))
		}
		return valType{name: "boolean"}
	case *Between:
		x := ty.infer(n.X)
		ty.compare("op$between", n.X, x, n.Lo, ty.infer(n.Lo))
		ty.compare("op$between", n.X, x, n.Hi, ty.infer(n.Hi))
		return valType{name: "boolean"}
	case *Like:
		ty.want("op$like", n.X, ty.infer(n.X), classText)
		ty.want("op$like", n.Pattern, ty.infer(n.Pattern), classText)
		return valType{name: "boolean"}
	case *IsNull:
		ty.infer(n.X)
		return valType{name: "boolean"}
	case *Case:
		var res valType
		for _, w := range n.Whens {
			ty.want("case", w.Cond, ty.infer(w.Cond), classBoolean)
			if v := ty.infer(w.Value); res.name == "" || res.name == "null" {
				res = valType{name: v.name}
			}
		}
		if n.Else != nil {
			if v := ty.infer(n.Else); res.name == "" || res.name == "null" {
				res = valType{name: v.name}
			}
		}
		return res
	case *Call:
		return ty.call(n)
	case *Dot, *Index:
		return valType{}
	}
	return valType{}
}

// ident types a column or alias.
func (ty *typer) ident(n *Ident) valType {
	if n.System() {
		switch strings.ToLower(n.Name) {
		case ":id":
			return valType{name: "text"}
		case ":created_at", ":updated_at":
			return valType{name: "fixed_timestamp"}
		}
		return valType{}
	}
	k := CanonicalName(n.Name)
	if a, ok := ty.c.aliases[k]; ok {
		if id, isIdent := unparen(a).(*Ident); isIdent && CanonicalName(id.Name) == k {
			return valType{name: ty.c.scope[k]} // SELECT x AS x
		}
		if ty.visiting[k] {
			return valType{}
		}
		ty.visiting[k] = true
		defer delete(ty.visiting, k)
		saved := ty.err
		v := ty.infer(a) // the alias's own errors are reported where it is defined
		ty.err = saved
		return valType{name: v.name}
	}
	return valType{name: ty.c.scope[k]}
}

// binary types an operator.
func (ty *typer) binary(n *Binary) valType {
	l, r := ty.infer(n.Left), ty.infer(n.Right)
	fn := "op$" + n.Op
	switch n.Op {
	case "and", "or":
		ty.want(fn, n.Left, l, classBoolean)
		ty.want(fn, n.Right, r, classBoolean)
		return valType{name: "boolean"}
	case "=", "!=", "<>", "<", "<=", ">", ">=":
		ty.compare(fn, n.Left, l, n.Right, r)
		if n.Op != "=" && n.Op != "!=" && n.Op != "<>" {
			ty.want(fn, n.Left, l, classOrdered)
		}
		return valType{name: "boolean"}
	case "||":
		return valType{name: "text"}
	case "+", "-", "*", "/", "%", "^":
		ty.want(fn, n.Left, l, classNumber)
		ty.want(fn, n.Right, r, classNumber)
		return valType{name: "number"}
	}
	return valType{}
}

// want records a mismatch when v is known and not of class c; a string
// literal is accepted where it reads as a value of the class.
func (ty *typer) want(fn string, e Expr, v valType, c string) {
	if !v.known() || fits(v.name, c) {
		return
	}
	if v.lit != nil && c != classText && c != classAny && c != classOrdered {
		if coerces(v.lit.Value, c) {
			return
		}
	}
	ty.mismatch(fn, e, v, c, nil, valType{})
}

// compare records a mismatch when a and b cannot be compared: both known
// and of different classes, unless one is a string literal that reads as
// a value of the other's type. The side reported is the one that is not a
// bare column (the right one when both or neither are).
func (ty *typer) compare(fn string, ae Expr, a valType, be Expr, b valType) {
	if !a.known() || !b.known() {
		return
	}
	ca, cb := class(a.name), class(b.name)
	if ca == "" || cb == "" || ca == cb {
		return
	}
	if b.lit != nil && coerces(b.lit.Value, ca) || a.lit != nil && coerces(a.lit.Value, cb) {
		return
	}
	if columnOf(ae) == "" && columnOf(be) != "" {
		ty.mismatch(fn, ae, a, cb, be, b)
		return
	}
	ty.mismatch(fn, be, b, ca, ae, a)
}

// call types a function call by its signature.
func (ty *typer) call(n *Call) valType {
	name := strings.ToLower(n.Name.Name)
	args := make([]valType, len(n.Args))
	for i, a := range n.Args {
		args[i] = ty.infer(a)
	}
	sig, ok := funcs[name]
	if !ok {
		return valType{}
	}
	if n.Star {
		return valType{name: sig.result}
	}
	if !sig.variadic && len(args) != len(sig.args) {
		return valType{} // the portal answers the arity itself
	}
	for i, a := range args {
		c := sig.args[min(i, len(sig.args)-1)]
		ty.want(name, n.Args[i], a, c)
	}
	switch sig.result {
	case "":
		for _, a := range args {
			if a.known() {
				return valType{name: a.name}
			}
		}
		return valType{}
	}
	return valType{name: sig.result}
}

// checkTypes types every expression of the stage.
func (c *checker) checkTypes() error {
	ty := &typer{c: c, visiting: map[string]bool{}}
	err := c.clauses(func(clause string, e Expr) error {
		ty.clause = clause
		ty.infer(e)
		if ty.err != nil {
			return ty.err
		}
		return nil
	})
	return err
}

// exprType is the type of e in the stage, "" when unknown.
func (c *checker) exprType(e Expr) string {
	ty := &typer{c: c, visiting: map[string]bool{}}
	v := ty.infer(e)
	if v.name == "null" {
		return ""
	}
	return v.name
}
