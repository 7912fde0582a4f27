package soql

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// String returns the query as canonical SoQL: upper-case keywords, single
// spaces, single-quoted strings, comments dropped, and parentheses only where
// the source had them or precedence requires them. Parse(q.String()) gives an
// AST equal to q's, apart from positions and raw spellings.
func (q *Query) String() string {
	var b strings.Builder
	for i, st := range q.Stages {
		if i > 0 {
			b.WriteString(" |> ")
		}
		writeSelect(&b, st)
	}
	return b.String()
}

// String returns the stage as canonical SoQL.
func (s *Select) String() string {
	var b strings.Builder
	writeSelect(&b, s)
	return b.String()
}

func writeSelect(b *strings.Builder, s *Select) {
	sep := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") {
			b.WriteByte(' ')
		}
	}
	if len(s.Selection) > 0 {
		sep()
		b.WriteString("SELECT ")
		if s.Distinct {
			b.WriteString("DISTINCT ")
		}
		for i, it := range s.Selection {
			if i > 0 {
				b.WriteString(", ")
			}
			switch it.Star {
			case AllStar:
				b.WriteString("*")
			case SystemStar:
				b.WriteString(":*")
			default:
				writeExpr(b, it.Expr)
				if it.Alias != nil {
					b.WriteString(" AS ")
					b.WriteString(formatIdent(it.Alias))
				}
			}
		}
	}
	if s.Where != nil {
		sep()
		b.WriteString("WHERE ")
		writeExpr(b, s.Where)
	}
	if len(s.GroupBy) > 0 {
		sep()
		b.WriteString("GROUP BY ")
		for i, e := range s.GroupBy {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(b, e)
		}
	}
	if s.Having != nil {
		sep()
		b.WriteString("HAVING ")
		writeExpr(b, s.Having)
	}
	if len(s.OrderBy) > 0 {
		sep()
		b.WriteString("ORDER BY ")
		for i, o := range s.OrderBy {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(b, o.Expr)
			if o.Desc {
				b.WriteString(" DESC")
			}
			switch o.Nulls {
			case NullsFirst:
				b.WriteString(" NULLS FIRST")
			case NullsLast:
				b.WriteString(" NULLS LAST")
			}
		}
	}
	if s.Search != nil {
		sep()
		b.WriteString("SEARCH ")
		b.WriteString(quoteString(*s.Search))
	}
	if s.Limit != nil {
		sep()
		b.WriteString("LIMIT ")
		b.WriteString(strconv.FormatInt(*s.Limit, 10))
	}
	if s.Offset != nil {
		sep()
		b.WriteString("OFFSET ")
		b.WriteString(strconv.FormatInt(*s.Offset, 10))
	}
}

