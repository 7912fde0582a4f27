package datasf

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
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

// localCheck returns the error for a query the portal would refuse, or
// nil. text is the query q was parsed from; fixed is what
// fuzzymatch did: why it left names alone, and their closest columns
// (ranked once, there).
func localCheck(q *soql.Query, text, datasetID string, sc *socrata.Schema, fixed fuzzymatch.Result) *toolError {
	rejected := fixed.Rejected
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
			var ok bool
			if closest, ok = fixed.Closest[ce.Name]; !ok { // auto_correct off
				closest = fuzzymatch.Closest(ce.Name, fieldNames(sc), fuzzymatch.ClosestColumns)
			}
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
		return &toolError{Reason: msg.String(), Next: "Use a column from get_schema or define the alias in SELECT, then call query_datasf again.",
			Type: errValidation, Code: "no_such_column", Details: details}
	}
	if ce.Code == soql.CodeTypeMismatch {
		return typeMismatch(ce, where, position, datasetID)
	}
	advice := ""
	if ce.Fix != "" {
		advice = " " + strings.ToUpper(ce.Fix[:1]) + ce.Fix[1:] + "."
	}
	switch ce.Code {
	case soql.CodeColumnNotInGroupBys:
		advice = fmt.Sprintf(" In a grouped query every column outside an aggregate must be a GROUP BY key: add %s to GROUP BY, or aggregate it (max(%s), count(%s)).", ce.Name, ce.Name, ce.Name)
	case soql.CodeDuplicateAlias:
		advice = " Give each SELECT item its own alias."
	}
	msg := fmt.Sprintf("The portal would reject the query on dataset %s: %s (%s, %s).%s",
		datasetID, ce.Message, ce.Code, where, advice)
	details := map[string]any{
		"code": ce.Code, "clause": ce.Clause, "position": position, "name": ce.Name,
		"aliases": aliases, "socrata_message": ce.Error(), "checked_locally": true,
	}
	if ce.Fix != "" {
		details["fix"] = ce.Fix
	}
	return &toolError{Reason: msg, Next: fixAndCallAgain, Type: errValidation, Code: ce.Code, Details: details}
}

// typeMismatch is the error for a query whose types Socrata refuses: it
// names the column, both types and the fix.
func typeMismatch(ce *soql.CheckError, where string, position map[string]any, datasetID string) *toolError {
	arg := soql.Format(ce.Arg)
	what := fmt.Sprintf("%s is %s", arg, ce.Type)
	if ce.Other != nil && ce.OtherType != "" {
		what = fmt.Sprintf("%s is %s and %s is %s", soql.Format(ce.Other), ce.OtherType, arg, ce.Type)
	}
	op := strings.TrimPrefix(ce.Name, "op$")
	verb := "they cannot be compared"
	if target, ok := strings.CutPrefix(ce.Name, "cast$"); ok {
		verb = "Socrata has no cast from " + ce.Type + " to " + target
	} else if !strings.HasPrefix(ce.Name, "op$") {
		verb = ce.Name + " needs " + article(ce.Want)
	} else if op == "and" || op == "or" || op == "not" || op == "like" || strings.ContainsAny(op, "+-*/%^") {
		verb = strings.ToUpper(op) + " needs " + article(ce.Want)
	}
	fix := typeFix(ce, op)
	msg := fmt.Sprintf("Type mismatch in %s: %s, so the portal would refuse the query (%s). %s",
		where, what, verb, fix)
	details := map[string]any{
		"code": soql.CodeTypeMismatch, "function": ce.Name, "clause": ce.Clause, "position": position,
		"type": ce.Type, "expected": ce.Want, "fix": fix, "socrata_message": ce.Error(), "checked_locally": true,
	}
	if ce.Column != "" {
		details["column"] = ce.Column
	}
	if ce.OtherType != "" {
		details["other_type"] = ce.OtherType
	}
	return &toolError{Reason: msg, Next: fixAndCallAgain, Type: errValidation, Code: "type_mismatch", Details: details}
}

// fixAndCallAgain is the next step of a query the portal would refuse.
const fixAndCallAgain = "Fix the SoQL and call query_datasf again."

func article(class string) string {
	switch class {
	case "ordered":
		return "values that sort (not a geometry)"
	case "timestamp":
		return "a timestamp"
	case "number":
		return "a number"
	case "boolean":
		return "a boolean (a condition)"
	}
	return class
}

// unquotedDate matches an unquoted date as the parser reads it: 2023-01-01
// is 2023 - 01 - 01, a subtraction.
var unquotedDate = regexp.MustCompile(`^\d{4}-\d{1,2}(-\d{1,2})?$`)

