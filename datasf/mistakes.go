package datasf

import (
	"fmt"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// unquotedValue answers a query that compares a text column with a bare
// word that names no column (WHERE police_district = Mission): the model
// meant a text value and left out the quotes. The portal would answer "no
// such column Mission", and column correction might even turn Mission
// into some column; the answer is the fix instead: quote it, = 'Mission'.
// It returns nil when the query has no such comparison.
func unquotedValue(q *soql.Query, datasetID string, sc *socrata.Schema) *toolError {
	if len(q.Stages) == 0 {
		return nil
	}
	text := map[string]bool{}
	known := map[string]bool{}
	for _, c := range sc.Columns {
		known[fuzzymatch.Canonical(c.FieldName)] = true
		// A display name is a column too (it is corrected to its field name).
		known[fuzzymatch.Canonical(strings.Join(strings.Fields(c.Name), "_"))] = true
		if socrata.ColumnType(c.DataType) == "text" {
			text[fuzzymatch.Canonical(c.FieldName)] = true
		}
	}
	st := q.Stages[0]
	for _, it := range st.Selection {
		if it.Alias != nil {
			known[fuzzymatch.Canonical(it.Alias.Name)] = true
		}
	}
	bare := func(e soql.Expr) (*soql.Ident, bool) {
		id, ok := e.(*soql.Ident)
		if !ok || id.System() || id.Quoted || known[fuzzymatch.Canonical(id.Name)] {
			return nil, false
		}
		return id, true
	}
	isText := func(e soql.Expr) (string, bool) {
		id, ok := e.(*soql.Ident)
		if !ok || !text[fuzzymatch.Canonical(id.Name)] {
			return "", false
		}
		return id.Name, true
	}
	var found *toolError
	check := func(column, op string, value *soql.Ident) {
		if found != nil {
			return
		}
		quoted := "'" + strings.ReplaceAll(value.Raw, "'", "''") + "'"
		fix := op + " " + quoted
		if op == "IN" {
			fix = quoted // one value of the list
		}
		msg := fmt.Sprintf("%s %s %s compares the text column %s with %s, which is not a column of dataset %s: a text value needs quotes.",
			column, op, value.Raw, column, value.Raw, datasetID)
		found = &toolError{Reason: msg, Next: fmt.Sprintf("Quote it: %s, and call query_datasf again.", fix), Type: errValidation, Code: "unquoted_value", Details: map[string]any{
			"column": column, "operator": op, "value": value.Raw, "fix": fix,
			"line": value.NamePos.Line, "position": value.NamePos.Column,
		}}
	}
	for _, clause := range []soql.Expr{st.Where, st.Having} {
		if clause == nil {
			continue
		}
		soql.Walk(clause, func(e soql.Expr) bool {
			switch n := e.(type) {
			case *soql.Binary:
				switch n.Op {
				case "=", "!=", "<>", "<", ">", "<=", ">=":
				default:
					return true
				}
				if col, ok := isText(n.Left); ok {
					if v, ok := bare(n.Right); ok {
						check(col, n.Op, v)
					}
				} else if col, ok := isText(n.Right); ok {
					if v, ok := bare(n.Left); ok {
						check(col, n.Op, v)
					}
				}
			case *soql.In:
				if col, ok := isText(n.X); ok {
					for _, x := range n.List {
						if v, ok := bare(x); ok {
							check(col, "IN", v)
						}
					}
				}
			}
			return true
		})
	}
	return found
}
