package datasf

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/hints"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// Nulls named. A grouped query's rows without a value of a group key make
// a group of their own, whose key is null: Socrata leaves the key out of
// the row, and a table would show an empty label, which a model reads as
// a value or skips. The text's table writes that key as null
// (dualresp.Spec.Keys), and when the top group (the answer's first row) is
// the null one, the summary says so and how many rows lack the value
// (topNullNote).

// groupKey is one group key of a grouped query's last stage: its name in
// the result's rows and its expression.
type groupKey struct {
	name string
	expr soql.Expr
}

// groupKeys returns the group keys of q's last stage (a stage with GROUP
// BY, aggregates or DISTINCT): its items that are no aggregate and have a
// name in the rows (an alias, or a column's), and the name of its
// count(*), "" when it has none.
func groupKeys(q *soql.Query) (keys []groupKey, count string) {
	if len(q.Stages) == 0 {
		return nil, ""
	}
	st := q.Stages[len(q.Stages)-1]
	grouped := st.Distinct || len(st.GroupBy) > 0
	for _, it := range st.Selection {
		if it.Expr != nil && soql.HasAggregate(it.Expr) {
			grouped = true
		}
	}
	if !grouped {
		return nil, ""
	}
	for _, it := range st.Selection {
		if it.Expr == nil {
			return nil, "" // *: not a grouped answer's shape
		}
		name := ""
		if it.Alias != nil {
			name = it.Alias.Name
		}
		if c, ok := it.Expr.(*soql.Call); ok && c.Star && strings.EqualFold(c.Name.Name, "count") {
			if count == "" {
				count = name
				if count == "" {
					count = "count" // Socrata's name of an unnamed count(*)
				}
			}
			continue
		}
		if soql.HasAggregate(it.Expr) {
			continue
		}
		if id, ok := it.Expr.(*soql.Ident); ok && name == "" {
			name = id.Name
		}
		if name != "" {
			keys = append(keys, groupKey{name: name, expr: it.Expr})
		}
	}
	return keys, count
}

// topNullNote is the sentence an answer says when its first row is a
// group whose key is null: how many rows lack the value. The number is the
// group's count(*) when the query has one and a single key; else one
// request counts the query's rows without the value (a single-stage
// query; client is the query's portal, a move followed), and without it
// the sentence says no number.
func topNullNote(ctx context.Context, client hints.Portal, datasetID string, q *soql.Query, keys []groupKey, count string, resp *dualresp.Response, log *slog.Logger) string {
	rec := resp.Record()
	if len(keys) == 0 || len(rec.Sample) == 0 {
		return ""
	}
	var row map[string]any
	if json.Unmarshal(rec.Sample[0], &row) != nil {
		return ""
	}
	var null []groupKey
	for _, k := range keys {
		if row[k.name] == nil {
			null = append(null, k)
		}
	}
	if len(null) == 0 {
		return ""
	}
	names := make([]string, len(null))
	for i, k := range null {
		names[i] = k.name
	}
	what := strings.Join(names, " and no ")
	n, known := int64(0), false
	if len(keys) == 1 && count != "" {
		n, known = countOf(row[count])
	}
	if !known && len(q.Stages) == 1 {
		cond := "(" + soql.Format(null[0].expr) + ") IS NULL"
		if w := q.Stages[0].Where; w != nil {
			cond = "(" + soql.Format(w) + ") AND " + cond
		}
		res, err := client.Query(ctx, datasetID, "SELECT count(*) AS n WHERE "+cond)
		switch {
		case err != nil:
			log.Debug("the null group's count failed", "dataset", datasetID, "err", err)
		case len(res.Rows) == 1:
			n, known = countOf(res.Rows[0]["n"])
			what = names[0]
		}
	}
	if !known {
		return fmt.Sprintf("The top group is null: the rows with no %s.", what)
	}
	verb := "have"
	if n == 1 {
		verb = "has"
	}
	return fmt.Sprintf("The top group is null: %s %s no %s.", hints.RowCount(n), verb, what)
}

// countOf reads a count as Socrata sends it (a string) or as a number.
func countOf(v any) (int64, bool) {
	switch x := v.(type) {
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	case float64:
		return int64(x), true
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	}
	return 0, false
}
