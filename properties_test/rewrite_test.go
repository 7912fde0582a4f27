package properties_test

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// Only what is surely a typo is rewritten. Whatever the
// query, a rewrite never changes a name that is a valid column or an alias
// the query defines, and its target is the only column at the smallest edit
// distance from the name (among all columns, not only those within the
// threshold), within the threshold.

// stageIdents returns the identifiers of the first stage that can name a
// column or an alias, in source order: those of every clause (not function
// names, cast types, the aliases being defined or system fields).
func stageIdents(q *soql.Query) []*soql.Ident {
	st := q.Stages[0]
	var out []*soql.Ident
	collect := func(e soql.Expr) {
		soql.Walk(e, func(x soql.Expr) bool {
			if id, ok := x.(*soql.Ident); ok && !id.System() {
				out = append(out, id)
			}
			return true
		})
	}
	for _, it := range st.Selection {
		collect(it.Expr)
	}
	collect(st.Where)
	for _, e := range st.GroupBy {
		collect(e)
	}
	collect(st.Having)
	for _, o := range st.OrderBy {
		collect(o.Expr)
	}
	return out
}

// genAliasedQuery draws a schema and a query whose select items are column
// references (exact, misspelt, unrelated) with and without aliases, and
// whose ORDER BY uses aliases, columns and misspellings of both.
func genAliasedQuery(t *rapid.T) (columns []string, query string) {
	columns = rapid.SliceOfNDistinct(genColumnName, 1, 8, func(s string) string {
		return strings.ReplaceAll(strings.ToLower(s), "-", "_")
	}).Draw(t, "columns")
	isColumn := func(n string) bool {
		for _, c := range columns {
			if sameColumn(c, n) {
				return true
			}
		}
		return false
	}
	name := func(label string, pool []string) string {
		base := rapid.SampledFrom(pool).Draw(t, label)
		switch rapid.IntRange(0, 3).Draw(t, label+" kind") {
		case 0:
			return base
		case 1, 2:
			if m := mutate(t, base); usableBare(m) {
				return m
			}
			return base
		default:
			return genColumnName.Draw(t, label+" other")
		}
	}
	var aliases []string
	var items []string
	for i := range rapid.IntRange(1, 4).Draw(t, "items") {
		ref := name("ref", columns)
		if rapid.Bool().Draw(t, "aliased") {
			a := genColumnName.Draw(t, "alias")
			dup := isColumn(a)
			for _, x := range aliases {
				dup = dup || sameColumn(x, a)
			}
			if !dup {
				aliases = append(aliases, a)
				items = append(items, ref+" AS "+a)
				continue
			}
		}
		_ = i
		items = append(items, ref)
	}
	query = "SELECT " + strings.Join(items, ", ")
	pool := append(append([]string{}, columns...), aliases...)
	if rapid.Bool().Draw(t, "where") {
		query += " WHERE " + name("where", pool) + " > 1"
	}
	var order []string
	for range rapid.IntRange(0, 3).Draw(t, "order keys") {
		order = append(order, name("order", pool))
	}
	if len(order) > 0 {
		query += " ORDER BY " + strings.Join(order, ", ")
	}
	return columns, query
}

func TestFastRewriteOnlySureTypos(t *testing.T) {
	t.Parallel()
	var rewrites, kept int
	rapid.Check(t, func(t *rapid.T) {
		columns, query := genAliasedQuery(t)
		q, err := soql.Parse(query)
		if err != nil {
			t.Skip("generated a query that does not parse (a keyword as a name)")
		}
		res, err := fuzzymatch.Correct(query, columns, fuzzymatch.Options{})
		if err != nil {
			t.Fatalf("Correct(%q) = %v", query, err)
		}
		fixed, err := soql.Parse(res.Query)
		if err != nil {
			t.Fatalf("Correct(%q) = %q, which does not parse: %v", query, res.Query, err)
		}
		aliases := map[string]bool{}
		for _, it := range q.Stages[0].Selection {
			if it.Alias != nil {
				aliases[strings.ToLower(it.Alias.Name)] = true
			}
		}
		before, after := stageIdents(q), stageIdents(fixed)
		if len(before) != len(after) {
			t.Fatalf("Correct(%q) = %q: %d names became %d", query, res.Query, len(before), len(after))
		}
		for i, b := range before {
			a := after[i]
			valid := aliases[strings.ToLower(b.Name)]
			for _, c := range columns {
				valid = valid || sameColumn(c, b.Name)
			}
			if a.Name == b.Name {
				kept++
				continue
			}
			rewrites++
			if valid {
				t.Fatalf("Correct(%q, %v) rewrote %q, a valid column or alias, to %q", query, columns, b.Name, a.Name)
			}
			// The target is the only column at the smallest distance.
			best, bestCount := -1, 0
			for _, c := range columns {
				d := fuzzymatch.Distance(fuzzyNorm(b.Name), fuzzyNorm(c))
				switch {
				case best < 0 || d < best:
					best, bestCount = d, 1
				case d == best:
					bestCount++
				}
			}
			d := fuzzymatch.Distance(fuzzyNorm(b.Name), fuzzyNorm(a.Name))
			if d != best || bestCount != 1 || !withinThreshold(b.Name, a.Name) {
				t.Fatalf("Correct(%q, %v) rewrote %q to %q at %d edits; the smallest distance is %d, shared by %d columns",
					query, columns, b.Name, a.Name, d, best, bestCount)
			}
			if d > 2 {
				t.Fatalf("Correct(%q, %v) rewrote %q to %q at %d edits; a typo is at most 2", query, columns, b.Name, a.Name, d)
			}
		}
	})
	t.Logf("names rewritten: %d; kept: %d", rewrites, kept)
}
