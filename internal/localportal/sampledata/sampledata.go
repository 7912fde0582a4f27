// Package sampledata generates the product's built-in offline sample data: a
// few datasets shaped like real DataSF ones (same ids, names, categories and
// column field names), filled with deterministic made-up rows. Each row is a
// whole real DataSF row (public domain, ODC-PDDL; data/*.json.gz, whose
// sources testdata/SOURCES.md names), so its columns agree with each other
// (a film's director directed that film, an incident's code, category and
// description belong together, a place's neighborhood is where its point
// is); what is made up is the row's ids and dates, spread over the years and
// to the sizes the product is tested at (250,000 incidents from 1,000 real
// ones), and the films' points, which the real rows lack. The
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
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Version names the generated data: change it whenever a dataset's rows,
// columns or metadata change, so that caches of an older version are built
// again.
const Version = "2026-11-29-real-rows-nullisland"

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

// realData holds the real rows each dataset's rows are drawn from, the
// columns it uses of them only (testdata/SOURCES.md: "Offline snapshot").
//
//go:embed data/*.json.gz
var realData embed.FS

// realRowsOf caches the decoded real rows of each dataset.
var realRowsOf sync.Map // dataset id -> func() []map[string]any

// RealRows returns the real rows dataset id's rows are drawn from: JSON
// objects as the Resource API gives them (strings, booleans), the
// columns the generator uses.
func RealRows(id string) []map[string]any {
	f, _ := realRowsOf.LoadOrStore(id, sync.OnceValue(func() []map[string]any {
		b, err := realData.ReadFile("data/" + id + ".json.gz")
		if err != nil {
			panic("sampledata: no real rows for " + id + ": " + err.Error())
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			panic("sampledata: " + id + ": " + err.Error())
		}
		raw, err := io.ReadAll(zr)
		if err != nil {
			panic("sampledata: " + id + ": " + err.Error())
		}
		var rows []map[string]any
		if err := json.Unmarshal(raw, &rows); err != nil || len(rows) == 0 {
			panic(fmt.Sprintf("sampledata: %s: %d rows, %v", id, len(rows), err))
		}
		return rows
	}))
	return f.(func() []map[string]any)()
}

// str is a real row's text value, and whether it has one.
func str(src map[string]any, k string) (string, bool) {
	v, ok := src[k].(string)
	return v, ok && v != ""
}

// copyText copies the real row's text fields to row.
func copyText(row, src map[string]any, keys ...string) {
	for _, k := range keys {
		if v, ok := str(src, k); ok {
			row[k] = v
		}
	}
}

// num returns a real row's number (given as a string) as a float64.
func num(src map[string]any, k string) (float64, bool) {
	v, ok := str(src, k)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// realTime parses a real row's floating timestamp (with or without
// milliseconds).
func realTime(src map[string]any, k string) (time.Time, bool) {
	v, ok := str(src, k)
	if !ok {
		return time.Time{}, false
	}
	for _, layout := range []string{tsLayout, "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// timeOfDay is how far into its day t is.
func timeOfDay(t time.Time) time.Duration { return t.Sub(t.Truncate(24 * time.Hour)) }

// col is a column of a display name, field name, Views dataTypeName and
// description.
func col(name, fieldName, dataType, description string) socrata.Column {
	return socrata.Column{Name: name, FieldName: fieldName, DataType: dataType, Description: description}
}

// rng returns the generator of row i of the dataset with the given seed.
func rng(seed uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(i)))
}

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

func incidents(rows int) Dataset {
	const seed = 0x783
	base := time.Date(2018, 1, 1, 0, 0, 0, 0, time.UTC)
	days := int(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Sub(base) / (24 * time.Hour))
	real := RealRows("wg3w-h783")
	return Dataset{
		ID:          "wg3w-h783",
		Name:        "Police Department Incident Reports: 2018 to Present",
		Description: "Incident reports filed by the San Francisco Police Department since 2018, one row per incident code (offline snapshot: real incidents of 2018-2019 with made-up ids and dates).",
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
			// A whole real incident, on a day spread over the years (its
			// time of day and the delay of its report kept), with ids of
			// its own.
			r := rng(seed, i)
			src := real[r.IntN(len(real))]
			t0, _ := realTime(src, "incident_datetime")
			at := base.AddDate(0, 0, r.IntN(days)).Add(timeOfDay(t0))
			delay := time.Duration(0)
			if rep, ok := realTime(src, "report_datetime"); ok && rep.After(t0) {
				delay = rep.Sub(t0)
			}
			incidentID := 600000 + i
			code, _ := str(src, "incident_code")
			row := map[string]any{
				"incident_datetime":    ts(at),
				"incident_date":        ts(at.Truncate(24 * time.Hour)),
				"incident_year":        fmt.Sprint(at.Year()),
				"incident_day_of_week": at.Weekday().String(),
				"report_datetime":      ts(at.Add(delay)),
				"row_id":               fmt.Sprintf("%d%s", incidentID, code),
				"incident_id":          fmt.Sprint(incidentID),
				"incident_number":      fmt.Sprintf("%02d%07d", at.Year()%100, i),
			}
			copyText(row, src, "report_type_description", "incident_code", "incident_category", "incident_subcategory",
				"incident_description", "resolution", "intersection", "police_district", "analysis_neighborhood")
			if b, ok := src["filed_online"].(bool); ok {
				row["filed_online"] = b
			}
			if d, ok := num(src, "supervisor_district"); ok {
				row["supervisor_district"] = d
			}
			lat, okLat := num(src, "latitude")
			lon, okLon := num(src, "longitude")
			if okLat && okLon {
				row["latitude"], row["longitude"], row["point"] = lat, lon, geo(lat, lon)
			}
			return row
		},
	}
}