// zoned is a timestamp literal with a zone; isoLike one shaped like an ISO
// date whatever its fields.
var (
	zoned   = regexp.MustCompile(`(Z|[+-]\d{2}:?\d{2})$`)
	isoLike = regexp.MustCompile(`^\d{4}-\d{1,2}(-\d{1,2})?([T ]|$)`)
)

// typeFix says how to write what the query meant.
func typeFix(ce *soql.CheckError, op string) string {
	arg := soql.Format(ce.Arg)
	compact := strings.ReplaceAll(arg, " ", "")
	_, isNumber := ce.Arg.(*soql.NumberLit)
	_, isText := ce.Arg.(*soql.StringLit)
	other := ""
	if ce.Other != nil {
		other = soql.Format(ce.Other)
	}
	comparison := ce.Other != nil && strings.HasPrefix(ce.Name, "op$") && !strings.ContainsAny(op, "+-*/%^")
	lit := ""
	if sl, ok := ce.Arg.(*soql.StringLit); ok {
		lit = sl.Value
	}
	switch {
	case strings.HasPrefix(ce.Name, "cast$"):
		return fmt.Sprintf("Use the %s value as it is (text casts to most types; number to double or text).", ce.Type)
	case ce.Want == "timestamp" && isText && ce.OtherType == "floating_timestamp" && zoned.MatchString(lit):
		return "A floating_timestamp has no time zone: drop the Z or offset ('2023-01-01T00:00:00')."
	case ce.Want == "timestamp" && isText && isoLike.MatchString(lit):
		return fmt.Sprintf("%s is not a valid date or time (month 1-12, day within the month, hour 0-23).", arg)
	case (ce.Type == "double" || ce.OtherType == "double") && (ce.Type == "number" || ce.OtherType == "number" || ce.Want == "number"):
		return "Socrata keeps number and double apart: cast the number side with ::double (a number literal is fine as it is), never a double with ::number."
	case ce.Want == "geometry" || ce.OtherType == "point" || ce.OtherType == "location" || strings.HasSuffix(ce.OtherType, "polygon"):
		return "Compare a geometry with WKT text ('POINT (-122.42 37.77)'), or use within_circle, within_box or within_polygon."
	case ce.Type == "url" || ce.OtherType == "url":
		return "Compare a url's parts as text: url.url or url.description."
	case ce.Type == "photo" || ce.Type == "document" || ce.Type == "blob" || ce.Type == "json" || ce.OtherType == "photo" || ce.OtherType == "document" || ce.OtherType == "blob" || ce.OtherType == "json":
		return "Photo, document, blob and json values cannot be compared, ordered or aggregated: test them with IS NULL / IS NOT NULL, or count them."
	case ce.Want == "timestamp" && unquotedDate.MatchString(compact):
		if comparison && op != "in" && op != "between" {
			return fmt.Sprintf("Unquoted, %s is arithmetic (%s). Quote the date: %s %s '%s'.", compact, arg, other, strings.ToUpper(op), compact)
		}
		return fmt.Sprintf("Unquoted, %s is arithmetic (%s). Quote the date: '%s'.", compact, arg, compact)
	case ce.Want == "timestamp" && isNumber && other != "":
		return fmt.Sprintf("Compare with a quoted timestamp (%s >= '%s-01-01'), or compare the year: date_extract_y(%s) = %s.", other, arg, other, arg)
	case ce.Want == "timestamp" && isText:
		return "Write the timestamp as 'YYYY-MM-DD' or 'YYYY-MM-DDThh:mm:ss'."
	case ce.Want == "timestamp" && ce.Type == "text":
		return fmt.Sprintf("If %s holds dates as text, cast it: %s::floating_timestamp.", arg, arg)
	case ce.Want == "timestamp":
		return fmt.Sprintf("%s needs a timestamp column: use one whose type in get_schema is a date (calendar_date, floating_timestamp).", ce.Name)
	case ce.Want == "text" && isNumber && comparison:
		return fmt.Sprintf("Quote the value: %s %s '%s'.", other, strings.ToUpper(op), arg)
	case ce.Want == "text" && ce.Type != "text" && ce.Column != "":
		return fmt.Sprintf("Cast it to text: %s::text.", arg)
	case ce.Want == "number" && isText:
		return fmt.Sprintf("%s is not a number: compare %s with a number (%s %s 3).", arg, other, other, strings.ToUpper(op))
	case ce.Want == "number" && ce.Type == "text":
		return fmt.Sprintf("If %s holds numbers as text, cast it: %s::number; to count rows use count(*).", arg, arg)
	case ce.Want == "boolean":
		return fmt.Sprintf("Use a condition, e.g. %s = 'value' or %s IS NOT NULL.", arg, arg)
	case ce.Want == "ordered":
		return fmt.Sprintf("%s cannot be ordered; use count(%s) or a column that sorts.", arg, arg)
	}
	return "Make both sides the same type (quote text and timestamps, not numbers), or cast one side with ::type."
}
