package soql

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// astOpts compares ASTs ignoring positions, end offsets and raw spellings.
var astOpts = cmp.Options{
	cmpopts.IgnoreTypes(Pos{}),
	cmpopts.IgnoreFields(Ident{}, "Raw"),
	cmpopts.IgnoreFields(StringLit{}, "Raw"),
	cmpopts.IgnoreFields(Call{}, "Rparen"),
	cmpopts.IgnoreFields(In{}, "Rparen"),
	cmpopts.IgnoreFields(IsNull{}, "EndOff"),
	cmpopts.IgnoreFields(Paren{}, "Rparen"),
	cmpopts.IgnoreFields(Index{}, "Rbrack"),
	cmpopts.IgnoreFields(Case{}, "EndOff"),
	cmpopts.IgnoreFields(Cast{}, "Rparen"),
	cmpopts.EquateEmpty(),
}

// checkQueryRoundTrip checks that q.String() re-parses to an equal AST and
// that printing is idempotent.
func checkQueryRoundTrip(t *testing.T, src string, q *Query) bool {
	t.Helper()
	s1 := q.String()
	q2, err := Parse(s1)
	if err != nil {
		t.Errorf("Parse(String(Parse(%q))) = %v; printed %q", src, err, s1)
		return false
	}
	if d := cmp.Diff(q, q2, astOpts); d != "" {
		t.Errorf("round trip of %q via %q changed the AST (-first +second):\n%s", src, s1, d)
		return false
	}
	if s2 := q2.String(); s2 != s1 {
		t.Errorf("String not idempotent for %q: %q then %q", src, s1, s2)
		return false
	}
	return true
}

func checkExprRoundTrip(t *testing.T, src string, e Expr) bool {
	t.Helper()
	s1 := Format(e)
	e2, err := ParseExpr(s1)
	if err != nil {
		t.Errorf("ParseExpr(Format(ParseExpr(%q))) = %v; printed %q", src, err, s1)
		return false
	}
	if d := cmp.Diff(e, e2, astOpts); d != "" {
		t.Errorf("round trip of %q via %q changed the AST (-first +second):\n%s", src, s1, d)
		return false
	}
	if s2 := Format(e2); s2 != s1 {
		t.Errorf("Format not idempotent for %q: %q then %q", src, s1, s2)
		return false
	}
	return true
}

// allIdents returns every Ident in e, including function names, cast types,
// Dot fields.
func allIdents(e Expr) []*Ident {
	var out []*Ident
	Walk(e, func(x Expr) bool {
		switch n := x.(type) {
		case *Ident:
			out = append(out, n)
		case *Call:
			out = append(out, n.Name)
		case *Cast:
			out = append(out, n.Type)
		case *Dot:
			out = append(out, n.Field)
		}
		return true
	})
	return out
}

func queryIdents(q *Query) []*Ident {
	var out []*Ident
	for _, st := range q.Stages {
		for _, it := range st.Selection {
			out = append(out, allIdents(it.Expr)...)
			if it.Alias != nil {
				out = append(out, it.Alias)
			}
		}
		out = append(out, allIdents(st.Where)...)
		for _, e := range st.GroupBy {
			out = append(out, allIdents(e)...)
		}
		out = append(out, allIdents(st.Having)...)
		for _, o := range st.OrderBy {
			out = append(out, allIdents(o.Expr)...)
		}
	}
	return out
}

// checkPositions checks that every Ident's position and Raw locate it in src.
func checkPositions(t *testing.T, src string, ids []*Ident) bool {
	t.Helper()
	ok := true
	for _, id := range ids {
		o := id.NamePos.Offset
		if o < 0 || o+len(id.Raw) > len(src) || src[o:o+len(id.Raw)] != id.Raw {
			t.Errorf("in %q: ident %q at offset %d does not match the source", src, id.Raw, o)
			ok = false
			continue
		}
		// Line and column must agree with the offset.
		line, col := 1, 1
		for i := 0; i < o; i++ {
			if src[i] == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		if id.NamePos.Line != line || id.NamePos.Column != col {
			t.Errorf("in %q: ident %q at offset %d has line %d column %d; want %d, %d", src, id.Raw, o, id.NamePos.Line, id.NamePos.Column, line, col)
			ok = false
		}
	}
	return ok
}
