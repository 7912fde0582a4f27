package properties_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// astEqual compares ASTs ignoring source positions, end offsets and raw
// spellings of identifiers and strings (the printer writes them in its
// canonical form); everything else, Quoted flags and number spellings
// included, must be equal.
var astEqual = cmp.Options{
	cmpopts.IgnoreTypes(soql.Pos{}),
	cmpopts.IgnoreFields(soql.Ident{}, "Raw"),
	cmpopts.IgnoreFields(soql.StringLit{}, "Raw"),
	cmpopts.IgnoreFields(soql.Call{}, "Rparen"),
	cmpopts.IgnoreFields(soql.In{}, "Rparen"),
	cmpopts.IgnoreFields(soql.IsNull{}, "EndOff"),
	cmpopts.IgnoreFields(soql.Paren{}, "Rparen"),
	cmpopts.IgnoreFields(soql.Index{}, "Rbrack"),
	cmpopts.IgnoreFields(soql.Case{}, "EndOff"),
	cmpopts.IgnoreFields(soql.Cast{}, "Rparen"),
	cmpopts.EquateEmpty(),
}

// sameAST reports whether two queries are equal under astEqual. It scrubs
// copies of both (positions, offsets and raw spellings zeroed, empty slices
// made nil) and compares them with reflect.DeepEqual, which is much faster
// than cmp on deep trees; cmp.Diff is only used to explain a difference.
func sameAST(a, b *soql.Query) bool {
	ca, cb := a.Clone(), b.Clone()
	scrub(reflect.ValueOf(ca))
	scrub(reflect.ValueOf(cb))
	return reflect.DeepEqual(ca, cb)
}

var (
	posType   = reflect.TypeFor[soql.Pos]()
	identType = reflect.TypeFor[soql.Ident]()
	strType   = reflect.TypeFor[soql.StringLit]()
)

func scrub(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			scrub(v.Elem())
		}
	case reflect.Slice:
		if v.Len() == 0 {
			if v.CanSet() {
				v.Set(reflect.Zero(v.Type()))
			}
			return
		}
		for i := range v.Len() {
			scrub(v.Index(i))
		}
	case reflect.Struct:
		if v.Type() == posType {
			v.SetZero()
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			switch {
			case f.Name == "Rparen" || f.Name == "EndOff" || f.Name == "Rbrack":
				v.Field(i).SetZero()
			case f.Name == "Raw" && (v.Type() == identType || v.Type() == strType):
				v.Field(i).SetZero()
			default:
				scrub(v.Field(i))
			}
		}
	}
}

// soqlGen writes random SoQL text from a small grammar: keywords in random
// case, random white space and comments between clauses, identifiers bare,
// backtick-quoted (also reserved and contextual words) and system fields,
// every literal form, function calls, CASE, casts, dereferences, every
// operator (chains without parentheses, so precedence matters), and
// multi-stage |> queries with every clause.
type soqlGen struct {
	t *rapid.T
}

func (g soqlGen) kw(word string) string {
	switch rapid.IntRange(0, 2).Draw(g.t, "case") {
	case 0:
		return strings.ToLower(word)
	case 1:
		return strings.ToUpper(word)
	}
	return strings.ToUpper(word[:1]) + strings.ToLower(word[1:])
}

func (g soqlGen) space() string {
	return rapid.SampledFrom([]string{" ", " ", " ", "  ", "\n", "\t", " /* c */ ", " -- note\n"}).Draw(g.t, "space")
}

func (g soqlGen) ident() string {
	switch rapid.IntRange(0, 6).Draw(g.t, "ident kind") {
	case 0:
		return "`" + rapid.SampledFrom([]string{"end", "first", "nulls", "select", "my col", "Case", "last", "x-y", "größe"}).Draw(g.t, "quoted") + "`"
	case 1:
		return rapid.SampledFrom([]string{":id", ":created_at", ":@computed_region_ajp5_b2md"}).Draw(g.t, "system")
	case 2:
		return rapid.SampledFrom([]string{"Status", "APPLICANT", "_x1", "größe"}).Draw(g.t, "cased")
	}
	return rapid.SampledFrom([]string{"status", "applicant", "lat", "lon", "location", "score", "n", "incident_category", "report_datetime"}).Draw(g.t, "bare")
}

func (g soqlGen) literal() string {
	switch rapid.IntRange(0, 4).Draw(g.t, "literal kind") {
	case 0:
		return rapid.SampledFrom([]string{"0", "42", "4.2", "1e3", "0.50", "123456789012"}).Draw(g.t, "number")
	case 1:
		return rapid.SampledFrom([]string{"'APPROVED'", "'it''s'", "''", "'%truck%'", "'日本'", "'2024-01-01T00:00:00'"}).Draw(g.t, "string")
	case 2:
		return rapid.SampledFrom([]string{`"dq"`, `"a \"q\" b"`, `"back\\slash"`, `"it's"`}).Draw(g.t, "dq string")
	case 3:
		return g.kw(rapid.SampledFrom([]string{"true", "false", "null"}).Draw(g.t, "keyword literal"))
	}
	return g.ident()
}

