package soql

import (
	"errors"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
)

var checkFields = []Field{
	{"police_district", "text"}, {"incident_category", "text"}, {"incident_number", "text"},
	{"incident_datetime", "floating_timestamp"}, {"supervisor_district", "number"},
	{"latitude", "number"}, {"point", "point"}, {"filed_online", "boolean"}, {"location", "location"},
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		soql   string
		code   string // "" means accepted
		name   string
		clause string
		msg    string
	}{
		{"SELECT *", "", "", "", ""},
		{"SELECT police_district, count(*) AS n GROUP BY police_district ORDER BY n DESC", "", "", "", ""},
		{"SELECT date_trunc_ym(incident_datetime) AS month, count(*) GROUP BY month ORDER BY month", "", "", "", ""},
		{"SELECT date_trunc_ym(incident_datetime) AS month, count(*) GROUP BY date_trunc_ym(incident_datetime)", "", "", "", ""},
		{"SELECT Police_District, count(*) GROUP BY police_district", "", "", "", ""},
		{"SELECT upper(police_district) AS d, count(*) AS n GROUP BY police_district HAVING count(*) > 3", "", "", "", ""},
		{"SELECT sum(supervisor_district), avg(latitude), max(incident_category)", "", "", "", ""},
		{"SELECT sum(incident_number::number) AS s, avg(CAST(incident_number AS numeric))", "", "", "", ""},
		{"SELECT sum(incident_number::text)", CodeTypeMismatch, "sum", "SELECT", "Type mismatch for sum, is text"},
		{"SELECT count(*) AS n |> SELECT n WHERE n > 5", "", "", "", ""},
		{"SELECT count(*) |> SELECT count", "", "", "", ""}, // an implicit name: not checked
		{"SELECT * WHERE :id > 'row-x' ORDER BY :id", "", "", "", ""},
		{"SELECT location.latitude", "", "", "", ""}, // only the base name is a column
		{"SELECT incident_category AS cat WHERE cat = 'x' ORDER BY cat", "", "", "", ""},
		{"SELECT police_district, count(*) AS n GROUP BY police_district ORDER BY n DESC |> SELECT police_district, n * 2 AS twice ORDER BY twice", "", "", "", ""},

		{"SELECT call_datetime", CodeNoSuchColumn, "call_datetime", "SELECT", "No such column: call_datetime"},
		{"SELECT date_trunc_y(incident_datetime) AS y, count(*) GROUP BY year_added", CodeNoSuchColumn, "year_added", "GROUP BY", "No such column: year_added"},
		{"SELECT incident_category, count(*) AS n GROUP BY incident_category ORDER BY total DESC", CodeNoSuchColumn, "total", "ORDER BY", "No such column: total"},
		{"SELECT count(*) AS n GROUP BY police_district HAVING cnt > 3", CodeNoSuchColumn, "cnt", "HAVING", "No such column: cnt"},
		{"SELECT count(*) AS n |> SELECT total", CodeNoSuchColumn, "total", "SELECT", "No such column: total"},
		{"SELECT police_district AS d, incident_category AS D", CodeDuplicateAlias, "D", "SELECT", "Duplicate alias: D"},
		{"SELECT sum(incident_number)", CodeTypeMismatch, "sum", "SELECT", "Type mismatch for sum, is text"},
		{"SELECT police_district, avg(incident_datetime) GROUP BY police_district", CodeTypeMismatch, "avg", "SELECT", "Type mismatch for avg, is floating_timestamp"},
		{"SELECT incident_number AS n |> SELECT sum(n)", CodeTypeMismatch, "sum", "SELECT", "Type mismatch for sum, is text"},
		{"SELECT police_district, incident_category, count(*) GROUP BY police_district", CodeColumnNotInGroupBys, "incident_category", "SELECT", "Column 'incident_category' is not in group by"},
		{"SELECT police_district, count(*)", CodeColumnNotInGroupBys, "police_district", "SELECT", "Column 'police_district' is not in group by"},
		{"SELECT police_district, count(*) GROUP BY police_district ORDER BY incident_datetime", CodeColumnNotInGroupBys, "incident_datetime", "ORDER BY", "Column 'incident_datetime' is not in group by"},
	}
	for _, tt := range tests {
		q, err := Parse(tt.soql)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tt.soql, err)
		}
		err = q.Check(tt.soql, checkFields)
		if tt.code == "" {
			if err != nil {
				t.Errorf("Check(%q) = %v; want nil", tt.soql, err)
			}
			continue
		}
		var ce *CheckError
		if !errors.As(err, &ce) {
			t.Errorf("Check(%q) = %v; want a *CheckError %s", tt.soql, err, tt.code)
			continue
		}
		if ce.Code != tt.code || ce.Name != tt.name || ce.Clause != tt.clause || ce.Message != tt.msg {
			t.Errorf("Check(%q) = {%s %q %s %q}; want {%s %q %s %q}", tt.soql, ce.Code, ce.Name, ce.Clause, ce.Message, tt.code, tt.name, tt.clause, tt.msg)
		}
		if want := "Query coordinator error: " + tt.code + "; " + tt.msg + "; position: Map(row -> 1, column -> "; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Check(%q).Error() = %q; want it to start %q", tt.soql, err, want)
		}
	}
}

