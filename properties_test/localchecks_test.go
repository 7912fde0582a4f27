package properties_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// The local checks and the fake portal agree. A query the
// local checks (soql.Query.Check on the dataset's schema) accept is never
// refused by the portal for a type or a name, and a query they refuse for
// a type or a name is refused by the portal with the same code. Queries
// are generated on the fixture schemas, mixing columns of every type with
// literals (quoted and unquoted dates, numbers, text), operators and
// functions.

// checkDatasets are the fixture datasets the property queries.
var checkDatasets = []string{"wg3w-h783", "rqzj-sfat", "vw6y-z8j6"}

var checkFields struct {
	once   sync.Once
	fields map[string][]soql.Field
	err    error
}

// fixtureFields returns the soql fields of checkDatasets in the shared
// fake portal, read once.
func fixtureFields(t *testing.T, e *env) map[string][]soql.Field {
	t.Helper()
	checkFields.once.Do(func() {
		c := socrata.NewClient(socrata.Options{BaseURL: e.fake.URL(), MaxRetries: -1})
		checkFields.fields = map[string][]soql.Field{}
		for _, id := range checkDatasets {
			sc, err := c.Schema(t.Context(), id)
			if err != nil {
				checkFields.err = err
				return
			}
			for _, col := range sc.Columns {
				checkFields.fields[id] = append(checkFields.fields[id], soql.Field{Name: col.FieldName, Type: socrata.ColumnType(col.DataType)})
			}
		}
	})
	if checkFields.err != nil {
		t.Fatal(checkFields.err)
	}
	return checkFields.fields
}

// genCheckQuery draws a query on fields.
func genCheckQuery(t *rapid.T, fields []soql.Field) string {
	var cols []string
	for _, f := range fields {
		if !strings.HasPrefix(f.Name, ":") {
			cols = append(cols, f.Name)
		}
	}
	col := func(label string) string {
		if rapid.IntRange(0, 9).Draw(t, label+" unknown") == 0 {
			return rapid.SampledFrom([]string{"no_such_col", "incident_yr", "total"}).Draw(t, label+" name")
		}
		return rapid.SampledFrom(cols).Draw(t, label)
	}
	lit := func(label string) string {
		return rapid.SampledFrom([]string{
			"3", "0.5", "'3'", "'2023-01-01'", "'2023-01-01T10:30:00'", "'2023-01-01T10:30:00.000'", "2023-01-01",
			"2023", "'Mission'", "'yesterday'", "'true'", "true", "null", "'abc%'",
		}).Draw(t, label)
	}
	op := rapid.SampledFrom([]string{"=", "!=", "<", ">=", "<>"}).Draw(t, "op")
	switch rapid.IntRange(0, 7).Draw(t, "shape") {
	case 0:
		return fmt.Sprintf("SELECT count(*) AS n WHERE %s %s %s", col("col"), op, lit("lit"))
	case 1:
		return fmt.Sprintf("SELECT count(*) AS n WHERE %s BETWEEN %s AND %s", col("col"), lit("lo"), lit("hi"))
	case 2:
		return fmt.Sprintf("SELECT count(*) AS n WHERE %s IN (%s, %s)", col("col"), lit("a"), lit("b"))
	case 3:
		fn := rapid.SampledFrom([]string{"upper", "lower", "date_trunc_ym", "date_extract_y", "sum", "avg", "max", "min", "abs", "count"}).Draw(t, "fn")
		return fmt.Sprintf("SELECT %s(%s) AS x LIMIT 1", fn, col("col"))
	case 4:
		return fmt.Sprintf("SELECT %s %s %s AS x LIMIT 1", col("col"), rapid.SampledFrom([]string{"+", "-", "*"}).Draw(t, "arith"), lit("lit"))
	case 5:
		return fmt.Sprintf("SELECT count(*) AS n WHERE %s LIKE %s", col("col"), rapid.SampledFrom([]string{"'%a%'", "3"}).Draw(t, "pattern"))
	case 6:
		return fmt.Sprintf("SELECT count(*) AS n WHERE %s %s %s", col("left"), op, col("right"))
	default:
		return fmt.Sprintf("SELECT count(*) AS n WHERE %s %s %s AND %s IS NOT NULL", col("col"), op, lit("lit"), col("other"))
	}
}

// portalCode runs q on the portal and returns the error code of a refusal,
// "" when it answers.
func portalCode(t *rapid.T, base, id, q string) string {
	resp, err := http.Get(base + "/resource/" + id + ".json?$query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("GET %s: %v", q, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		return ""
	}
	var e struct {
		ErrorCode string `json:"errorCode"`
		Code      string `json:"code"`
	}
	_ = json.Unmarshal(body, &e)
	if e.ErrorCode == "" {
		e.ErrorCode = e.Code
	}
	if e.ErrorCode == "" {
		e.ErrorCode = fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return e.ErrorCode
}

func TestFastLocalChecksAgreeWithPortal(t *testing.T) {
	e := sharedEnv(t)
	fields := fixtureFields(t, e)
	decisive := map[string]bool{soql.CodeTypeMismatch: true, soql.CodeNoSuchColumn: true}
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.SampledFrom(checkDatasets).Draw(t, "dataset")
		q := genCheckQuery(t, fields[id])
		parsed, err := soql.Parse(q)
		if err != nil {
			t.Fatalf("generated query %q does not parse: %v", q, err)
		}
		local := ""
		var ce *soql.CheckError
		if err := parsed.Check(q, fields[id]); err != nil {
			if !asCheckError(err, &ce) {
				t.Fatalf("Check(%q) = %v; want a *soql.CheckError", q, err)
			}
			local = ce.Code
		}
		remote := portalCode(t, e.fake.URL(), id, q)
		switch {
		case decisive[local] && remote != local:
			t.Fatalf("on %s, %q: the local checks refuse it (%s: %v) but the portal answers %q", id, q, local, ce, remote)
		case !decisive[local] && decisive[remote]:
			t.Fatalf("on %s, %q: the local checks accept it (%q) but the portal refuses it: %s", id, q, local, remote)
		}
	})
}

func asCheckError(err error, target **soql.CheckError) bool {
	ce, ok := err.(*soql.CheckError)
	if ok {
		*target = ce
	}
	return ok
}
