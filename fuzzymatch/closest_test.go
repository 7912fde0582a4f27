package fuzzymatch

import (
	"slices"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/google/go-cmp/cmp"
)

// Correct reports, for each name it leaves alone, the closest columns: the
// same list Closest gives, so a "did you mean" message needs no second
// ranking. The ranking is made once: a decision that ranked every column
// keeps them (decision.all), and Result.closest reads them from there
// rather than ranking again (TestClosestReusesDecisionRanking).
func TestCorrectReportsClosestOnce(t *testing.T) {
	t.Parallel()
	columns := []string{"police_district", "supervisor_district", "incident_category", "incident_date", "point", "fy", "fm", "fv"}

	const text = "SELECT district, weather, fj, incident_catagory WHERE zzzz > 1"
	q, err := soql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	refs, aliases := q.Names()
	res := Match(Names{Refs: refs, Aliases: aliases}, columns, Options{})
	left := append(slices.Clone(res.Unknown), func() (names []string) {
		for _, a := range res.Ambiguous {
			names = append(names, a.Name)
		}
		return
	}()...)
	if len(left) < 3 {
		t.Fatalf("Match(%q) left %v alone; want district, weather, fj and zzzz", text, left)
	}
	for _, name := range left {
		want := Closest(name, columns, ClosestColumns)
		if diff := cmp.Diff(want, res.Closest[name]); diff != "" {
			t.Errorf("Result.Closest[%q] differs from Closest (-want +got):\n%s", name, diff)
		}
	}
	if _, ok := res.Closest["incident_catagory"]; ok {
		t.Errorf("Result.Closest has the corrected name incident_catagory: %v", res.Closest)
	}
}

// A decision about a name nothing is a typo away from keeps every column
// ranked, and Result.closest reports the closest columns from that ranking
// instead of ranking again: given a decision whose ranking names a column
// the matcher does not have, that column is what it reports.
func TestClosestReusesDecisionRanking(t *testing.T) {
	t.Parallel()
	m := newMatcher([]string{"police_district", "incident_date", "point"}, DefaultThreshold)
	d := m.decide("weather")
	if d.verdict != unknown || len(d.all) != 3 {
		t.Fatalf("decide(%q) = verdict %v with %d columns ranked; want unknown with all 3", "weather", d.verdict, len(d.all))
	}
	var res Result
	res.closest(m, "weather", decision{verdict: unknown, all: []candidate{{Column: "weather_station"}}})
	if diff := cmp.Diff([]string{"weather_station"}, res.Closest["weather"]); diff != "" {
		t.Errorf("Result.closest ranked again instead of reading the decision's ranking (-want +got):\n%s", diff)
	}
}
