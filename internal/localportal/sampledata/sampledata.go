// Package sampledata generates the product's built-in offline sample data: a
// few datasets shaped like real DataSF ones (same ids, names, categories and
// column field names), filled with deterministic synthetic rows. The
// product's --offline mode serves them from a local portal
// ([github.com/datasf-mcp/datasf-mcp/localportal.StartOffline]) so that every
// tool, the REST endpoint and paging work without a network; the benchmark
// harness generates its datasets from them too. Row i of a dataset is always
// the same value, whatever order rows are generated in.
//
// Imported by package localportal and the benchmarks only: internal, not
// a library API.
package sampledata

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Version names the generated data: change it whenever a dataset's rows,
// columns or metadata change, so that caches of an older version are built
// again.
const Version = "2026-11-1"

// Dataset is one generated dataset.
type Dataset struct {
	ID          string
	Name        string
	Description string
	Category    string
	UpdatedAt   time.Time
	Columns     []socrata.Column // DataType is one of text, number, calendar_date, checkbox, point
	// Rows is the number of rows.
	Rows int
	// Row returns row i (0 <= i < Rows). Values are Go values by column type:
	// text: string; number: float64; calendar_date: a floating timestamp
	// string "2006-01-02T15:04:05.000"; checkbox: bool; point: a GeoJSON
	// object {"type":"Point","coordinates":[lon, lat]}. Absent keys are nulls.
	Row func(i int) map[string]any
}

// Options sizes the sample data. The zero value gives the default sizes.
type Options struct {
	// Scale multiplies every dataset's row count (default 1). Tests use small
	// scales; the product uses 1.
	Scale float64
}

// Datasets returns the sample datasets. The largest, the police incident
// reports, has 250,000 rows at scale 1, so paging through full results is real.
func Datasets(opts Options) []Dataset {
	scale := opts.Scale
	if scale <= 0 {
		scale = 1
	}
	n := func(rows int) int { return max(1, int(float64(rows)*scale)) }
	return []Dataset{
		incidents(n(250_000)),
		foodTrucks(n(480)),
		cases311(n(60_000)),
		films(n(2_000)),
	}
}

// col is a column of a display name, field name, Views dataTypeName and
// description.
func col(name, fieldName, dataType, description string) socrata.Column {
	return socrata.Column{Name: name, FieldName: fieldName, DataType: dataType, Description: description}
}

// rng returns the generator of row i of the dataset with the given seed.
func rng(seed uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(i)))
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// sfPoint returns a point inside San Francisco's bounding box.
func sfPoint(r *rand.Rand) (lat, lon float64) {
	lat = 37.708 + r.Float64()*(37.810-37.708)
	lon = -122.510 + r.Float64()*(-122.370 - -122.510)
	return round6(lat), round6(lon)
}

func round6(f float64) float64 { return float64(int64(f*1e6)) / 1e6 }

func geo(lat, lon float64) map[string]any {
	return map[string]any{"type": "Point", "coordinates": []any{lon, lat}}
}

const tsLayout = "2006-01-02T15:04:05.000"

func ts(t time.Time) string { return t.Format(tsLayout) }

var neighborhoods = []string{
	"Mission", "Tenderloin", "South of Market", "Financial District/South Beach", "Bayview Hunters Point",
	"Outer Richmond", "Sunset/Parkside", "Castro/Upper Market", "Nob Hill", "Western Addition",
	"Hayes Valley", "North Beach", "Chinatown", "Marina", "Potrero Hill", "Excelsior", "Noe Valley",
	"Haight Ashbury", "Pacific Heights", "Bernal Heights",
}

var districts = []string{"Central", "Southern", "Bayview", "Mission", "Northern", "Park", "Richmond", "Ingleside", "Taraval", "Tenderloin"}

