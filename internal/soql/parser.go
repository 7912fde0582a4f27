package soql

import (
	"fmt"
	"strconv"
	"strings"
)

// SyntaxError is a lexing or parsing error at a position in the source.
type SyntaxError struct {
	Pos      Pos
	Expected string // what the parser wanted, e.g. "an expression"; empty for lexical errors
	Got      string // what it found, e.g. "FROM" or "end of input"
	Msg      string // the message without the position
}

// Error reads like "line 1, column 14: expected an expression, got end of input".
func (e *SyntaxError) Error() string {
	msg := e.Msg
	if msg == "" {
		msg = "expected " + e.Expected + ", got " + e.Got
	}
	return fmt.Sprintf("line %d, column %d: %s", e.Pos.Line, e.Pos.Column, msg)
}

// NoFromMessage is the syntax error's message for a FROM clause, which SoQL
// does not have.
const NoFromMessage = "SoQL has no FROM clause: a query runs on one dataset, which is named outside the query"

// MaxDepth is how deeply expressions may nest: parentheses, function
// calls, CASE, NOT, signs and ^ each add a level. The parser recurses once
// per level, so the bound is checked before it recurses further and keeps
// a deep input (a query of 16,000 '(') from costing a deep stack; a
// *SyntaxError saying "nested too deeply" answers it. Real queries nest a
// few levels.
const MaxDepth = 100

// parser is a recursive-descent parser over a pre-lexed token slice.
type parser struct {
	toks  []token
	i     int
	depth int // levels of expression recursion open; see enter
}

// enter opens one more level of expression recursion, or returns the
// "nested too deeply" error past MaxDepth. Each successful enter is matched
// by a leave.
func (p *parser) enter() error {
	if p.depth >= MaxDepth {
		t := p.peek()
		return &SyntaxError{Pos: t.pos, Got: t.describe(),
			Msg: fmt.Sprintf("the expression is nested too deeply: more than %d levels of parentheses, function calls, CASE, NOT or signs; write it with fewer levels", MaxDepth)}
	}
	p.depth++
	return nil
}

func (p *parser) leave() { p.depth-- }

func newParser(src string) (*parser, error) {
	l := newLexer(src)
	var toks []token
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		if t.kind == tokEOF {
			return &parser{toks: toks}, nil
		}
	}
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (t token) isKw(kw string) bool { return t.kind == tokKeyword && t.kw == kw }
func (t token) isOp(op string) bool { return t.kind == tokOp && t.raw == op }

// isWord matches a bare, non-reserved identifier case-insensitively (for
// context keywords such as WHEN, END, NULLS, LAST).
func (t token) isWord(w string) bool { return t.kind == tokIdent && strings.EqualFold(t.raw, w) }

func (p *parser) errExpected(what string) *SyntaxError {
	t := p.peek()
	got := t.describe()
	if t.isKw("FROM") {
		return &SyntaxError{Pos: t.pos, Expected: what, Got: got, Msg: NoFromMessage}
	}
	return &SyntaxError{Pos: t.pos, Expected: what, Got: got, Msg: "expected " + what + ", got " + got}
}

func (p *parser) expectOp(op string) (token, error) {
	if !p.peek().isOp(op) {
		return token{}, p.errExpected(op)
	}
	return p.next(), nil
}

func (p *parser) expectKw(kw string) (token, error) {
	if !p.peek().isKw(kw) {
		return token{}, p.errExpected(kw)
	}
	return p.next(), nil
}

// Parse parses a full SoQL query: one or more stages joined by |>. Each stage
// has the clauses SELECT, WHERE, GROUP BY, HAVING, ORDER BY and SEARCH (in
// either order), LIMIT and OFFSET (in either order), all optional. Errors are
// *SyntaxError.
func Parse(src string) (*Query, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	q := &Query{}
	for {
		start := p.peek()
		st, err := p.stage()
		if err != nil {
			return nil, err
		}
		q.Stages = append(q.Stages, st)
		t := p.peek()
		if t.isOp("|>") {
			if stageEmpty(st) {
				return nil, &SyntaxError{Pos: start.pos, Expected: "a query stage before |>", Got: start.describe(),
					Msg: "expected a query stage before |>, got " + start.describe()}
			}
			p.next()
			if nt := p.peek(); nt.kind == tokEOF || nt.isOp("|>") {
				return nil, p.errExpected("a query stage after |>")
			}
			continue
		}
		if t.kind == tokEOF {
			if len(q.Stages) > 1 && stageEmpty(st) {
				return nil, p.errExpected("a query stage after |>")
			}
			return q, nil
		}
		return nil, p.unexpectedAfterStage(st)
	}
}

