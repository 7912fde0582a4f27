package fuzzymatch

import (
	"slices"
	"sync"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/google/go-cmp/cmp"
)

// Correct ranks the columns against each name it leaves alone once,
// and reports the closest columns from that ranking: the same list Closest
// gives, so a "did you mean" message needs no second ranking.
func TestCorrectReportsClosestOnce(t *testing.T) {
	columns := []string{"police_district", "supervisor_district", "incident_category", "incident_date", "point", "fy", "fm", "fv"}
	var mu sync.Mutex
	ranked := map[string]int{}
	rankedAll = func(name string) { mu.Lock(); ranked[name]++; mu.Unlock() }
	t.Cleanup(func() { rankedAll = nil })

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
		if ranked[name] != 1 {
			t.Errorf("Match ranked every column against %q %d times; want 1", name, ranked[name])
		}
		want := Closest(name, columns, ClosestColumns)
		if diff := cmp.Diff(want, res.Closest[name]); diff != "" {
			t.Errorf("Result.Closest[%q] differs from Closest (-want +got):\n%s", name, diff)
		}
	}
	if _, ok := res.Closest["incident_catagory"]; ok {
		t.Errorf("Result.Closest has the corrected name incident_catagory: %v", res.Closest)
	}
}