var streets = []string{"MARKET ST", "MISSION ST", "VALENCIA ST", "GEARY BLVD", "BROADWAY", "CALIFORNIA ST",
	"3RD ST", "FOLSOM ST", "HOWARD ST", "POLK ST", "VAN NESS AVE", "DIVISADERO ST", "IRVING ST", "TARAVAL ST"}

func address(r *rand.Rand) string {
	return fmt.Sprintf("%d %s", 1+r.IntN(3000), pick(r, streets))
}

type incidentKind struct{ category, subcategory, description, code string }

var incidentKinds = []incidentKind{
	{"Larceny Theft", "Larceny - From Vehicle", "Theft, From Locked Vehicle, >$950", "06244"},
	{"Larceny Theft", "Larceny Theft - Other", "Theft, Other Property, $50-$200", "06374"},
	{"Larceny Theft", "Larceny Theft - Shoplifting", "Theft, Shoplifting, $50-$200", "06364"},
	{"Malicious Mischief", "Vandalism", "Malicious Mischief, Vandalism to Property", "28150"},
	{"Assault", "Simple Assault", "Battery", "04134"},
	{"Assault", "Aggravated Assault", "Assault, Aggravated, W/ Other Weapon", "04014"},
	{"Burglary", "Burglary - Residential", "Burglary, Residence, Forcible Entry", "05011"},
	{"Motor Vehicle Theft", "Motor Vehicle Theft", "Vehicle, Stolen, Auto", "07021"},
	{"Non-Criminal", "Other", "Lost Property", "71000"},
	{"Fraud", "Fraud", "Fraud, Access Card", "09320"},
	{"Robbery", "Robbery - Street", "Robbery, W/ Force", "03401"},
	{"Drug Offense", "Drug Violation", "Methamphetamine, Possession", "16620"},
	{"Warrant", "Warrant", "Warrant Arrest, Enroute To Outside Jurisdiction", "62050"},
	{"Other Miscellaneous", "Other", "Trespassing", "27170"},
}

var resolutions = []string{"Open or Active", "Open or Active", "Open or Active", "Cite or Arrest Adult", "Unfounded", "Exceptional Adult"}

