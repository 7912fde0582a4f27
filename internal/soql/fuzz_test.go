package soql

import (
	"errors"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SELECT a, count(*) AS n WHERE b > 1 AND c IN ('x', 'y') GROUP BY a HAVING n > 2 ORDER BY n DESC NULLS LAST LIMIT 5 OFFSET 10",
		"SELECT DISTINCT `my col`, :id, :@computed_region_abcd WHERE x IS NOT NULL |> SELECT count(DISTINCT x)",
		"WHERE a NOT BETWEEN 1 AND -2 ^ 3 OR NOT b LIKE 'a''b' -- comment\n",
		"SELECT CASE WHEN a THEN \"b\\\"c\" ELSE case(x, 1) END, a.b[2]::number, CAST(x AS text) /* c */ SEARCH 'q'",
		"SELECT - -1 * (2 + 3) % 4 || 'x', 1.5e3, .5 ORDER BY x OFFSET 1 LIMIT 2",
		"x = 1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		q, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %v is not a *SyntaxError", src, err)
			}
			if se.Pos.Offset < 0 || se.Pos.Offset > len(src) {
				t.Fatalf("Parse(%q) error position %d outside the source", src, se.Pos.Offset)
			}
		} else {
			checkQueryRoundTrip(t, src, q)
			checkPositions(t, src, queryIdents(q))
		}
		if e, err := ParseExpr(src); err == nil {
			checkExprRoundTrip(t, src, e)
			checkPositions(t, src, allIdents(e))
		}
	})
}