func foodTrucks(rows int) Dataset {
	real := RealRows("rqzj-sfat")
	return Dataset{
		ID:          "rqzj-sfat",
		Name:        "Mobile Food Facility Permit",
		Description: "Mobile food facility (food truck and push cart) permits issued by Public Works (offline snapshot: real permits of 2022 with made-up ids).",
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
			// The real permits in turn, with ids of their own.
			src := real[i%len(real)]
			row := map[string]any{"objectid": float64(1_500_000 + i)}
			copyText(row, src, "applicant", "facilitytype", "locationdescription", "address", "permit", "status",
				"fooditems", "approved", "expirationdate")
			lat, okLat := num(src, "latitude")
			lon, okLon := num(src, "longitude")
			// 34 of the 487 real permits give 0, 0: the portal's way of
			// saying it does not know where the truck is. They have no
			// location here, so that no point lies in the Gulf of Guinea.
			if okLat && okLon && (lat != 0 || lon != 0) {
				row["latitude"], row["longitude"], row["location"] = lat, lon, geo(lat, lon)
			}
			return row
		},
	}
}

func cases311(rows int) Dataset {
	const seed = 0x311
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	days := 5 * 365
	real := RealRows("vw6y-z8j6")
	return Dataset{
		ID:          "vw6y-z8j6",
		Name:        "311 Cases",
		Description: "Cases created by SF311 from calls, the app and the web: street cleaning, graffiti, encampments and more (offline snapshot: real cases of 2020 with made-up ids and dates).",
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
			// A whole real case, opened on a day spread over the years (its
			// time of day and how long it stayed open kept), with an id
			// of its own.
			r := rng(seed, i)
			src := real[r.IntN(len(real))]
			t0, _ := realTime(src, "requested_datetime")
			opened := base.AddDate(0, 0, r.IntN(days)).Add(timeOfDay(t0))
			row := map[string]any{
				"service_request_id": float64(12_000_000 + i),
				"requested_datetime": ts(opened),
			}
			if closed, ok := realTime(src, "closed_date"); ok && !closed.Before(t0) {
				row["closed_date"] = ts(opened.Add(closed.Sub(t0)))
			}
			copyText(row, src, "status_description", "agency_responsible", "service_name", "service_subtype", "address",
				"neighborhoods_sffind_boundaries", "police_district", "source")
			if d, ok := num(src, "supervisor_district"); ok {
				row["supervisor_district"] = d
			}
			lat, okLat := num(src, "lat")
			lon, okLon := num(src, "long")
			if okLat && okLon {
				row["lat"], row["long"], row["point_geom"] = lat, lon, geo(lat, lon)
			}
			return row
		},
	}
}

func films(rows int) Dataset {
	real := RealRows("yitu-d5am")
	return Dataset{
		ID:          "yitu-d5am",
		Name:        "Film Locations in San Francisco",
		Description: "Places in San Francisco where films and TV series were shot (offline snapshot: the real locations of 2015, each place with a made-up point).",
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
			// The real film locations in turn. The real rows have no
			// coordinates: a place's point is made up from its name, the
			// same for every row of that place.
			src := real[i%len(real)]
			row := map[string]any{}
			copyText(row, src, "title", "locations", "production_company", "director", "actor_1")
			if y, ok := num(src, "release_year"); ok {
				row["release_year"] = y
			}
			if place, ok := str(src, "locations"); ok {
				h := fnv.New64a()
				h.Write([]byte(place))
				lat, lon := sfPoint(rand.New(rand.NewPCG(h.Sum64(), 0)))
				row["latitude"], row["longitude"] = lat, lon
			}
			return row
		},
	}
}