// ParseExpr parses a single expression, such as a $where or $having value.
func ParseExpr(src string) (Expr, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokEOF {
		return nil, p.errExpected("end of input")
	}
	return e, nil
}

func stageEmpty(s *Select) bool {
	return len(s.Selection) == 0 && s.Where == nil && len(s.GroupBy) == 0 && s.Having == nil &&
		len(s.OrderBy) == 0 && s.Search == nil && s.Limit == nil && s.Offset == nil
}

// clause order, for messages about clauses written in the wrong place.
var clauseRank = map[string]int{"SELECT": 0, "WHERE": 1, "GROUP": 2, "HAVING": 3, "ORDER": 4, "SEARCH": 4, "LIMIT": 5, "OFFSET": 5}

func clauseName(kw string) string {
	switch kw {
	case "GROUP", "ORDER":
		return kw + " BY"
	}
	return kw
}

// unexpectedAfterStage explains a token left over after a stage.
func (p *parser) unexpectedAfterStage(st *Select) error {
	t := p.peek()
	if t.kind == tokKeyword {
		if _, ok := clauseRank[t.kw]; ok {
			return &SyntaxError{Pos: t.pos, Expected: "end of input", Got: t.describe(),
				Msg: fmt.Sprintf("%s is out of place or repeated (clause order: SELECT, WHERE, GROUP BY, HAVING, ORDER BY, SEARCH, LIMIT, OFFSET)", clauseName(t.kw))}
		}
	}
	exp := "end of input"
	if len(st.Selection) > 0 && st.Where == nil && len(st.GroupBy) == 0 && st.Having == nil && len(st.OrderBy) == 0 && st.Search == nil && st.Limit == nil && st.Offset == nil {
		exp = "',' or a clause keyword or end of input"
	} else if stageEmpty(st) {
		exp = "a clause keyword (SELECT, WHERE, GROUP BY, HAVING, ORDER BY, SEARCH, LIMIT, OFFSET)"
	}
	return p.errExpected(exp)
}