func incidents(rows int) Dataset {
	const seed = 0x783
	base := time.Date(2018, 1, 1, 0, 0, 0, 0, time.UTC)
	span := int64(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Sub(base) / time.Minute)
	return Dataset{
		ID:          "wg3w-h783",
		Name:        "Police Department Incident Reports: 2018 to Present",
		Description: "Incident reports filed by the San Francisco Police Department since 2018, one row per incident code (synthetic offline snapshot shaped like the real dataset).",
		Category:    "Public Safety",
		UpdatedAt:   time.Date(2025, 1, 1, 17, 46, 42, 0, time.UTC),
		Columns: []socrata.Column{
			col("Incident Datetime", "incident_datetime", "calendar_date", "When the incident occurred"),
			col("Incident Date", "incident_date", "calendar_date", "The date the incident occurred"),
			col("Incident Year", "incident_year", "text", "The year the incident occurred"),
			col("Incident Day of Week", "incident_day_of_week", "text", "The day of week the incident occurred"),
			col("Report Datetime", "report_datetime", "calendar_date", "When the report was filed"),
			col("Row ID", "row_id", "text", "Unique row identifier"),
			col("Incident ID", "incident_id", "text", "System generated incident identifier"),
			col("Incident Number", "incident_number", "text", "The number issued on the report"),
			col("Report Type Description", "report_type_description", "text", "Initial, supplement, vehicle or coplogic report"),
			col("Filed Online", "filed_online", "checkbox", "Whether the report was filed online"),
			col("Incident Code", "incident_code", "text", "Incident code"),
			col("Incident Category", "incident_category", "text", "Category mapped to the incident code"),
			col("Incident Subcategory", "incident_subcategory", "text", "Subcategory mapped to the incident code"),
			col("Incident Description", "incident_description", "text", "Description of the incident code"),
			col("Resolution", "resolution", "text", "The resolution of the incident at the time of the report"),
			col("Intersection", "intersection", "text", "The nearest intersection"),
			col("Police District", "police_district", "text", "The police district where the incident occurred"),
			col("Analysis Neighborhood", "analysis_neighborhood", "text", "Neighborhood of the incident"),
			col("Supervisor District", "supervisor_district", "number", "Supervisor district (1-11)"),
			col("Latitude", "latitude", "number", "Latitude"),
			col("Longitude", "longitude", "number", "Longitude"),
			col("Point", "point", "point", "Location as a point"),
		},
		Rows: rows,
		Row: func(i int) map[string]any {
			r := rng(seed, i)
			at := base.Add(time.Duration(r.Int64N(span)) * time.Minute)
			k := pick(r, incidentKinds)
			incidentID := 600000 + i
			row := map[string]any{
				"incident_datetime":       ts(at),
				"incident_date":           ts(at.Truncate(24 * time.Hour)),
				"incident_year":           fmt.Sprint(at.Year()),
				"incident_day_of_week":    at.Weekday().String(),
				"report_datetime":         ts(at.Add(time.Duration(r.IntN(72*60)) * time.Minute)),
				"row_id":                  fmt.Sprintf("%d%s", incidentID, k.code),
				"incident_id":             fmt.Sprint(incidentID),
				"incident_number":         fmt.Sprintf("%d%06d", at.Year()%100, r.IntN(1_000_000)),
				"report_type_description": pick(r, []string{"Initial", "Initial", "Coplogic Initial", "Vehicle Initial", "Initial Supplement"}),
				"filed_online":            r.IntN(10) == 0,
				"incident_code":           k.code,
				"incident_category":       k.category,
				"incident_subcategory":    k.subcategory,
				"incident_description":    k.description,
				"resolution":              pick(r, resolutions),
				"police_district":         pick(r, districts),
			}
			if r.IntN(20) != 0 { // about 5% of real incidents have no location
				lat, lon := sfPoint(r)
				row["intersection"] = pick(r, streets) + " \\ " + pick(r, streets)
				row["analysis_neighborhood"] = pick(r, neighborhoods)
				row["supervisor_district"] = float64(1 + r.IntN(11))
				row["latitude"] = lat
				row["longitude"] = lon
				row["point"] = geo(lat, lon)
			}
			return row
		},
	}
}

var vendors = []string{"Senor Sisig", "The Chai Cart", "Off the Grid Services", "Tacos El Primo", "Halal Cart of SF",
	"Curry Up Now", "Kettle Corn Star", "Bay Area Dogs", "Natan's Catering", "Brazuca Grill", "Philz Truck", "May Catering"}

var foods = []string{"Tacos: burritos: quesadillas: soda", "Filipino fusion: sisig: rice plates", "Hot dogs: pretzels: soda: water",
	"Chai: coffee: pastries", "Kettle corn: lemonade", "Cold truck: sandwiches: chips: candy: drinks", "Indian street food: curry: naan"}

