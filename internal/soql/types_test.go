package soql

import (
	"errors"
	"strings"
	"testing"
)

// The type rules, as Socrata's analyzer applies them: what it accepts is
// accepted, what it refuses with query.soql.type-mismatch is refused with
// the function, the argument's type, the class wanted and the column.
func TestCheckTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		soql string
		// fn is the refused function ("" when the query is accepted); got
		// the argument's type, want the class expected, column the column.
		fn, got, want, column string
	}{
		// Accepted: quoted literals coerce, numbers compare with numbers.
		{"SELECT count(*) WHERE incident_datetime > '2023-01-01'", "", "", "", ""},
		{"SELECT count(*) WHERE incident_datetime >= '2023-01-01T00:00:00' AND incident_datetime < '2023-02-01T00:00:00.000'", "", "", "", ""},
		{"SELECT count(*) WHERE incident_datetime BETWEEN '2023-01-01' AND '2023-12-31'", "", "", "", ""},
		{"SELECT count(*) WHERE supervisor_district = 3", "", "", "", ""},
		{"SELECT count(*) WHERE supervisor_district = '3'", "", "", "", ""},
		{"SELECT count(*) WHERE supervisor_district IN (1, 2, '3')", "", "", "", ""},
		{"SELECT count(*) WHERE latitude > 37.7 AND latitude + 1 < 40", "", "", "", ""},
		{"SELECT count(*) WHERE police_district = 'Mission' OR police_district IN ('Bayview', 'Park')", "", "", "", ""},
		{"SELECT count(*) WHERE filed_online = true OR filed_online = 'false'", "", "", "", ""},
		{"SELECT count(*) WHERE incident_number::number > 5", "", "", "", ""},
		{"SELECT count(*) WHERE date_extract_y(incident_datetime) = 2023", "", "", "", ""},
		{"SELECT date_trunc_ym(incident_datetime) AS m, count(*) AS n GROUP BY m HAVING n > 10 ORDER BY m", "", "", "", ""},
		{"SELECT count(*) WHERE police_district LIKE '%ISS%' AND upper(police_district) = 'MISSION'", "", "", "", ""},
		{"SELECT count(*) WHERE incident_datetime IS NULL OR police_district IS NOT NULL", "", "", "", ""},
		{"SELECT max(incident_datetime) AS last, min(police_district) AS first", "", "", "", ""},
		{"SELECT coalesce(police_district, 'none') AS d", "", "", "", ""},
		{"SELECT count(*) WHERE within_circle(point, 37.7, -122.4, 500)", "", "", "", ""},
		{"SELECT count(*) WHERE :updated_at > '2024-01-01'", "", "", "", ""},
		{"SELECT count(*) WHERE unknown_function(police_district) = 3", "", "", "", ""},
		{"SELECT count(*) AS n |> SELECT n WHERE n > 2", "", "", "", ""},
		{"SELECT police_district || ' district' AS label", "", "", "", ""},
		{"SELECT CASE WHEN latitude > 37.7 THEN 'north' ELSE 'south' END AS half", "", "", "", ""},
		{"SELECT count(*) WHERE incident_datetime > null", "", "", "", ""},

		// Refused.
		{"SELECT count(*) AS n WHERE incident_datetime > 2023-01-01", "op$>", "number", "timestamp", "incident_datetime"},
		{"SELECT count(*) WHERE incident_datetime = 2023", "op$=", "number", "timestamp", "incident_datetime"},
		{"SELECT count(*) WHERE 2023 < incident_datetime", "op$<", "number", "timestamp", "incident_datetime"},
		{"SELECT count(*) WHERE incident_datetime BETWEEN 2023 AND 2024", "op$between", "number", "timestamp", "incident_datetime"},
		{"SELECT count(*) WHERE incident_datetime > 'yesterday'", "op$>", "text", "timestamp", "incident_datetime"},
		{"SELECT count(*) WHERE police_district = 3", "op$=", "number", "text", "police_district"},
		{"SELECT count(*) WHERE incident_number IN ('1', 2)", "op$in", "number", "text", "incident_number"},
		{"SELECT count(*) WHERE supervisor_district = 'three'", "op$=", "text", "number", "supervisor_district"},
		{"SELECT count(*) WHERE supervisor_district > incident_datetime", "op$>", "floating_timestamp", "number", "incident_datetime"},
		{"SELECT police_district + 1 AS x", "op$+", "text", "number", "police_district"},
		{"SELECT count(*) WHERE incident_number * 2 > 10", "op$*", "text", "number", "incident_number"},
		{"SELECT date_trunc_ym(supervisor_district) AS m", "date_trunc_ym", "number", "timestamp", "supervisor_district"},
		{"SELECT date_extract_y(police_district) AS y", "date_extract_y", "text", "timestamp", "police_district"},
		{"SELECT upper(supervisor_district) AS u", "upper", "number", "text", "supervisor_district"},
		{"SELECT count(*) WHERE supervisor_district LIKE '1%'", "op$like", "number", "text", "supervisor_district"},
		{"SELECT count(*) WHERE police_district AND filed_online", "op$and", "text", "boolean", "police_district"},
		{"SELECT sum(police_district) AS s", "sum", "text", "number", "police_district"},
		{"SELECT max(point) AS p", "max", "point", "ordered", "point"},
		{"SELECT count(*) WHERE filed_online = 'yes'", "op$=", "text", "boolean", "filed_online"},
		{"SELECT date_trunc_ym(incident_datetime) AS m |> SELECT m WHERE m > 2020", "op$>", "number", "timestamp", "m"},
	}
	for _, tt := range tests {
		q, err := Parse(tt.soql)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tt.soql, err)
		}
		err = q.Check(tt.soql, checkFields)
		if tt.fn == "" {
			if err != nil {
				t.Errorf("Check(%q) = %v; want nil", tt.soql, err)
			}
			continue
		}
		var ce *CheckError
		if !errors.As(err, &ce) || ce.Code != CodeTypeMismatch {
			t.Errorf("Check(%q) = %v; want a type mismatch for %s", tt.soql, err, tt.fn)
			continue
		}
		if ce.Name != tt.fn || ce.Type != tt.got || ce.Want != tt.want || ce.Column != tt.column {
			t.Errorf("Check(%q) = {fn %s, got %s, want %s, column %s}; want {%s %s %s %s}",
				tt.soql, ce.Name, ce.Type, ce.Want, ce.Column, tt.fn, tt.got, tt.want, tt.column)
		}
		if ce.Arg == nil {
			t.Errorf("Check(%q): the error has no Arg", tt.soql)
		}
	}
}

// The signatures agree with the aggregate list, and each cites the
// definition in Socrata's sources it was read from.
func TestSignaturesAgreeWithTheAggregateList(t *testing.T) {
	t.Parallel()
	for _, sig := range signatures {
		if !strings.HasPrefix(sig.Name, "op$") && !strings.HasPrefix(sig.Name, "cast$") && sig.Aggregate != IsAggregate(sig.Name) {
			t.Errorf("signature %s: aggregate = %v; IsAggregate(%q) = %v", sig.Name, sig.Aggregate, sig.Name, IsAggregate(sig.Name))
		}
		if !strings.HasPrefix(sig.Source, "F ") {
			t.Errorf("signature %s cites %q; want a definition of SoQLFunctions.scala (F Name:line)", sig.Name, sig.Source)
		}
	}
}