// stage parses one |>-separated statement.
func (p *parser) stage() (*Select, error) {
	st := &Select{}
	var err error
	if t := p.peek(); t.isKw("SELECT") {
		p.next()
		st.SelectPos = t.pos
		if p.peek().isKw("DISTINCT") {
			p.next()
			st.Distinct = true
		}
		if st.Distinct || startsItem(p.peek()) {
			if st.Selection, err = p.selection(); err != nil {
				return nil, err
			}
		}
	}
	if p.peek().isKw("WHERE") {
		p.next()
		if st.Where, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if p.peek().isKw("GROUP") {
		p.next()
		if _, err := p.expectKw("BY"); err != nil {
			return nil, err
		}
		if st.GroupBy, err = p.exprList(); err != nil {
			return nil, err
		}
	}
	if p.peek().isKw("HAVING") {
		p.next()
		if st.Having, err = p.expr(); err != nil {
			return nil, err
		}
	}
	// ORDER BY and SEARCH may come in either order, each at most once.
	for range 2 {
		switch t := p.peek(); {
		case t.isKw("ORDER") && st.OrderBy == nil:
			p.next()
			if _, err := p.expectKw("BY"); err != nil {
				return nil, err
			}
			if st.OrderBy, err = p.orderings(); err != nil {
				return nil, err
			}
		case t.isKw("SEARCH") && st.Search == nil:
			p.next()
			s := p.peek()
			if s.kind != tokString {
				return nil, p.errExpected("a string after SEARCH")
			}
			p.next()
			v := s.value
			st.Search = &v
		}
	}
	// LIMIT and OFFSET may come in either order, each at most once.
	for range 2 {
		switch t := p.peek(); {
		case t.isKw("LIMIT") && st.Limit == nil:
			p.next()
			if st.Limit, err = p.count("LIMIT"); err != nil {
				return nil, err
			}
		case t.isKw("OFFSET") && st.Offset == nil:
			p.next()
			if st.Offset, err = p.count("OFFSET"); err != nil {
				return nil, err
			}
		}
	}
	return st, nil
}

// startsItem reports whether t can begin a select item.
func startsItem(t token) bool {
	switch t.kind {
	case tokEOF:
		return false
	case tokKeyword: // only these keywords can start an expression
		return t.kw == "NOT" || t.kw == "NULL" || t.kw == "TRUE" || t.kw == "FALSE"
	case tokOp:
		return t.raw != "|>" && t.raw != ")" && t.raw != ","
	}
	return true
}

func (p *parser) count(clause string) (*int64, error) {
	t := p.peek()
	if t.kind != tokNumber {
		return nil, p.errExpected("a whole number after " + clause)
	}
	n, err := strconv.ParseInt(t.raw, 10, 64)
	if err != nil || n < 0 {
		return nil, &SyntaxError{Pos: t.pos, Expected: "a whole number after " + clause, Got: t.describe(),
			Msg: fmt.Sprintf("%s must be a whole number between 0 and %d, got %s", clause, int64(1<<63-1), t.describe())}
	}
	p.next()
	return &n, nil
}

func (p *parser) selection() ([]*SelectItem, error) {
	var items []*SelectItem
	for {
		t := p.peek()
		item := &SelectItem{}
		switch {
		case t.isOp("*"):
			p.next()
			item.Star = AllStar
		case t.isOp(":*"):
			p.next()
			item.Star = SystemStar
		default:
			if !startsItem(t) {
				return nil, p.errExpected("a select item (*, :*, or an expression)")
			}
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			item.Expr = e
			if p.peek().isKw("AS") {
				p.next()
				a := p.peek()
				if a.kind != tokIdent && a.kind != tokQuoted {
					return nil, p.errExpected("an alias after AS")
				}
				p.next()
				item.Alias = identFrom(a)
			}
		}
		items = append(items, item)
		if !p.peek().isOp(",") {
			return items, nil
		}
		p.next()
	}
}

func identFrom(t token) *Ident {
	return &Ident{NamePos: t.pos, Name: t.value, Raw: t.raw, Quoted: t.kind == tokQuoted}
}

func (p *parser) exprList() ([]Expr, error) {
	var out []Expr
	for {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if !p.peek().isOp(",") {
			return out, nil
		}
		p.next()
	}
}

func (p *parser) orderings() ([]*OrderItem, error) {
	var out []*OrderItem
	for {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		it := &OrderItem{Expr: e}
		if t := p.peek(); t.isKw("ASC") {
			p.next()
		} else if t.isKw("DESC") {
			p.next()
			it.Desc = true
		}
		if t := p.peek(); t.isKw("NULL") || t.isWord("nulls") {
			p.next()
			switch f := p.peek(); {
			case f.isWord("first"):
				it.Nulls = NullsFirst
			case f.isWord("last"):
				it.Nulls = NullsLast
			default:
				return nil, p.errExpected("FIRST or LAST")
			}
			p.next()
		}
		out = append(out, it)
		if !p.peek().isOp(",") {
			return out, nil
		}
		p.next()
	}
}

// Precedence levels, lowest first. The printer uses the same table.
const (
	precOr = iota + 1
	precAnd
	precNot
	precCmp // comparisons, IS [NOT] NULL, [NOT] BETWEEN, [NOT] IN, [NOT] LIKE
	precConcat
	precAdd
	precMul
	precPow
	precUnary
	precCast
	precPostfix // . and []
	precPrimary
)

func (p *parser) expr() (Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	return p.or()
}

func (p *parser) or() (Expr, error) {
	left, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek().isKw("OR") {
		op := p.next()
		right, err := p.and()
		if err != nil {
			return nil, err
		}
		left = &Binary{Op: "or", OpPos: op.pos, Left: left, Right: right}
	}
	return left, nil
}

func (p *parser) and() (Expr, error) {
	left, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.peek().isKw("AND") {
		op := p.next()
		right, err := p.not()
		if err != nil {
			return nil, err
		}
		left = &Binary{Op: "and", OpPos: op.pos, Left: left, Right: right}
	}
	return left, nil
}

func (p *parser) not() (Expr, error) {
	if t := p.peek(); t.isKw("NOT") {
		p.next()
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return &Unary{Op: "not", OpPos: t.pos, X: x}, nil
	}
	return p.cmp()
}

var cmpOps = map[string]string{"=": "=", "==": "=", "!=": "!=", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

func (p *parser) cmp() (Expr, error) {
	left, err := p.concat()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind == tokOp {
			op, ok := cmpOps[t.raw]
			if !ok {
				return left, nil
			}
			p.next()
			right, err := p.concat()
			if err != nil {
				return nil, err
			}
			left = &Binary{Op: op, OpPos: t.pos, Left: left, Right: right}
			continue
		}
		if t.kind != tokKeyword {
			return left, nil
		}
		switch t.kw {
		case "IS":
			p.next()
			not := false
			if p.peek().isKw("NOT") {
				p.next()
				not = true
			}
			n := p.peek()
			if !n.isKw("NULL") {
				if not {
					return nil, p.errExpected("NULL")
				}
				return nil, p.errExpected("NULL or NOT")
			}
			p.next()
			left = &IsNull{X: left, Not: not, EndOff: n.end()}
			continue
		case "NOT":
			p.next()
			n := p.peek()
			if !n.isKw("BETWEEN") && !n.isKw("IN") && !n.isKw("LIKE") {
				return nil, p.errExpected("BETWEEN, IN or LIKE")
			}
			if left, err = p.cmpTail(left, true); err != nil {
				return nil, err
			}
		case "BETWEEN", "IN", "LIKE":
			if left, err = p.cmpTail(left, false); err != nil {
				return nil, err
			}
		default:
			return left, nil
		}
	}
}

// cmpTail parses BETWEEN, IN or LIKE (the current token) applied to x.
func (p *parser) cmpTail(x Expr, not bool) (Expr, error) {
	t := p.next()
	switch t.kw {
	case "BETWEEN":
		lo, err := p.concat()
		if err != nil {
			return nil, err
		}
		if _, err := p.expectKw("AND"); err != nil {
			return nil, err
		}
		hi, err := p.concat()
		if err != nil {
			return nil, err
		}
		return &Between{X: x, Lo: lo, Hi: hi, Not: not}, nil
	case "LIKE":
		pat, err := p.concat()
		if err != nil {
			return nil, err
		}
		return &Like{X: x, Pattern: pat, Not: not}, nil
	default: // IN
		if _, err := p.expectOp("("); err != nil {
			return nil, err
		}
		list, err := p.exprList()
		if err != nil {
			return nil, err
		}
		r, err := p.expectOp(")")
		if err != nil {
			return nil, p.errExpected("',' or ')'")
		}
		return &In{X: x, Not: not, List: list, Rparen: r.end()}, nil
	}
}

// binaryLevel parses a left-associative level with the given operators.
func (p *parser) binaryLevel(ops []string, sub func() (Expr, error)) (Expr, error) {
	left, err := sub()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		found := false
		for _, op := range ops {
			if t.isOp(op) {
				found = true
				break
			}
		}
		if !found {
			return left, nil
		}
		p.next()
		right, err := sub()
		if err != nil {
			return nil, err
		}
		left = &Binary{Op: t.raw, OpPos: t.pos, Left: left, Right: right}
	}
}