func foodTrucks(rows int) Dataset {
	const seed = 0x5fa7
	return Dataset{
		ID:          "rqzj-sfat",
		Name:        "Mobile Food Facility Permit",
		Description: "Mobile food facility (food truck and push cart) permits issued by Public Works (synthetic offline snapshot shaped like the real dataset).",
		Category:    "Economy and Community",
		UpdatedAt:   time.Date(2024, 12, 18, 16, 8, 36, 0, time.UTC),
		Columns: []socrata.Column{
			col("locationid", "objectid", "number", "Location id"),
			col("Applicant", "applicant", "text", "Name of the permit holder"),
			col("FacilityType", "facilitytype", "text", "Truck or Push Cart"),
			col("LocationDescription", "locationdescription", "text", "Description of the location"),
			col("Address", "address", "text", "Street address"),
			col("permit", "permit", "text", "Permit number"),
			col("Status", "status", "text", "APPROVED, REQUESTED, EXPIRED, SUSPEND or ISSUED"),
			col("FoodItems", "fooditems", "text", "What is sold"),
			col("Latitude", "latitude", "number", "Latitude"),
			col("Longitude", "longitude", "number", "Longitude"),
			col("Approved", "approved", "calendar_date", "When the permit was approved"),
			col("ExpirationDate", "expirationdate", "calendar_date", "When the permit expires"),
			col("Location", "location", "point", "Location as a point"),
		},
		Rows: rows,
		Row: func(i int) map[string]any {
			r := rng(seed, i)
			lat, lon := sfPoint(r)
			approved := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(900))
			row := map[string]any{
				"objectid":            float64(1_500_000 + i),
				"applicant":           pick(r, vendors),
				"facilitytype":        pick(r, []string{"Truck", "Truck", "Truck", "Push Cart"}),
				"locationdescription": pick(r, streets) + ": " + pick(r, streets),
				"address":             address(r),
				"permit":              fmt.Sprintf("%02dMFF-%05d", 21+r.IntN(3), r.IntN(100000)),
				"status":              pick(r, []string{"APPROVED", "APPROVED", "REQUESTED", "EXPIRED", "SUSPEND", "ISSUED"}),
				"fooditems":           pick(r, foods),
				"latitude":            lat,
				"longitude":           lon,
				"location":            geo(lat, lon),
			}
			if r.IntN(4) != 0 {
				row["approved"] = ts(approved)
				row["expirationdate"] = ts(approved.AddDate(1, 0, 0))
			}
			return row
		},
	}
}

var services = []struct{ name, subtype, agency string }{
	{"Street and Sidewalk Cleaning", "Bulky Items", "Recology_Abandoned"},
	{"Street and Sidewalk Cleaning", "General Cleaning", "DPW Ops Queue"},
	{"Graffiti", "Graffiti on Building_commercial", "DPW Ops Queue"},
	{"Encampments", "Encampment Reports", "HSOC Queue"},
	{"Abandoned Vehicle", "Abandoned Vehicle - Car4door", "DPT Abandoned Vehicles Low Queue"},
	{"Parking Enforcement", "Blocking_Driveway_Cite_Only", "DPT Parking Queue"},
	{"Streetlights", "Streetlight - Light_Burnt_Out", "PUC Streetlights Queue"},
	{"Sewer Issues", "Sewage_back_up", "PUC Sewer Ops"},
	{"Tree Maintenance", "Overgrown_Tree", "DPW BUF Queue"},
	{"Noise Report", "other_excessive_noise", "Entertainment Commission"},
}

