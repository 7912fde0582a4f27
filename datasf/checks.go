package datasf

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/soql"
)

// The query path's local checks: after column correction, the query is
// checked against the dataset's schema (soql.Query.Check) and what the
// portal would refuse is answered at once, before any upstream request,
// with Socrata's error code and wording: a name that is neither a column
// nor an alias (including a name that fuzzymatch did not rewrite because it
// is not surely a typo), a duplicate alias, sum or avg of a column that is
// not a number, a column outside the aggregates and GROUP BY keys of a
// grouped query.

// schemaFields returns the dataset's columns as soql.Check reads them.
func schemaFields(sc *socrata.Schema) []soql.Field {
	fields := make([]soql.Field, len(sc.Columns))
	for i, c := range sc.Columns {
		fields[i] = soql.Field{Name: c.FieldName}
		if c.DataType != "" {
			fields[i].Type = socrata.ColumnType(c.DataType)
		}
	}
	return fields
}

func fieldNames(sc *socrata.Schema) []string {
	names := make([]string, len(sc.Columns))
	for i, c := range sc.Columns {
		names[i] = c.FieldName
	}
	return names
}

// localCheck returns the isError result for a query the portal would
// refuse, or nil. text is the query q was parsed from; rejected explains
// the names fuzzymatch left alone.
func localCheck(q *soql.Query, text, datasetID string, sc *socrata.Schema, rejected []fuzzymatch.Rejection) *mcp.CallToolResult {
	var ce *soql.CheckError
	if !errors.As(q.Check(text, schemaFields(sc)), &ce) {
		return nil
	}
	position := map[string]any{"line": ce.Pos.Line, "column": ce.Pos.Column}
	where := fmt.Sprintf("%s, line %d, column %d", ce.Clause, ce.Pos.Line, ce.Pos.Column)
	if ce.Stage > 0 {
		where = fmt.Sprintf("stage %d after |>, %s", ce.Stage+1, where)
	}
	aliases := ce.Aliases
	if aliases == nil {
		aliases = []string{}
	}
	if ce.Code == soql.CodeNoSuchColumn {
		var closest []string
		if ce.Stage == 0 {
			closest = fuzzymatch.Closest(ce.Name, fieldNames(sc), 5)
		}
		if closest == nil {
			closest = []string{} // an empty list, not null, for the model
		}
		var msg strings.Builder
		fmt.Fprintf(&msg, "No such column %q in dataset %s (%s): it is neither a column nor an alias the query defines", ce.Name, datasetID, where)
		if len(ce.Aliases) > 0 {
			fmt.Fprintf(&msg, " (aliases: %s)", strings.Join(ce.Aliases, ", "))
		}
		msg.WriteString(".")
		details := map[string]any{
			"code": ce.Code, "column": ce.Name, "clause": ce.Clause, "position": position,
			"aliases": aliases, "closest_columns": closest, "socrata_message": ce.Error(), "checked_locally": true,
		}
		for _, r := range rejected {
			if fuzzymatch.Canonical(r.Name) == fuzzymatch.Canonical(ce.Name) {
				fmt.Fprintf(&msg, " It was not corrected: %s.", r.Reason)
				details["not_corrected"] = r.Reason
				break
			}
		}
		if len(closest) > 0 {
			msg.WriteString(" Closest columns: " + strings.Join(closest, ", ") + ".")
		}
		msg.WriteString(" Use a column from get_schema or define the alias in SELECT, then call query_datasf again.")
		return toolError{Error: msg.String(), ErrorType: errValidation, Code: "no_such_column", Details: details}.result()
	}
	advice := ""
	switch ce.Code {
	case soql.CodeTypeMismatch:
		advice = fmt.Sprintf(" %s needs a number and its argument is %s: for a text column that holds numbers, cast it (%s(column::number)); to count rows use count(*).", ce.Name, ce.Type, ce.Name)
	case soql.CodeColumnNotInGroupBys:
		advice = fmt.Sprintf(" In a grouped query every column outside an aggregate must be a GROUP BY key: add %s to GROUP BY, or aggregate it (max(%s), count(%s)).", ce.Name, ce.Name, ce.Name)
	case soql.CodeDuplicateAlias:
		advice = " Give each SELECT item its own alias."
	}
	msg := fmt.Sprintf("The portal would reject the query on dataset %s: %s (%s, %s).%s Fix the SoQL and call query_datasf again.",
		datasetID, ce.Message, ce.Code, where, advice)
	return toolError{Error: msg, ErrorType: errValidation, Code: ce.Code, Details: map[string]any{
		"code": ce.Code, "clause": ce.Clause, "position": position, "name": ce.Name,
		"aliases": aliases, "socrata_message": ce.Error(), "checked_locally": true,
	}}.result()
}
