package soql

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rewriteCase runs a rewrite on a parsed query and compares the SoQL text.
type rewriteCase struct {
	in, want string
}

func runRewrite(t *testing.T, name string, cases []rewriteCase, f func(*Query) *Query) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			q, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			before := q.String()
			got := f(q)
			if s := got.String(); s != tc.want {
				t.Errorf("%s(%q) = %q; want %q", name, tc.in, s, tc.want)
			}
			if after := q.String(); after != before {
				t.Errorf("%s modified its receiver: %q became %q", name, before, after)
			}
			// The result must itself be valid SoQL.
			if _, err := Parse(got.String()); err != nil {
				t.Errorf("%s(%q) produced unparsable %q: %v", name, tc.in, got.String(), err)
			}
		})
	}
}

func TestWithStableOrder(t *testing.T) {
	t.Parallel()
	runRewrite(t, "WithStableOrder", []rewriteCase{
		{"SELECT a, b WHERE c > 1", "SELECT a, b WHERE c > 1 ORDER BY :id"},
		{"SELECT a ORDER BY b DESC", "SELECT a ORDER BY b DESC, :id"},
		{"SELECT a ORDER BY :id DESC", "SELECT a ORDER BY :id DESC"},
		{"SELECT a, count(*) AS n GROUP BY a", "SELECT a, count(*) AS n GROUP BY a ORDER BY a"},
		{"SELECT date_trunc_y(d) AS year, count(*) GROUP BY date_trunc_y(d)", "SELECT date_trunc_y(d) AS year, count(*) GROUP BY date_trunc_y(d) ORDER BY year"},
		{"SELECT a, b, count(*) AS n GROUP BY a, b ORDER BY n DESC, b", "SELECT a, b, count(*) AS n GROUP BY a, b ORDER BY n DESC, b, a"},
		{"SELECT date_trunc_ym(d) AS month, count(*) GROUP BY month ORDER BY MONTH", "SELECT date_trunc_ym(d) AS month, count(*) GROUP BY month ORDER BY MONTH"},
		{"SELECT count(*)", "SELECT count(*)"},
		// Without :id, every output column breaks ties.
		{"SELECT DISTINCT a", "SELECT DISTINCT a ORDER BY a"},
		{"SELECT DISTINCT a, upper(b) AS ub ORDER BY ub DESC", "SELECT DISTINCT a, upper(b) AS ub ORDER BY ub DESC, a"},
		{"SELECT a, b |> SELECT a", "SELECT a, b |> SELECT a ORDER BY a"},
		{"SELECT DISTINCT *", "SELECT DISTINCT *"},
		{"SELECT :id, a |> SELECT a WHERE a > 1", "SELECT :id, a |> SELECT a WHERE a > 1 ORDER BY :id"},
		{"SELECT :*, a |> SELECT a", "SELECT :*, a |> SELECT a ORDER BY :id"},
		{"", "ORDER BY :id"},
		{"SELECT a SEARCH 'x' LIMIT 5", "SELECT a ORDER BY :id SEARCH 'x' LIMIT 5"},
		{"SELECT a, sum(b) AS total GROUP BY a |> SELECT a, total ORDER BY total", "SELECT a, sum(b) AS total GROUP BY a |> SELECT a, total ORDER BY total, a"},
	}, (*Query).WithStableOrder)
}

func TestWithoutPaging(t *testing.T) {
	t.Parallel()
	runRewrite(t, "WithoutPaging", []rewriteCase{
		{"SELECT a ORDER BY a LIMIT 5 OFFSET 2", "SELECT a"},
		{"SELECT a LIMIT 5 |> SELECT b ORDER BY b LIMIT 1", "SELECT a LIMIT 5 |> SELECT b"},
		{"SELECT a WHERE b = 1 SEARCH 'x' OFFSET 3", "SELECT a WHERE b = 1 SEARCH 'x'"},
	}, (*Query).WithoutPaging)
}

func TestWithPage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in            string
		offset, limit int64
		want          string
	}{
		{"SELECT a", 0, 100, "SELECT a LIMIT 100"},
		{"SELECT a", 200, 100, "SELECT a LIMIT 100 OFFSET 200"},
		{"SELECT a LIMIT 250", 200, 100, "SELECT a LIMIT 50 OFFSET 200"},
		{"SELECT a LIMIT 250 OFFSET 10", 200, 100, "SELECT a LIMIT 50 OFFSET 210"},
		{"SELECT a OFFSET 10 LIMIT 250", 0, 100, "SELECT a LIMIT 100 OFFSET 10"},
		{"SELECT a LIMIT 50", 100, 100, "SELECT a LIMIT 0 OFFSET 100"},
		{"SELECT a OFFSET 5", 0, 10, "SELECT a LIMIT 10 OFFSET 5"},
		{"SELECT a", -5, -1, "SELECT a LIMIT 0"},
		{"SELECT a LIMIT 5 |> SELECT b", 2, 2, "SELECT a LIMIT 5 |> SELECT b LIMIT 2 OFFSET 2"},
	} {
		q, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		before := q.String()
		if got := q.WithPage(tc.offset, tc.limit).String(); got != tc.want {
			t.Errorf("WithPage(%q, %d, %d) = %q; want %q", tc.in, tc.offset, tc.limit, got, tc.want)
		}
		if q.String() != before {
			t.Errorf("WithPage modified its receiver %q", before)
		}
	}
}