func cases311(rows int) Dataset {
	const seed = 0x311
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	span := int64(5 * 365 * 24 * 60)
	return Dataset{
		ID:          "vw6y-z8j6",
		Name:        "311 Cases",
		Description: "Cases created by SF311 from calls, the app and the web: street cleaning, graffiti, encampments and more (synthetic offline snapshot shaped like the real dataset).",
		Category:    "City Infrastructure",
		UpdatedAt:   time.Date(2025, 1, 1, 16, 58, 39, 0, time.UTC),
		Columns: []socrata.Column{
			col("CaseID", "service_request_id", "number", "Case id"),
			col("Opened", "requested_datetime", "calendar_date", "When the case was opened"),
			col("Closed", "closed_date", "calendar_date", "When the case was closed"),
			col("Status", "status_description", "text", "Open or Closed"),
			col("Responsible Agency", "agency_responsible", "text", "Agency the case was routed to"),
			col("Category", "service_name", "text", "Service category"),
			col("Request Type", "service_subtype", "text", "Request type"),
			col("Address", "address", "text", "Street address"),
			col("Supervisor District", "supervisor_district", "number", "Supervisor district"),
			col("Neighborhood", "neighborhoods_sffind_boundaries", "text", "Neighborhood"),
			col("Police District", "police_district", "text", "Police district"),
			col("Source", "source", "text", "Phone, Mobile/Open311, Web"),
			col("Latitude", "lat", "number", "Latitude"),
			col("Longitude", "long", "number", "Longitude"),
			col("Point", "point_geom", "point", "Location as a point"),
		},
		Rows: rows,
		Row: func(i int) map[string]any {
			r := rng(seed, i)
			s := pick(r, services)
			opened := base.Add(time.Duration(r.Int64N(span)) * time.Minute)
			lat, lon := sfPoint(r)
			row := map[string]any{
				"service_request_id":              float64(12_000_000 + i),
				"requested_datetime":              ts(opened),
				"status_description":              "Open",
				"agency_responsible":              s.agency,
				"service_name":                    s.name,
				"service_subtype":                 s.subtype,
				"address":                         address(r) + ", SAN FRANCISCO, CA",
				"supervisor_district":             float64(1 + r.IntN(11)),
				"neighborhoods_sffind_boundaries": pick(r, neighborhoods),
				"police_district":                 pick(r, districts),
				"source":                          pick(r, []string{"Phone", "Mobile/Open311", "Mobile/Open311", "Web"}),
				"lat":                             lat,
				"long":                            lon,
				"point_geom":                      geo(lat, lon),
			}
			if r.IntN(5) != 0 {
				row["status_description"] = "Closed"
				row["closed_date"] = ts(opened.Add(time.Duration(1+r.IntN(30*24*60)) * time.Minute))
			}
			return row
		},
	}
}

var filmTitles = []string{"Vertigo", "Bullitt", "The Rock", "Mrs. Doubtfire", "Dirty Harry", "Milk", "Zodiac",
	"The Pursuit of Happyness", "Blue Jasmine", "Ant-Man", "Sense8", "The Matrix Resurrections", "Venom", "Always Be My Maybe"}

var filmPlaces = []string{"Golden Gate Bridge", "Coit Tower", "Alcatraz Island", "Lombard Street", "City Hall",
	"Ferry Building", "Palace of Fine Arts", "Chinatown", "Fisherman's Wharf", "Twin Peaks", "Embarcadero Center"}

func films(rows int) Dataset {
	const seed = 0xf11
	return Dataset{
		ID:          "yitu-d5am",
		Name:        "Film Locations in San Francisco",
		Description: "Places in San Francisco where films and TV series were shot (synthetic offline snapshot shaped like the real dataset).",
		Category:    "Culture and Recreation",
		UpdatedAt:   time.Date(2024, 12, 18, 22, 30, 50, 0, time.UTC),
		Columns: []socrata.Column{
			col("Title", "title", "text", "Title of the production"),
			col("Release Year", "release_year", "number", "Year of release"),
			col("Locations", "locations", "text", "Filming location"),
			col("Production Company", "production_company", "text", "Production company"),
			col("Director", "director", "text", "Director"),
			col("Actor 1", "actor_1", "text", "Lead actor"),
			col("Latitude", "latitude", "number", "Latitude"),
			col("Longitude", "longitude", "number", "Longitude"),
		},
		Rows: rows,
		Row: func(i int) map[string]any {
			r := rng(seed, i)
			lat, lon := sfPoint(r)
			t := r.IntN(len(filmTitles))
			return map[string]any{
				"title":              filmTitles[t],
				"release_year":       float64(1958 + (t*5)%66),
				"locations":          pick(r, filmPlaces),
				"production_company": pick(r, []string{"Paramount Pictures", "Warner Bros.", "Netflix", "Focus Features", "Marvel Studios"}),
				"director":           pick(r, []string{"Alfred Hitchcock", "Peter Yates", "Michael Bay", "Don Siegel", "Gus Van Sant", "David Fincher"}),
				"actor_1":            pick(r, []string{"James Stewart", "Steve McQueen", "Sean Connery", "Robin Williams", "Clint Eastwood", "Sean Penn"}),
				"latitude":           lat,
				"longitude":          lon,
			}
		},
	}
}