// operand is an expression safe to use next to any operator: an atom or a
// parenthesized expression.
func (g soqlGen) operand(depth int) string {
	if depth <= 0 {
		return g.literal()
	}
	switch rapid.IntRange(0, 9).Draw(g.t, "operand kind") {
	case 0:
		return "(" + g.expr(depth-1) + ")"
	case 1:
		name := rapid.SampledFrom([]string{"upper", "lower", "sum", "max", "date_trunc_ym", "within_circle", "starts_with"}).Draw(g.t, "func")
		var args []string
		for range rapid.IntRange(0, 3).Draw(g.t, "args") {
			args = append(args, g.expr(depth-1))
		}
		return name + "(" + strings.Join(args, ", ") + ")"
	case 2:
		return rapid.SampledFrom([]string{"count(*)", "COUNT(*)", "count(DISTINCT status)", "count(distinct `my col`)"}).Draw(g.t, "count")
	case 3:
		s := g.kw("case")
		for range rapid.IntRange(1, 2).Draw(g.t, "whens") {
			s += " " + g.kw("when") + " " + g.expr(depth-1) + " " + g.kw("then") + " " + g.operand(depth-1)
		}
		if rapid.Bool().Draw(g.t, "else") {
			s += " " + g.kw("else") + " " + g.operand(depth-1)
		}
		return s + " " + g.kw("end")
	case 4:
		return g.operand(depth-1) + "::" + rapid.SampledFrom([]string{"number", "text", "floating_timestamp"}).Draw(g.t, "type")
	case 5:
		return g.kw("cast") + "(" + g.expr(depth-1) + " " + g.kw("as") + " " + rapid.SampledFrom([]string{"number", "text"}).Draw(g.t, "type") + ")"
	case 6:
		return rapid.SampledFrom([]string{"location.latitude", "location.human_address", "`my col`.x"}).Draw(g.t, "dot")
	case 7:
		x := g.operand(depth - 1)
		if strings.HasPrefix(x, "-") {
			x = " " + x // not "--", which starts a comment
		}
		return rapid.SampledFrom([]string{"-", "+", "- "}).Draw(g.t, "unary") + x
	}
	return g.literal()
}

// expr is an expression: an operand, a chain of binary operators (no
// parentheses), NOT, or a postfix predicate.
func (g soqlGen) expr(depth int) string {
	switch rapid.IntRange(0, 5).Draw(g.t, "expr kind") {
	case 0, 1:
		s := g.operand(depth)
		for range rapid.IntRange(1, 3).Draw(g.t, "chain") {
			op := rapid.SampledFrom([]string{"+", "-", "*", "/", "%", "^", "||", "=", "==", "!=", "<>", "<", "<=", ">", ">=", "and", "OR", "AND"}).Draw(g.t, "op")
			s += " " + op + " " + g.operand(depth)
		}
		return s
	case 2:
		return g.kw("not") + " " + g.operand(depth)
	case 3:
		not := ""
		if rapid.Bool().Draw(g.t, "not") {
			not = g.kw("not") + " "
		}
		x := g.operand(depth)
		switch rapid.IntRange(0, 3).Draw(g.t, "predicate") {
		case 0:
			return x + " " + g.kw("is") + " " + not + g.kw("null")
		case 1:
			return x + " " + not + g.kw("between") + " " + g.operand(depth-1) + " " + g.kw("and") + " " + g.operand(depth-1)
		case 2:
			items := []string{g.operand(depth - 1)}
			for range rapid.IntRange(0, 2).Draw(g.t, "in items") {
				items = append(items, g.operand(depth-1))
			}
			return x + " " + not + g.kw("in") + " (" + strings.Join(items, ", ") + ")"
		}
		return x + " " + not + g.kw("like") + " " + g.literal()
	}
	return g.operand(depth)
}

