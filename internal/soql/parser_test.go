package soql

import (
	"errors"
	"strings"
	"testing"
)

// tree renders an expression as an S-expression, to test the shape the
// parser built independently of the printer.
func tree(e Expr) string {
	switch n := e.(type) {
	case *Ident:
		return n.Name
	case *StringLit:
		return "'" + n.Value + "'"
	case *NumberLit:
		return n.Raw
	case *BoolLit:
		if n.Value {
			return "true"
		}
		return "false"
	case *NullLit:
		return "null"
	case *Call:
		var args []string
		if n.Star {
			args = append(args, "*")
		}
		if n.Distinct {
			args = append(args, "distinct")
		}
		for _, a := range n.Args {
			args = append(args, tree(a))
		}
		return "(call " + n.Name.Name + " " + strings.Join(args, " ") + ")"
	case *Binary:
		return "(" + n.Op + " " + tree(n.Left) + " " + tree(n.Right) + ")"
	case *Unary:
		return "(" + n.Op + " " + tree(n.X) + ")"
	case *In:
		var items []string
		for _, a := range n.List {
			items = append(items, tree(a))
		}
		return "(" + not(n.Not) + "in " + tree(n.X) + " " + strings.Join(items, " ") + ")"
	case *Between:
		return "(" + not(n.Not) + "between " + tree(n.X) + " " + tree(n.Lo) + " " + tree(n.Hi) + ")"
	case *Like:
		return "(" + not(n.Not) + "like " + tree(n.X) + " " + tree(n.Pattern) + ")"
	case *IsNull:
		return "(" + not(n.Not) + "isnull " + tree(n.X) + ")"
	case *Cast:
		return "(:: " + tree(n.X) + " " + n.Type.Name + ")"
	case *Paren:
		return "[" + tree(n.X) + "]"
	case *Index:
		return "(index " + tree(n.X) + " " + tree(n.Index) + ")"
	case *Dot:
		return "(. " + tree(n.X) + " " + n.Field.Name + ")"
	case *Case:
		s := "(case"
		for _, w := range n.Whens {
			s += " " + tree(w.Cond) + " " + tree(w.Value)
		}
		if n.Else != nil {
			s += " else " + tree(n.Else)
		}
		return s + ")"
	}
	return "?"
}

func not(b bool) string {
	if b {
		return "not-"
	}
	return ""
}

func TestParseExprShape(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"10 * 3 ^ 2", "(* 10 (^ 3 2))"},
		{"11 % 2", "(% 11 2)"},
		{"-a :: b :: c", "(- (:: (:: a b) c))"},
		{"a or b and not c = d", "(or a (and b (not (= c d))))"},
		{"a || b + c", "(|| a (+ b c))"},
		{"x between 1 and 2 and y", "(and (between x 1 2) y)"},
		{"x not between 1 and 2", "(not-between x 1 2)"},
		{"-2 ^ 2", "(^ (- 2) 2)"},
		{"a ^ b ^ c", "(^ a (^ b c))"},
		{"a - b - c", "(- (- a b) c)"},
		{"a.b[1]::text", "(:: (index (. a b) 1) text)"},
		{"a[2 * b].c[3]", "(index (. (index a (* 2 b)) c) 3)"},
		{"a = b is null", "(isnull (= a b))"},
		{"world is not null", "(not-isnull world)"},
		{"not a in (1, 2)", "(not (in a 1 2))"},
		{"a not in ('x')", "(not-in a 'x')"},
		{"x || 'y' like 'z%'", "(like (|| x 'y') 'z%')"},
		{"a == 1", "(= a 1)"},
		{"a <> 1 and b != 2", "(and (<> a 1) (!= b 2))"},
		{"count(*)", "(call count *)"},
		{"count(DISTINCT x)", "(call count distinct x)"},
		{"now()", "(call now )"},
		{"case when a then b when c then d else e end", "(case a b c d else e)"},
		{"case(x, y)", "(call case x y)"},
		{"CAST(x AS number) + 1", "(+ (:: x number) 1)"},
		{"(a or b) and c", "(and [(or a b)] c)"},
		{"- -1*a(1,b)*(3)==2 or x not between 1 and 3", "(or (= (* (* (- (- 1)) (call a 1 b)) [3]) 2) (not-between x 1 3))"},
		{"_abc + -- hello world!\n123 -- gnu", "(+ _abc 123)"},
		{"a /* block */ + 1", "(+ a 1)"},
		{"`hello world` = :id", "(= hello world :id)"},
		{":@computed_region_abcd = 1", "(= :@computed_region_abcd 1)"},
		{"last", "last"},
		{"étäøîn", "étäøîn"},
		{"TRUE and NULL is null", "(and true (isnull null))"},
	} {
		e, err := ParseExpr(tc.in)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tc.in, err)
			continue
		}
		if got := tree(e); got != tc.want {
			t.Errorf("ParseExpr(%q) = %s; want %s", tc.in, got, tc.want)
		}
		checkExprRoundTrip(t, tc.in, e)
	}
}

func TestLiterals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"'it''s'", "it's"},
		{`"a\"b\n\u00e9\U01D000"`, "a\"b\né\U0001D000"},
		{`"gnu"`, "gnu"},
		{`'a\b'`, `a\b`},
		{"''", ""},
	} {
		e, err := ParseExpr(tc.in)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tc.in, err)
			continue
		}
		s, ok := e.(*StringLit)
		if !ok || s.Value != tc.want || s.Raw != tc.in {
			t.Errorf("ParseExpr(%q) = %#v; want StringLit value %q raw %q", tc.in, e, tc.want, tc.in)
		}
	}
	for _, in := range []string{"42", "4.2", ".5", "1e3", "1.5E-3"} {
		e, err := ParseExpr(in)
		if n, ok := e.(*NumberLit); err != nil || !ok || n.Raw != in {
			t.Errorf("ParseExpr(%q) = %#v, %v; want NumberLit %q", in, e, err, in)
		}
	}
}

