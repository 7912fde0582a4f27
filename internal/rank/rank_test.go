package rank_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/internal/rank"
)

func day(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }

func idsOf(ix *rank.Index, hits []rank.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, ix.Doc(h.Index).ID)
	}
	return out
}

func TestSearch(t *testing.T) {
	t.Parallel()
	docs := []rank.Doc{
		{ID: "cras-0001", Name: "Traffic Crashes Resulting in Injury", Description: "All crashes with an injury.", UpdatedAt: day(1)},
		{ID: "popo-0001", Name: "Open Spaces Downtown", Description: "Privately Owned Public Open Spaces (POPOS) are plazas and terraces.", UpdatedAt: day(1)},
		{ID: "park-0001", Name: "Parking Citations", Description: "Tickets.", Columns: []rank.Column{{Name: "Fine Amount", FieldName: "fine_amount"}}, UpdatedAt: day(1)},
		{ID: "park-0002", Name: "Parking Meters", Description: "Meters.", UpdatedAt: day(2)},
		{ID: "park-0003", Name: "Parking Lots", Description: "Lots.", UpdatedAt: day(1), PageViews: 100000},
		{ID: "data-0001", Name: "Dataset inventory", Description: "How many datasets there are.", UpdatedAt: day(1)},
		{ID: "film-0001", Name: "Film Locations", Description: "Where movies were shot; location of each scene.", UpdatedAt: day(1)},
		{ID: "film-0002", Name: "Location Permits", Description: "Permits for film shoots at each location.", UpdatedAt: day(1)},
	}
	ix := rank.New(docs)
	tests := []struct {
		name, query string
		want        []string // the first ids, in order
	}{
		{"stemming: crash finds Crashes", "crash injuries", []string{"cras-0001"}},
		{"acronym the catalog spells out", "popos", []string{"popo-0001"}},
		{"question and request words are not searched", "how many show me the list of what", nil},
		{"words are words, not substrings", "ark", nil},
		{"popularity lifts among equals, then recency", "parking", []string{"park-0003", "park-0002", "park-0001"}},
		{"column names count", "fine amount", []string{"park-0001"}},
		{"phrase in the name first", "film locations", []string{"film-0001", "film-0002"}},
		{"a dataset id comes first", "parking park-0001", []string{"park-0001"}},
		{"an id alone", "film-0002", []string{"film-0002"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := idsOf(ix, ix.Search(tt.query, 0))
			if len(got) > len(tt.want) {
				got = got[:len(tt.want)]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Search(%q) first ids (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

// A hit says which fields matched and which columns.
func TestSearchSaysWhy(t *testing.T) {
	t.Parallel()
	ix := rank.New([]rank.Doc{{ID: "park-0001", Name: "Parking Citations", Description: "Tickets with fines.",
		Columns: []rank.Column{{Name: "Citation Number", FieldName: "citation_number"}, {Name: "Fine Amount", FieldName: "fine_amount"}}}})
	hits := ix.Search("citation fines", 1)
	if len(hits) != 1 {
		t.Fatalf("Search: %d hits; want 1", len(hits))
	}
	if want := []string{"name", "columns", "description"}; !slices.Equal(hits[0].Fields, want) {
		t.Errorf("Fields = %v; want %v", hits[0].Fields, want)
	}
	if want := []string{"citation_number", "fine_amount"}; !slices.Equal(hits[0].Columns, want) {
		t.Errorf("Columns = %v; want %v", hits[0].Columns, want)
	}
}

func TestTerms(t *testing.T) {
	t.Parallel()
	got := rank.Terms("How many Police incident_reports were filed in 2023? Show me the owner's data")
	want := []string{"polic", "incid", "report", "file", "2023", "owner"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Terms (-want +got):\n%s", diff)
	}
}

// Signals the portal gives rank too: page views as a prior, tags, column
// values, a misspelt word corrected from the catalog, and a name that says
// the dataset is retired.
func TestSearchSignals(t *testing.T) {
	t.Parallel()
	docs := []rank.Doc{
		{ID: "hate-0001", Name: "Police Department Investigated Hate Crimes", Description: "Hate crimes.", PageViews: 2000, UpdatedAt: day(1)},
		{ID: "inci-0001", Name: "Police Department Incident Reports", Description: "Incidents reported.", Tags: []string{"crime", "sfpd"}, PageViews: 134000, UpdatedAt: day(1),
			Columns: []rank.Column{{Name: "Incident Category", FieldName: "incident_category", Values: []string{"Larceny Theft", "Assault"}}}},
		{ID: "evic-0001", Name: "Eviction Notices", Description: "Notices filed with the Rent Board.", PageViews: 5000, UpdatedAt: day(1)},
		{ID: "insp-0001", Name: "ARCHIVED: Restaurant Inspection Scores", Description: "Scores.", PageViews: 40000, UpdatedAt: day(1)},
		{ID: "insp-0002", Name: "Restaurant Inspections", Description: "Scores of inspections.", PageViews: 3000, UpdatedAt: day(1)},
	}
	ix := rank.New(docs)
	tests := []struct {
		name, query string
		want        string // the first id
	}{
		{"a tag and use beat a word of the name", "crime", "inci-0001"},
		{"an abbreviation the portal tags", "sfpd", "inci-0001"},
		{"a column value", "larceny theft", "inci-0001"},
		{"a misspelt word", "evicitons", "evic-0001"},
		{"a retired dataset after the one in use", "restaurant inspection scores", "insp-0002"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := idsOf(ix, ix.Search(tt.query, 0))
			if len(got) == 0 || got[0] != tt.want {
				t.Errorf("Search(%q) = %v; want %s first", tt.query, got, tt.want)
			}
		})
	}
	hits := ix.Search("sfpd larceny", 1)
	if len(hits) != 1 {
		t.Fatalf("Search(sfpd larceny): %d hits; want 1", len(hits))
	}
	if want := []string{"sfpd"}; !slices.Equal(hits[0].Tags, want) {
		t.Errorf("Tags = %v; want %v", hits[0].Tags, want)
	}
	if want := []rank.ValueMatch{{Column: "incident_category", Value: "Larceny Theft"}}; !slices.Equal(hits[0].Values, want) {
		t.Errorf("Values = %v; want %v", hits[0].Values, want)
	}
}

// A word the catalog does not have finds the catalog's words nearest it
// in GloVe; a word the catalog has many times is not widened.
func TestSearchNearestWords(t *testing.T) {
	t.Parallel()
	docs := []rank.Doc{
		{ID: "bath-0001", Name: "Public Bathrooms and Water Fountains", Description: "Where the bathrooms are.", UpdatedAt: day(1)},
		{ID: "tree-0001", Name: "Street Trees", Description: "Trees the city keeps.", PageViews: 50000, UpdatedAt: day(1)},
		{ID: "crim-0001", Name: "Police Incident Reports", Description: "Each crime reported.", UpdatedAt: day(1)},
	}
	// Eleven datasets say "live", more than the catalog's rare words: a
	// search for it is not widened to its GloVe neighbours ("watch").
	for i := range 11 {
		docs = append(docs, rank.Doc{ID: fmt.Sprintf("live-%04d", i), Name: fmt.Sprintf("Live Counts %d", i), Description: "Updated live.", UpdatedAt: day(1)})
	}
	docs = append(docs, rank.Doc{ID: "watc-0001", Name: "Neighborhood Watch Groups", Description: "Watch groups.", PageViews: 900000, UpdatedAt: day(1)})
	ix := rank.New(docs)
	for _, tt := range []struct{ query, want string }{
		{"public toilets", "bath-0001"},
		{"toilets", "bath-0001"},
		{"criminal activity", "crim-0001"},
	} {
		if got := idsOf(ix, ix.Search(tt.query, 0)); len(got) == 0 || got[0] != tt.want {
			t.Errorf("Search(%q) = %v; want %s first", tt.query, got, tt.want)
		}
	}
	if got := idsOf(ix, ix.Search("live", 0)); slices.Contains(got, "watc-0001") {
		t.Errorf("Search(live) = %v: a word 11 datasets have was widened to its neighbours", got)
	}
}

// An acronym the catalog spells out weighs as little as the words it
// stands for: on a portal where every dataset says "San Francisco", "sf"
// says nothing, and "sf growth" is a search for growth.
func TestSearchAcronymAsCommonAsItsWords(t *testing.T) {
	t.Parallel()
	docs := []rank.Doc{
		{ID: "grow-0001", Name: "Economic Growth Indicators", Description: "Jobs and growth in San Francisco.", UpdatedAt: day(1)},
		{ID: "plnt-0001", Name: "SF Plant Finder", Description: "Plants for San Francisco (SF) gardens.", PageViews: 5000, UpdatedAt: day(1)},
	}
	for i := range 8 {
		docs = append(docs, rank.Doc{ID: fmt.Sprintf("city-%04d", i), Name: fmt.Sprintf("City Records %d", i), Description: "Records of San Francisco.", UpdatedAt: day(1)})
	}
	ix := rank.New(docs)
	if got := idsOf(ix, ix.Search("sf growth", 0)); len(got) == 0 || got[0] != "grow-0001" {
		t.Errorf("Search(sf growth) = %v; want grow-0001 first", got)
	}
}

// A search that names years finds the dataset whose name holds them: the
// historical reports for 2005 to 2015, though the current ones are used
// more; the current ones since 2020, and without years.
func TestSearchYears(t *testing.T) {
	t.Parallel()
	docs := []rank.Doc{
		{ID: "hist-0001", Name: "Police Incident Reports: Historical 2003 to May 2018", Description: "Incidents reported to the police.", PageViews: 20000, UpdatedAt: time.Date(2018, 5, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "curr-0001", Name: "Police Incident Reports: 2018 to Present", Description: "Incidents reported to the police.", PageViews: 90000, UpdatedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)},
		{ID: "zone-2005", Name: "Historic Zoning Districts - 2005", Description: "Zoning districts.", UpdatedAt: day(1)},
		{ID: "zone-2015", Name: "Historic Zoning Districts - 2015", Description: "Zoning districts.", UpdatedAt: day(2)},
		{ID: "zone-0001", Name: "Zoning Districts", Description: "Zoning districts in force.", PageViews: 5000, UpdatedAt: day(1)},
	}
	ix := rank.New(docs)
	for _, tt := range []struct{ query, want string }{
		{"police incidents from 2005 to 2015", "hist-0001"},
		{"police incidents between 2009 and 2012", "hist-0001"},
		{"police incidents since 2020", "curr-0001"},
		{"police incidents", "curr-0001"},
		{"zoning districts", "zone-0001"},
	} {
		if got := idsOf(ix, ix.Search(tt.query, 0)); len(got) == 0 || got[0] != tt.want {
			t.Errorf("Search(%q) = %v; want %s first", tt.query, got, tt.want)
		}
	}
	// A name that names no year is left as it is; of two that do, the
	// one nearer the years asked comes first, though the other is newer.
	got := idsOf(ix, ix.Search("zoning districts between 2004 and 2006", 0))
	if want := []string{"zone-0001", "zone-2005", "zone-2015"}; !slices.Equal(got, want) {
		t.Errorf("Search(zoning districts between 2004 and 2006) = %v; want %v", got, want)
	}
	// "2019 to Present" runs to now also when the catalog gives the
	// dataset no date.
	open := rank.New([]rank.Doc{
		{ID: "clos-open", Name: "Street Closures: 2019 to Present", Description: "Closures.", PageViews: 50000},
		{ID: "clos-none", Name: "Street Closures", Description: "Closures.", PageViews: 10000, UpdatedAt: day(1)},
	})
	if got := idsOf(open, open.Search("street closures since 2022", 0)); len(got) == 0 || got[0] != "clos-open" {
		t.Errorf("Search(street closures since 2022) = %v; want clos-open (2019 to Present, no date) first", got)
	}
}

// A computed region column matches by its name, but a hit does not name
// its field (":@computed_region_…" tells a reader nothing).
func TestSearchNamesNoComputedColumn(t *testing.T) {
	t.Parallel()
	ix := rank.New([]rank.Doc{{ID: "trees-001", Name: "Street Trees", Description: "Trees.", UpdatedAt: day(1), Columns: []rank.Column{
		{Name: "Species", FieldName: "species"},
		{Name: "Current Police Districts", FieldName: ":@computed_region_qgnn_b9vv"},
		{Name: "Police Beat", FieldName: "police_beat"},
	}}})
	hits := ix.Search("police", 0)
	if len(hits) != 1 {
		t.Fatalf("Search(police) = %d hits; want trees-001 by its columns", len(hits))
	}
	if want := []string{"police_beat"}; !slices.Equal(hits[0].Columns, want) {
		t.Errorf("Columns = %q; want %q", hits[0].Columns, want)
	}
}