func TestCheckErrorNamesAliases(t *testing.T) {
	t.Parallel()
	src := "SELECT date_trunc_y(incident_datetime) AS year, count(*) AS n\nGROUP BY data_as_of_year"
	q, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	var ce *CheckError
	if !errors.As(q.Check(src, checkFields), &ce) {
		t.Fatalf("Check(%q) accepted an undefined GROUP BY name", src)
	}
	if ce.Pos.Line != 2 || ce.Pos.Column != 10 || ce.Line != "GROUP BY data_as_of_year" || strings.Join(ce.Aliases, ",") != "year,n" {
		t.Errorf("Check(%q) = %+v; want line 2 column 10, aliases year,n", src, ce)
	}
}

// refusedCorpus are the queries of the project's DataSF corpus
// (testdata/soql/datasf-queries.jsonl) written to be refused: the portal
// refuses them too. Keyed dataset + " " + query name; the value is the code.
var refusedCorpus = map[string]string{
	"i98e-djp9 Bad sum":          CodeTypeMismatch,        // sum(description): a text column
	"rkru-6vcg Bad comparison":   CodeTypeMismatch,        // passenger_count >= '2024-01-01T00:00:00': a number compared with a timestamp
	"nuek-vuh3 Undefined order":  CodeNoSuchColumn,        // ORDER BY month: only year is defined
	"5cei-gny5 Ungrouped column": CodeColumnNotInGroupBys, // zip is neither grouped nor aggregated
	"wr8u-xric Alias twice":      CodeDuplicateAlias,      // AS unit twice
}

// Check refuses exactly the queries of the DataSF corpus written to be
// refused (with the catalog's column types) and accepts every other one.
func TestCheckCorpus(t *testing.T) {
	t.Parallel()
	type catalogLine struct {
		Endpoint string `json:"endpoint"`
		Columns  []struct {
			FieldName string `json:"fieldName"`
			DataType  string `json:"dataTypeName"`
		} `json:"columns"`
	}
	types := map[string]string{"calendar_date": "floating_timestamp", "date": "fixed_timestamp", "checkbox": "boolean", "percent": "number", "stars": "number"}
	schemas := map[string][]Field{}
	for _, l := range readJSONL[catalogLine](t, fixtures.Path(t, "catalog", "datasf-catalog-630-with-signals.jsonl")) {
		for _, c := range l.Columns {
			ty := c.DataType
			if m, ok := types[ty]; ok {
				ty = m
			}
			schemas[l.Endpoint] = append(schemas[l.Endpoint], Field{c.FieldName, ty})
		}
	}
	cases := readJSONL[datasfCase](t, fixtures.Path(t, "soql", "datasf-queries.jsonl"))
	accepted, refused := 0, map[string]int{}
	seen := map[string]bool{}
	for _, c := range cases {
		src := c.SoQL
		q, err := Parse(src)
		if err != nil {
			continue
		}
		key := c.Dataset + " " + c.Name
		err = q.Check(src, schemas[c.Dataset])
		var ce *CheckError
		switch {
		case err == nil && refusedCorpus[key] == "":
			accepted++
		case err == nil:
			t.Errorf("Check accepted %s %q; want %s", key, src, refusedCorpus[key])
		case !errors.As(err, &ce) || ce.Code != refusedCorpus[key]:
			t.Errorf("Check(%s %q) = %v; want nil", key, src, err)
		default:
			refused[ce.Code]++
			seen[key] = true
		}
	}
	for key := range refusedCorpus {
		if !seen[key] {
			t.Errorf("%s is listed as refused but was not", key)
		}
	}
	t.Logf("Check over the DataSF corpus: %d queries accepted; refused (as written): %v", accepted, refused)
}