func TestParseClauses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"select * offset 6 limit 5", "SELECT * LIMIT 5 OFFSET 6"},
		{"select * search 'weather' order by x", "SELECT * ORDER BY x SEARCH 'weather'"},
		{"select :*, *, a as `where`", "SELECT :*, *, a AS `where`"},
		{"select distinct col1, col2", "SELECT DISTINCT col1, col2"},
		{"select * where `a` not like 'b'", "SELECT * WHERE `a` NOT LIKE 'b'"},
		{"select x order by x asc, y desc null first, z nulls last", "SELECT x ORDER BY x, y DESC NULLS FIRST, z NULLS LAST"},
		{"where x > 1", "WHERE x > 1"},
		{"select a |> select count(*) as n having n > 1", "SELECT a |> SELECT count(*) AS n HAVING n > 1"},
		{"SELECT x WHERE y = \"q\"", "SELECT x WHERE y = 'q'"},
		{"select", ""},
		{"", ""},
		{"SELECT - -x, -(-1), 1 - -1", "SELECT - -x, -(-1), 1 - -1"},
	} {
		q, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := q.String(); got != tc.want {
			t.Errorf("Parse(%q).String() = %q; want %q", tc.in, got, tc.want)
		}
		checkQueryRoundTrip(t, tc.in, q)
	}
}

func TestSyntaxErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		expr bool
		want string
	}{
		{"SELECT WHERE FROM", false, "line 1, column 14: " + NoFromMessage},
		{"SELECT a WHERE\n  b = 'x", false, "line 2, column 7: unterminated string literal (missing closing ')"},
		{"x is 5", true, "line 1, column 6: expected NULL or NOT, got 5"},
		{"x is not", true, "line 1, column 9: expected NULL, got end of input"},
		{"x not", true, "line 1, column 6: expected BETWEEN, IN or LIKE, got end of input"},
		{"x between a", true, "line 1, column 12: expected AND, got end of input"},
		{"x y", true, "line 1, column 3: expected end of input, got y"},
		{"a.:id", true, "line 1, column 3: expected a non-system identifier, got :id"},
		{"a.", true, "line 1, column 3: expected an identifier, got end of input"},
		{"a[2 * b", true, "line 1, column 8: expected ], got end of input"},
		{"x in ()", true, "line 1, column 7: expected an expression, got )"},
		{"SELECT a LIMIT -1", false, "line 1, column 16: expected a whole number after LIMIT, got -"},
		{"SELECT a LIMIT 99999999999999999999", false, "line 1, column 16: LIMIT must be a whole number between 0 and 9223372036854775807, got 99999999999999999999"},
		{"SELECT a ORDER BY a WHERE b", false, "line 1, column 21: WHERE is out of place or repeated (clause order: SELECT, WHERE, GROUP BY, HAVING, ORDER BY, SEARCH, LIMIT, OFFSET)"},
		{"SELECT `a", false, "line 1, column 8: unterminated `quoted identifier`"},
		{"SELECT a /* x", false, "line 1, column 10: unterminated /* comment"},
		{`WHERE a = "\q"`, false, `line 1, column 12: invalid escape sequence \q in string literal`},
		{"SELECT a |>", false, "line 1, column 12: expected a query stage after |>, got end of input"},
		{"SELECT a, FROM t", false, "line 1, column 11: " + NoFromMessage},
		{"SELECT a FROM t", false, "line 1, column 10: " + NoFromMessage},
		{"SELECT count(a b)", false, "line 1, column 16: expected ',' or ')', got b"},
		{"SELECT CASE WHEN a THEN b", false, "line 1, column 26: expected WHEN, ELSE or END, got end of input"},
		{"SELECT 12abc", false, `line 1, column 8: malformed number "12abc"`},
		{"SELECT a # b", false, "line 1, column 10: unexpected character '#'"},
		{"SELECT a ORDER BY a NULLS", false, "line 1, column 26: expected FIRST or LAST, got end of input"},
	} {
		var err error
		if tc.expr {
			_, err = ParseExpr(tc.in)
		} else {
			_, err = Parse(tc.in)
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) error = %v; want *SyntaxError %q", tc.in, err, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("Parse(%q) error = %q; want %q", tc.in, err.Error(), tc.want)
		}
	}
}

func TestPositions(t *testing.T) {
	t.Parallel()
	src := "SELECT a,\n  `b c` AS x, upper(d)::text WHERE e.f > 1"
	q, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	ids := queryIdents(q)
	if !checkPositions(t, src, ids) {
		return
	}
	want := map[string]Pos{"a": {7, 1, 8}, "`b c`": {12, 2, 3}, "x": {21, 2, 12}, "upper": {24, 2, 15}, "d": {30, 2, 21}, "text": {34, 2, 25}, "e": {45, 2, 36}, "f": {47, 2, 38}}
	for _, id := range ids {
		if w, ok := want[id.Raw]; !ok || id.NamePos != w {
			t.Errorf("%q at %+v; want %+v", id.Raw, id.NamePos, w)
		}
	}
	if len(ids) != len(want) {
		t.Errorf("got %d identifiers; want %d", len(ids), len(want))
	}
	if got := q.Stages[0].SelectPos; got != (Pos{0, 1, 1}) {
		t.Errorf("SelectPos = %+v; want {0 1 1}", got)
	}
	w := q.Stages[0].Where
	if w.Pos().Offset != 45 || w.End() != len(src) {
		t.Errorf("WHERE expr spans %d..%d; want 45..%d", w.Pos().Offset, w.End(), len(src))
	}
}