func TestCountQuery(t *testing.T) {
	t.Parallel()
	runRewrite(t, "CountQuery", []rewriteCase{
		{"SELECT a WHERE b > 1 ORDER BY a", "SELECT a WHERE b > 1 |> SELECT count(*) AS count"},
		{"SELECT a ORDER BY a LIMIT 10 OFFSET 5", "SELECT a LIMIT 10 OFFSET 5 |> SELECT count(*) AS count"},
		{"", "SELECT count(*) AS count"},
		{"ORDER BY a", "SELECT count(*) AS count"},
		{"WHERE x = 'y'", "WHERE x = 'y' |> SELECT count(*) AS count"},
		{"SELECT a, count(*) GROUP BY a", "SELECT a, count(*) GROUP BY a |> SELECT count(*) AS count"},
		{"SELECT a |> SELECT a ORDER BY a", "SELECT a |> SELECT a |> SELECT count(*) AS count"},
		{"SELECT a |> ORDER BY a", "SELECT a |> SELECT count(*) AS count"},
	}, (*Query).CountQuery)
}

func TestGrouped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"SELECT a", false},
		{"SELECT upper(a) WHERE b > 1", false},
		{"", false},
		{"SELECT count(*)", true},
		{"SELECT MAX(a)", true},
		{"SELECT a GROUP BY a", true},
		{"SELECT a HAVING sum(b) > 1", true},
		{"SELECT a, count(*) GROUP BY a |> SELECT a", false},
		{"SELECT a |> SELECT count(*)", true},
		{"SELECT 1 + avg(x) AS y", true},
	} {
		q, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		if got := q.Grouped(); got != tc.want {
			t.Errorf("Grouped(%q) = %v; want %v", tc.in, got, tc.want)
		}
	}
}

func TestColumnRefs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string // Raw of each ref, in order
	}{
		{
			"SELECT date_trunc_y(d) AS year, count(*) AS n, location.latitude, x::number WHERE :id > 1 AND `my col` = 'a' GROUP BY year ORDER BY n DESC, e |> SELECT year, f",
			[]string{"d", "location", "x", "`my col`", "e"},
		},
		{"SELECT a AS a WHERE a > 1", []string{"a"}},
		{"WHERE upper(Name) LIKE 'A%' AND :@computed_region_abcd = 3", []string{"Name"}},
		{"SELECT CASE WHEN a > 1 THEN b ELSE c END, case(d, e)", []string{"a", "b", "c", "d", "e"}},
		{"SELECT a ORDER BY b SEARCH 'z'", []string{"a", "b"}},
		{"SELECT CAST(a AS number) AS n ORDER BY n", []string{"a"}},
	} {
		q, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		var got []string
		for _, id := range q.ColumnRefs() {
			got = append(got, id.Raw)
			if tc.in[id.NamePos.Offset:id.NamePos.Offset+len(id.Raw)] != id.Raw {
				t.Errorf("ColumnRefs(%q): %q at %d does not match the source", tc.in, id.Raw, id.NamePos.Offset)
			}
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("ColumnRefs(%q) (-want +got):\n%s", tc.in, d)
		}
	}
}

func TestClone(t *testing.T) {
	t.Parallel()
	src := "SELECT a, count(DISTINCT b) AS n WHERE c IN (1, 2) AND d BETWEEN 1 AND 2 AND e IS NULL AND f LIKE 'x' GROUP BY a HAVING n > 1 ORDER BY n DESC NULLS FIRST SEARCH 's' LIMIT 1 OFFSET 2 |> SELECT CASE WHEN a THEN (b) ELSE c[1].d END, CAST(x AS text), -y::number"
	q, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	c := q.Clone()
	if d := cmp.Diff(q, c); d != "" {
		t.Fatalf("Clone differs (-orig +clone):\n%s", d)
	}
	// Mutating the clone everywhere must leave the original intact.
	before := q.String()
	for _, st := range c.Stages {
		for _, it := range st.Selection {
			for _, id := range allIdents(it.Expr) {
				id.Name = "zz"
			}
		}
		for _, id := range allIdents(st.Where) {
			id.Name = "zz"
		}
		if st.Limit != nil {
			*st.Limit, *st.Search = 99, "changed"
		}
	}
	if q.String() != before {
		t.Errorf("mutating the clone changed the original: %q became %q", before, q.String())
	}
}

func TestSortedBy(t *testing.T) {
	t.Parallel()
	keys := []*OrderItem{{Expr: Column("upper_name"), Desc: true}, {Expr: Column(":id")}, {Expr: Column("two words")}}
	cols := []string{"upper_name", ":id", "two words"}
	runRewrite(t, "SortedBy", []rewriteCase{
		{"SELECT n ORDER BY :id LIMIT 3", "SELECT n ORDER BY :id LIMIT 3 |> SELECT upper_name, :id, `two words` ORDER BY upper_name DESC, :id, `two words`"},
		{"SELECT upper(name) ORDER BY :id", "SELECT upper(name) |> SELECT upper_name, :id, `two words` ORDER BY upper_name DESC, :id, `two words`"},
		{"ORDER BY :id", "SELECT upper_name, :id, `two words` ORDER BY upper_name DESC, :id, `two words`"},
		{"SELECT a ORDER BY a OFFSET 2", "SELECT a ORDER BY a OFFSET 2 |> SELECT upper_name, :id, `two words` ORDER BY upper_name DESC, :id, `two words`"},
	}, func(q *Query) *Query { return q.SortedBy(cols, keys) })
	q, err := Parse("SELECT a LIMIT 1")
	if err != nil {
		t.Fatal(err)
	}
	got := q.SortedBy(nil, keys[:1]).String()
	if want := "SELECT a LIMIT 1 |> SELECT * ORDER BY upper_name DESC"; got != want {
		t.Errorf("SortedBy without columns = %q, want %q", got, want)
	}
}