func (g soqlGen) stage(first bool) string {
	var clauses []string
	if !first || rapid.IntRange(0, 4).Draw(g.t, "select") > 0 {
		s := g.kw("select") + " "
		if rapid.IntRange(0, 5).Draw(g.t, "distinct") == 0 {
			s += g.kw("distinct") + " "
		}
		var items []string
		for range rapid.IntRange(1, 3).Draw(g.t, "items") {
			switch rapid.IntRange(0, 5).Draw(g.t, "item") {
			case 0:
				items = append(items, "*")
			case 1:
				items = append(items, ":*")
			case 2:
				items = append(items, g.expr(1)+" "+g.kw("as")+" "+rapid.SampledFrom([]string{"total", "`the total`", "n2", "`end`"}).Draw(g.t, "alias"))
			default:
				items = append(items, g.expr(1))
			}
		}
		clauses = append(clauses, s+strings.Join(items, ", "))
	}
	if rapid.Bool().Draw(g.t, "where") {
		clauses = append(clauses, g.kw("where")+" "+g.expr(2))
	}
	if rapid.IntRange(0, 2).Draw(g.t, "group") == 0 {
		clauses = append(clauses, g.kw("group")+" "+g.kw("by")+" "+g.operand(1)+", "+g.ident())
		if rapid.Bool().Draw(g.t, "having") {
			clauses = append(clauses, g.kw("having")+" "+g.expr(2))
		}
	}
	if rapid.Bool().Draw(g.t, "order") {
		var keys []string
		for range rapid.IntRange(1, 3).Draw(g.t, "keys") {
			k := g.operand(1)
			switch rapid.IntRange(0, 2).Draw(g.t, "dir") {
			case 0:
				k += " " + g.kw("asc")
			case 1:
				k += " " + g.kw("desc")
			}
			if rapid.IntRange(0, 3).Draw(g.t, "nulls") == 0 {
				k += " " + g.kw("nulls") + " " + g.kw(rapid.SampledFrom([]string{"first", "last"}).Draw(g.t, "nulls order"))
			}
			keys = append(keys, k)
		}
		clauses = append(clauses, g.kw("order")+" "+g.kw("by")+" "+strings.Join(keys, ", "))
	}
	if rapid.IntRange(0, 4).Draw(g.t, "search") == 0 {
		clauses = append(clauses, g.kw("search")+" "+rapid.SampledFrom([]string{"'taco truck'", "'x'"}).Draw(g.t, "search text"))
	}
	var paging []string
	if rapid.Bool().Draw(g.t, "limit") {
		paging = append(paging, g.kw("limit")+" "+fmt.Sprint(rapid.IntRange(0, 100000).Draw(g.t, "n")))
	}
	if rapid.IntRange(0, 2).Draw(g.t, "offset") == 0 {
		paging = append(paging, g.kw("offset")+" "+fmt.Sprint(rapid.IntRange(0, 5000).Draw(g.t, "m")))
	}
	if len(paging) == 2 && rapid.Bool().Draw(g.t, "swap") {
		paging[0], paging[1] = paging[1], paging[0]
	}
	clauses = append(clauses, paging...)
	if len(clauses) == 0 {
		clauses = append(clauses, g.kw("limit")+" 5")
	}
	var b strings.Builder
	for i, c := range clauses {
		if i > 0 {
			b.WriteString(g.space())
		}
		b.WriteString(c)
	}
	return b.String()
}

func (g soqlGen) query() string {
	s := g.stage(true)
	for range rapid.IntRange(0, 2).Draw(g.t, "stages") {
		s += g.space() + "|>" + g.space() + g.stage(false)
	}
	return s
}

// Property D3: any SoQL the grammar writes parses; the printed form of its
// AST parses back to an equal AST and prints identically; the stable-order
// rewrite is idempotent, parses back to itself, and leaves its receiver
// unchanged.
func TestFastSoQLRoundTrip(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		src := soqlGen{t}.query()
		q, err := soql.Parse(src)
		if err != nil {
			t.Fatalf("Parse(%q) = %v; the grammar writes valid SoQL", src, err)
		}
		printed := q.String()
		q2, err := soql.Parse(printed)
		if err != nil {
			t.Fatalf("Parse(String(Parse(%q))) = %v; printed %q", src, err, printed)
		}
		if !sameAST(q, q2) {
			t.Fatalf("round trip of %q via %q changed the AST (-parsed +reparsed):\n%s", src, printed, cmp.Diff(q, q2, astEqual))
		}
		if again := q2.String(); again != printed {
			t.Fatalf("printing is not stable for %q: %q then %q", src, printed, again)
		}

		stable := q.WithStableOrder()
		if after := q.String(); after != printed {
			t.Fatalf("WithStableOrder modified its receiver: %q became %q", printed, after)
		}
		twice := stable.WithStableOrder()
		if !sameAST(stable, twice) {
			t.Fatalf("WithStableOrder is not idempotent on %q (-once +twice):\n%s", printed, cmp.Diff(stable, twice, astEqual))
		}
		if s1, s2 := stable.String(), twice.String(); s1 != s2 {
			t.Fatalf("WithStableOrder is not idempotent on %q: %q then %q", printed, s1, s2)
		}
		back, err := soql.Parse(stable.String())
		if err != nil {
			t.Fatalf("the stable-order form %q of %q does not parse: %v", stable.String(), printed, err)
		}
		if !sameAST(stable, back) {
			t.Fatalf("the stable-order form %q does not parse back to itself (-rewritten +reparsed):\n%s", stable.String(), cmp.Diff(stable, back, astEqual))
		}
	})
}
