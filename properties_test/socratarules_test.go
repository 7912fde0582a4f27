package properties_test

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// The checker and the offline portal follow the same rules
// (soql's signatures). On a dataset with one column of every type, with
// queries drawn from every signature family, literal form and clause rule:
// what the checker refuses the portal refuses with the same code (it never
// answers it), and what the checker accepts the portal never refuses with
// a code of the rules (it answers, or says query.soql.unsupported for a
// Socrata function it does not translate, or fails on a value such as an
// unknown time zone).

// rulesColumns are the columns, by Views dataTypeName.
var rulesColumns = []socrata.Column{
	{FieldName: "t", DataType: "text"}, {FieldName: "n", DataType: "number"}, {FieldName: "dbl", DataType: "double"},
	{FieldName: "b", DataType: "checkbox"}, {FieldName: "fl", DataType: "calendar_date"}, {FieldName: "fx", DataType: "date"},
	{FieldName: "pt", DataType: "point"}, {FieldName: "mpg", DataType: "multipolygon"}, {FieldName: "ln", DataType: "line"},
	{FieldName: "loc", DataType: "location"}, {FieldName: "u", DataType: "url"}, {FieldName: "ph", DataType: "photo"},
	{FieldName: "doc", DataType: "document"},
}

// ruleCodes are the codes of the rules.
var ruleCodes = map[string]bool{
	soql.CodeTypeMismatch: true, soql.CodeNoSuchFunction: true, soql.CodeNonBooleanWhere: true,
	soql.CodeNonBooleanHaving: true, soql.CodeUnorderableOrderBy: true, soql.CodeNonGroupableGroupBy: true,
}