func (p *parser) concat() (Expr, error) { return p.binaryLevel([]string{"||"}, p.add) }
func (p *parser) add() (Expr, error)    { return p.binaryLevel([]string{"+", "-"}, p.mul) }
func (p *parser) mul() (Expr, error)    { return p.binaryLevel([]string{"*", "/", "%"}, p.pow) }

// pow is right-associative; its operands are unary expressions.
func (p *parser) pow() (Expr, error) {
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.isOp("^") {
		p.next()
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		right, err := p.pow()
		if err != nil {
			return nil, err
		}
		return &Binary{Op: "^", OpPos: t.pos, Left: left, Right: right}, nil
	}
	return left, nil
}

func (p *parser) unary() (Expr, error) {
	if t := p.peek(); t.isOp("-") || t.isOp("+") {
		p.next()
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &Unary{Op: t.raw, OpPos: t.pos, X: x}, nil
	}
	return p.cast()
}

func (p *parser) cast() (Expr, error) {
	x, err := p.postfix()
	if err != nil {
		return nil, err
	}
	for p.peek().isOp("::") {
		p.next()
		t := p.peek()
		if t.kind != tokIdent || strings.HasPrefix(t.raw, ":") {
			return nil, p.errExpected("a type name after ::")
		}
		p.next()
		x = &Cast{X: x, Type: identFrom(t)}
	}
	return x, nil
}