// Format returns the canonical SoQL text of one expression.
func Format(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// formatIdent prints an identifier: backtick-quoted when the source quoted
// it or when it cannot be written bare.
func formatIdent(id *Ident) string {
	if !id.Quoted && isBareName(id.Name) {
		return id.Name
	}
	return "`" + id.Name + "`"
}

// isBareName reports whether name lexes as one non-reserved identifier token.
func isBareName(name string) bool {
	if name == "" {
		return false
	}
	s := name
	if s[0] == ':' {
		s = s[1:]
		if strings.HasPrefix(s, "@") {
			s = s[1:]
		} else if s != "" && isDigit(s[0]) {
			return identEnd(s, 0) == len(s)
		}
		if s == "" {
			return false
		}
		return identEnd(s, 0) == len(s)
	}
	r, _ := utf8.DecodeRuneInString(s)
	if !isIdentStart(r) || identEnd(s, 0) != len(s) {
		return false
	}
	return !reserved[strings.ToUpper(s)]
}

// precedence returns the binding strength of e (see the prec* constants).
func precedence(e Expr) int {
	switch n := e.(type) {
	case *Binary:
		switch n.Op {
		case "or":
			return precOr
		case "and":
			return precAnd
		case "||":
			return precConcat
		case "+", "-":
			return precAdd
		case "*", "/", "%":
			return precMul
		case "^":
			return precPow
		default:
			return precCmp
		}
	case *Unary:
		if n.Op == "not" {
			return precNot
		}
		return precUnary
	case *In, *Between, *Like, *IsNull:
		return precCmp
	case *Cast:
		if n.SQLStyle {
			return precPrimary
		}
		return precCast
	case *Dot, *Index:
		return precPostfix
	}
	return precPrimary
}

// writeOperand writes e, in parentheses when its precedence is below min.
func writeOperand(b *strings.Builder, e Expr, min int) {
	if precedence(e) < min {
		b.WriteByte('(')
		writeExpr(b, e)
		b.WriteByte(')')
		return
	}
	writeExpr(b, e)
}

func writeExpr(b *strings.Builder, e Expr) {
	switch n := e.(type) {
	case nil:
		b.WriteString("NULL")
	case *Ident:
		b.WriteString(formatIdent(n))
	case *StringLit:
		b.WriteString(quoteString(n.Value))
	case *NumberLit:
		b.WriteString(n.Raw)
	case *BoolLit:
		if n.Value {
			b.WriteString("TRUE")
		} else {
			b.WriteString("FALSE")
		}
	case *NullLit:
		b.WriteString("NULL")
	case *Call:
		b.WriteString(formatIdent(n.Name))
		b.WriteByte('(')
		if n.Star {
			b.WriteByte('*')
		} else {
			if n.Distinct {
				b.WriteString("DISTINCT ")
			}
			for i, a := range n.Args {
				if i > 0 {
					b.WriteString(", ")
				}
				writeExpr(b, a)
			}
		}
		b.WriteByte(')')
	case *Binary:
		p := precedence(n)
		l, r := p, p+1 // left-associative
		switch {
		case p == precPow: // right-associative, operands are unary expressions
			l, r = precUnary, precPow
		case p == precCmp:
			l, r = precCmp, precConcat
		}
		writeOperand(b, n.Left, l)
		b.WriteByte(' ')
		switch n.Op {
		case "or", "and":
			b.WriteString(strings.ToUpper(n.Op))
		default:
			b.WriteString(n.Op)
		}
		b.WriteByte(' ')
		writeOperand(b, n.Right, r)
	case *Unary:
		if n.Op == "not" {
			b.WriteString("NOT ")
			writeOperand(b, n.X, precNot)
			return
		}
		b.WriteString(n.Op)
		var x strings.Builder
		writeOperand(&x, n.X, precUnary)
		if s := x.String(); strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
			b.WriteByte(' ')
		}
		b.WriteString(x.String())
	case *In:
		writeOperand(b, n.X, precCmp)
		if n.Not {
			b.WriteString(" NOT IN (")
		} else {
			b.WriteString(" IN (")
		}
		for i, a := range n.List {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(b, a)
		}
		b.WriteByte(')')
	case *Between:
		writeOperand(b, n.X, precCmp)
		if n.Not {
			b.WriteString(" NOT BETWEEN ")
		} else {
			b.WriteString(" BETWEEN ")
		}
		writeOperand(b, n.Lo, precConcat)
		b.WriteString(" AND ")
		writeOperand(b, n.Hi, precConcat)
	case *Like:
		writeOperand(b, n.X, precCmp)
		if n.Not {
			b.WriteString(" NOT LIKE ")
		} else {
			b.WriteString(" LIKE ")
		}
		writeOperand(b, n.Pattern, precConcat)
	case *IsNull:
		writeOperand(b, n.X, precCmp)
		if n.Not {
			b.WriteString(" IS NOT NULL")
		} else {
			b.WriteString(" IS NULL")
		}
	case *Cast:
		if n.SQLStyle {
			b.WriteString("CAST(")
			writeExpr(b, n.X)
			b.WriteString(" AS ")
			b.WriteString(n.Type.Name)
			b.WriteByte(')')
			return
		}
		writeOperand(b, n.X, precCast)
		b.WriteString("::")
		b.WriteString(n.Type.Name)
	case *Paren:
		b.WriteByte('(')
		writeExpr(b, n.X)
		b.WriteByte(')')
	case *Index:
		writeOperand(b, n.X, precPostfix)
		b.WriteByte('[')
		writeExpr(b, n.Index)
		b.WriteByte(']')
	case *Dot:
		writeOperand(b, n.X, precPostfix)
		b.WriteByte('.')
		b.WriteString(formatIdent(n.Field))
	case *Case:
		b.WriteString("CASE")
		for _, w := range n.Whens {
			b.WriteString(" WHEN ")
			writeExpr(b, w.Cond)
			b.WriteString(" THEN ")
			writeExpr(b, w.Value)
		}
		if n.Else != nil {
			b.WriteString(" ELSE ")
			writeExpr(b, n.Else)
		}
		b.WriteString(" END")
	}
}
