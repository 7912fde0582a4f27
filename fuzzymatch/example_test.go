package fuzzymatch_test

import (
	"fmt"

	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
)

func Example() {
	columns := []string{"incident_category", "incident_date", "police_district", "supervisor_district"}
	res, err := fuzzymatch.Correct("SELECT incident_catagory, count(*) WHERE police_distrct = 'MISSION' GROUP BY incident_catagory", columns, fuzzymatch.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Query)
	for _, c := range res.Corrections {
		fmt.Printf("%s → %s\n", c.Original, c.Corrected)
	}
	// Output:
	// SELECT incident_category, count(*) WHERE police_district = 'MISSION' GROUP BY incident_category
	// incident_catagory → incident_category
	// police_distrct → police_district
}

// A name two columns fit equally well is left alone; Result.Closest offers
// the columns that share its words first.
func ExampleClosest() {
	columns := []string{"police_district", "supervisor_district", "point"}
	res, _ := fuzzymatch.Correct("SELECT district", columns, fuzzymatch.Options{})
	fmt.Println(res.Unknown, res.Closest["district"])
	// Output:
	// [district] [police_district supervisor_district point]
}

// A program that has read the query itself passes the names its column
// references use and the aliases it defines; Match decides from those
// names, and Result.Renames says what to rename in its own text or tree.
func ExampleMatch() {
	columns := []string{"incident_category", "incident_date", "police_district"}
	names := fuzzymatch.Names{
		Refs:    []string{"incident_catagory", "police_distrct", "incident_catagory", "distance"},
		Aliases: []string{"n"},
	}
	res := fuzzymatch.Match(names, columns, fuzzymatch.Options{})
	fmt.Println(res.Renames())
	fmt.Println(res.Unknown)
	// Output:
	// map[incident_catagory:incident_category police_distrct:police_district]
	// [distance]
}