func (p *parser) postfix() (Expr, error) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		switch {
		case t.isOp("."):
			p.next()
			f := p.peek()
			if f.kind == tokIdent && strings.HasPrefix(f.raw, ":") {
				return nil, p.errExpected("a non-system identifier")
			}
			if f.kind != tokIdent && f.kind != tokQuoted {
				return nil, p.errExpected("an identifier")
			}
			p.next()
			x = &Dot{X: x, Field: identFrom(f)}
		case t.isOp("["):
			p.next()
			idx, err := p.expr()
			if err != nil {
				return nil, err
			}
			r, err := p.expectOp("]")
			if err != nil {
				return nil, err
			}
			x = &Index{X: x, Index: idx, Rbrack: r.end()}
		default:
			return x, nil
		}
	}
}

func (p *parser) primary() (Expr, error) {
	t := p.peek()
	switch t.kind {
	case tokNumber:
		p.next()
		return &NumberLit{LitPos: t.pos, Raw: t.raw}, nil
	case tokString:
		p.next()
		return &StringLit{LitPos: t.pos, Value: t.value, Raw: t.raw}, nil
	case tokQuoted:
		p.next()
		return identFrom(t), nil
	case tokIdent:
		if t.isWord("case") && p.peekAt(1).isWord("when") {
			return p.caseExpr()
		}
		if t.isWord("cast") && p.peekAt(1).isOp("(") {
			return p.sqlCast()
		}
		p.next()
		id := identFrom(t)
		if p.peek().isOp("(") && !id.System() {
			return p.call(id)
		}
		return id, nil
	case tokKeyword:
		switch t.kw {
		case "TRUE", "FALSE":
			p.next()
			return &BoolLit{LitPos: t.pos, Value: t.kw == "TRUE"}, nil
		case "NULL":
			p.next()
			return &NullLit{LitPos: t.pos}, nil
		}
	case tokOp:
		if t.raw == "(" {
			p.next()
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			r, err := p.expectOp(")")
			if err != nil {
				return nil, err
			}
			return &Paren{Lparen: t.pos, X: x, Rparen: r.end()}, nil
		}
	}
	return nil, p.errExpected("an expression")
}

func (p *parser) call(name *Ident) (Expr, error) {
	p.next() // (
	c := &Call{Name: name}
	switch t := p.peek(); {
	case t.isOp("*") && p.peekAt(1).isOp(")"):
		p.next()
		c.Star = true
	case t.isOp(")"):
	default:
		if t.isKw("DISTINCT") {
			p.next()
			c.Distinct = true
		}
		args, err := p.exprList()
		if err != nil {
			return nil, err
		}
		c.Args = args
	}
	r := p.peek()
	if !r.isOp(")") {
		if len(c.Args) > 0 {
			return nil, p.errExpected("',' or ')'")
		}
		return nil, p.errExpected(")")
	}
	p.next()
	c.Rparen = r.end()
	return c, nil
}

func (p *parser) caseExpr() (Expr, error) {
	c := &Case{CasePos: p.next().pos}
	for p.peek().isWord("when") {
		p.next()
		cond, err := p.expr()
		if err != nil {
			return nil, err
		}
		if !p.peek().isWord("then") {
			return nil, p.errExpected("THEN")
		}
		p.next()
		val, err := p.expr()
		if err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, When{Cond: cond, Value: val})
	}
	if p.peek().isWord("else") {
		p.next()
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		c.Else = e
	}
	t := p.peek()
	if !t.isWord("end") {
		if c.Else != nil {
			return nil, p.errExpected("END")
		}
		return nil, p.errExpected("WHEN, ELSE or END")
	}
	p.next()
	c.EndOff = t.end()
	return c, nil
}

// sqlCast parses CAST(x AS type).
func (p *parser) sqlCast() (Expr, error) {
	c := &Cast{SQLStyle: true, CastPos: p.next().pos}
	p.next() // (
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	c.X = x
	if _, err := p.expectKw("AS"); err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind != tokIdent || strings.HasPrefix(t.raw, ":") {
		return nil, p.errExpected("a type name after AS")
	}
	p.next()
	c.Type = identFrom(t)
	r, err := p.expectOp(")")
	if err != nil {
		return nil, err
	}
	c.Rparen = r.end()
	return c, nil
}