func rulesPortal(t *testing.T) (*socratatest.Server, []soql.Field) {
	t.Helper()
	fake := socratatest.NewServer(t)
	schema := socratatest.Schema{ID: "rule-0001", Name: "Every type", Columns: rulesColumns}
	err := fake.AddGenerated(t.Context(), schema, 6, func(i int) map[string]any {
		return map[string]any{
			"t": fmt.Sprintf("v%d", i), "n": i, "dbl": float64(i) / 2, "b": i%2 == 0,
			"fl": fmt.Sprintf("202%d-0%d-15T10:30:00", i%5, 1+i%9), "fx": fmt.Sprintf("202%d-03-01T12:00:00Z", i%5),
			"pt": fmt.Sprintf("POINT (-122.4%d 37.7%d)", i, i), "loc": fmt.Sprintf("(37.7%d, -122.4%d)", i, i),
			"u": "https://a.example/" + fmt.Sprint(i),
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	fields := make([]soql.Field, len(rulesColumns))
	for i, c := range rulesColumns {
		fields[i] = soql.Field{Name: c.FieldName, Type: socrata.ColumnType(c.DataType)}
	}
	return fake, fields
}

// genRulesQuery draws a query from the rules' families.
func genRulesQuery(t *rapid.T) string {
	cols := []string{"t", "n", "dbl", "b", "fl", "fx", "pt", "mpg", "ln", "loc", "u", "ph", "doc", ":updated_at"}
	col := func(label string) string { return rapid.SampledFrom(cols).Draw(t, label) }
	lit := func(label string) string {
		return rapid.SampledFrom([]string{
			"3", "0.5", "-2", "'3'", "'three'", "'2023'", "'2023-01'", "'2023-01-01T10'", "'2023-01-01T00:00:00Z'",
			"'2023-13-45'", "2023-01-01", "'1'", "'0'", "'TRUE'", "'yes'", "true", "null", "'P1D'", "'PT1H'",
			"'POINT (-122.4 37.7)'", "'Mission'", "'https://a.example/1'",
		}).Draw(t, label)
	}
	op := func(label string) string {
		return rapid.SampledFrom([]string{"=", "!=", "<", ">=", "<>", ">"}).Draw(t, label)
	}
	arg := func(label string) string {
		if rapid.Bool().Draw(t, label+" is a column") {
			return col(label)
		}
		return lit(label)
	}
	switch rapid.IntRange(0, 12).Draw(t, "shape") {
	case 0:
		return fmt.Sprintf("SELECT count(*) AS c WHERE %s %s %s", col("col"), op("op"), arg("rhs"))
	case 1:
		return fmt.Sprintf("SELECT count(*) AS c WHERE %s BETWEEN %s AND %s", col("col"), lit("lo"), lit("hi"))
	case 2:
		return fmt.Sprintf("SELECT count(*) AS c WHERE %s IN (%s, %s)", col("col"), lit("a"), lit("b"))
	case 3:
		fn := rapid.SampledFrom([]string{"upper", "length", "date_trunc_ym", "date_trunc_y", "date_extract_y", "date_extract_m",
			"sum", "avg", "max", "min", "count", "abs", "ln", "round", "num_points", "extent", "median"}).Draw(t, "fn")
		args := []string{col("arg0")}
		for i := range rapid.IntRange(0, 2).Draw(t, "more args") {
			args = append(args, arg(fmt.Sprintf("arg%d", i+1)))
		}
		return fmt.Sprintf("SELECT %s(%s) AS x LIMIT 1", fn, strings.Join(args, ", "))
	case 4:
		return fmt.Sprintf("SELECT %s %s %s AS x LIMIT 1", col("col"), rapid.SampledFrom([]string{"+", "-", "*", "/"}).Draw(t, "arith"), arg("rhs"))
	case 5:
		return fmt.Sprintf("SELECT count(*) AS c WHERE %s LIKE %s", col("col"), lit("pattern"))
	case 6:
		return fmt.Sprintf("SELECT %s::%s AS x LIMIT 1", arg("x"), rapid.SampledFrom([]string{"text", "number", "double", "boolean", "floating_timestamp", "point"}).Draw(t, "type"))
	case 7:
		return fmt.Sprintf("SELECT count(*) AS c WHERE %s", arg("cond"))
	case 8:
		return fmt.Sprintf("SELECT t ORDER BY %s LIMIT 2", col("key"))
	case 9:
		g := col("key")
		return fmt.Sprintf("SELECT %s, count(*) AS c GROUP BY %s HAVING %s", g, g, rapid.SampledFrom([]string{"count(*) > 1", "count(*)", "max(n) > 2", "'true'"}).Draw(t, "having"))
	case 10:
		return fmt.Sprintf("SELECT coalesce(%s, %s) AS x, CASE WHEN n > 2 THEN %s ELSE %s END AS y LIMIT 2", col("a"), arg("b"), arg("c"), arg("d"))
	case 11:
		fn := rapid.SampledFrom([]string{"within_circle", "within_box"}).Draw(t, "geo")
		args := []string{col("geo")}
		for i := range rapid.IntRange(2, 4).Draw(t, "coords") {
			args = append(args, rapid.SampledFrom([]string{"37.7", "-122.4", "500", "'37.7'", "'x'"}).Draw(t, fmt.Sprintf("c%d", i)))
		}
		return fmt.Sprintf("SELECT count(*) AS c WHERE %s(%s)", fn, strings.Join(args, ", "))
	default:
		return fmt.Sprintf("SELECT count(*) AS c WHERE %s %s 'P1D' > %s", col("ts"), rapid.SampledFrom([]string{"+", "-"}).Draw(t, "sign"), lit("bound"))
	}
}

func TestRulesCheckerAndOfflinePortalAgree(t *testing.T) {
	t.Parallel()
	fake, fields := rulesPortal(t)
	rapid.Check(t, func(t *rapid.T) {
		q := genRulesQuery(t)
		parsed, err := soql.Parse(q)
		if err != nil {
			t.Fatalf("generated query %q does not parse: %v", q, err)
		}
		local := ""
		var ce *soql.CheckError
		if err := parsed.Check(q, fields); err != nil {
			if !asCheckError(err, &ce) {
				t.Fatalf("Check(%q) = %v; want a *soql.CheckError", q, err)
			}
			local = ce.Code
		}
		remote := portalCode(t, fake.URL(), "rule-0001", q)
		switch {
		case local != "" && remote != local:
			t.Fatalf("%q: the checker refuses it (%v) but the offline portal answers %q", q, ce, remote)
		case local == "" && ruleCodes[remote]:
			t.Fatalf("%q: the checker accepts it but the offline portal refuses it by the rules: %s", q, remote)
		}
	})
}
