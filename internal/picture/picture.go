// Package picture draws a query result's chart or map as a PNG, for MCP
// hosts that cannot show the result viewer app (query_datasf's image
// argument). It chooses the picture as the viewer does
// (dualresp/viewer/src/charts.js): a measure by a time column is a line in
// time order with its gaps left open; a measure by analysis_neighborhood,
// supervisor_district, police_district or zip_code a choropleth of San
// Francisco's neighborhoods, districts or ZIP codes; a measure by another
// column bars of the largest groups; rows with a point column points on the
// neighborhoods. The boundaries are the viewer's (viewer.Neighborhoods,
// viewer.SupervisorDistricts, viewer.PoliceDistricts, viewer.ZIPCodes).
//
// It draws with gonum.org/v1/plot, the maintained Go plotting library, on
// its raster backend (vgimg), rather than rasterising by hand. Imported by
// datasf.
package picture

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/datasf-mcp/datasf-mcp/dualresp/viewer"
)

// Bounds of a picture: the rows it reads, and its size.
const (
	MaxGroups = 500  // rows of a grouped result drawn (a line, bars, areas)
	MaxPoints = 2000 // rows of a result with points drawn
	maxBars   = 30
	// MaxBytes bounds the PNG; a picture over it is not returned.
	MaxBytes = 256 << 10
	width    = 8 * vg.Inch // 768 px at 96 dpi
	height   = 4.5 * vg.Inch
	dpi      = 96
)

// Kinds of picture.
const (
	Line   = "line"
	Bars   = "bars"
	Points = "points"
	Areas  = "areas"
)

// Spec is what to draw: its kind and the columns it draws.
type Spec struct {
	Kind  string
	Value string // the measure (line, bars, areas)
	Label string // the dimension (line, bars, areas)
	Set   string // the areas' set (areas): an AreaSets key
	Point string // the point column (points)
}

var (
	measure  = regexp.MustCompile(`(?i)^(count|sum|n|total)(_|$)|^(count|sum)`)
	isoTime  = regexp.MustCompile(`^(\d{4})-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?)?$`)
	district = regexp.MustCompile(`(?i)^(?:(?:supervisor(?:ial)?\s+)?district\s+)?0*(\d{1,2})(?:\.0*)?$`)
	zip      = regexp.MustCompile(`^(\d{5})(?:\.0*|-\d{4})?$`)
)

// An areaSet is a kind of area a choropleth is drawn for: the columns that
// name one, its boundaries, and how a group's value is matched to an area's
// name (false: no area). A set with named is also chosen for a column of
// that name (a bare "district") when at least half of its values name one
// of its areas.
type areaSet struct {
	set        string
	column     *regexp.Regexp
	named      *regexp.Regexp
	noun       string
	boundaries func() []byte
	key        func(v any) (string, bool)
}

// areaSets are the viewer's AREA_SETS (charts.js).
var areaSets = []areaSet{
	{"analysis_neighborhood", regexp.MustCompile(`(?i)^(analysis_?neighborhoods?|neighborhoods?_analysis(_boundaries)?|analysis neighborhood)$`), nil,
		"analysis neighborhood", viewer.Neighborhoods, nameKey},
	{"supervisor_district", regexp.MustCompile(`(?i)^(supervisor_?districts?|supervisor district|sup_?dist(rict)?)$`), nil,
		"supervisor district", viewer.SupervisorDistricts, districtKey},
	{"police_district", regexp.MustCompile(`(?i)^(police_?districts?|police district|pd_?district)$`), regexp.MustCompile(`(?i)^district$`),
		"police district", viewer.PoliceDistricts, nameKey},
	{"zip_code", regexp.MustCompile(`(?i)^(zip_?codes?|zip code|zipcode|zip|postal_?code|postcode)$`), nil,
		"ZIP code", viewer.ZIPCodes, zipKey},
}

// nameKey matches a name case-insensitively ("Tenderloin", "TENDERLOIN").
func nameKey(v any) (string, bool) {
	s, ok := v.(string)
	return strings.ToLower(strings.TrimSpace(s)), ok
}

// zipKey reads a ZIP code from 94110, "94110", "94110.0" or "94110-1234".
func zipKey(v any) (string, bool) { return numberKey(v, zip) }

// setFor returns the set a column of this name and these values is drawn
// for.
func setFor(label string, vals []any) (areaSet, bool) {
	if i := slices.IndexFunc(areaSets, func(a areaSet) bool { return a.column.MatchString(label) }); i >= 0 {
		return areaSets[i], true
	}
	for _, a := range areaSets {
		if a.named == nil || !a.named.MatchString(label) || len(vals) == 0 {
			continue
		}
		areas, err := readAreas(a.boundaries())
		if err != nil {
			continue
		}
		names := map[string]bool{}
		for _, ar := range areas {
			if k, ok := a.key(ar.name); ok {
				names[k] = true
			}
		}
		n := 0
		for _, v := range vals {
			if k, ok := a.key(v); ok && names[k] {
				n++
			}
		}
		if 2*n >= len(vals) {
			return a, true
		}
	}
	return areaSet{}, false
}

// districtKey reads a supervisor district's number from 3, "3", "03", "3.0"
// or "District 3".
func districtKey(v any) (string, bool) { return numberKey(v, district) }

// numberKey reads the first group of re from a value given as text or as
// a JSON number.
func numberKey(v any, re *regexp.Regexp) (string, bool) {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return "", false
	}
	m := re.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", false
	}
	return m[1], true
}

func setOf(name string) areaSet {
	for _, a := range areaSets {
		if a.set == name {
			return a
		}
	}
	return areaSets[0]
}

// Choose returns what to draw for a result of the given columns, from its
// first rows; ok is false when the result has no picture.
func Choose(columns []string, rows []map[string]any) (Spec, bool) {
	for _, c := range columns {
		if n := present(rows, c); len(n) > 0 && !slices.ContainsFunc(n, func(v any) bool { _, _, ok := point(v); return !ok }) {
			return Spec{Kind: Points, Point: c}, true
		}
	}
	var nums []string
	for _, c := range columns {
		if measure.MatchString(c) {
			nums = append(nums, c)
		}
	}
	if len(columns) != 2 || len(nums) != 1 {
		return Spec{}, false
	}
	label := columns[0]
	if label == nums[0] {
		label = columns[1]
	}
	s := Spec{Value: nums[0], Label: label, Kind: Bars}
	if v := present(rows, label); len(v) > 0 && !slices.ContainsFunc(v, func(v any) bool { t, ok := v.(string); return !ok || !isoTime.MatchString(t) }) {
		s.Kind = Line
	} else if a, ok := setFor(label, present(rows, label)); ok {
		s.Kind, s.Set = Areas, a.set
	}
	return s, true
}

func present(rows []map[string]any, col string) []any {
	var out []any
	for _, r := range rows {
		if v, ok := r[col]; ok && v != nil && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// point returns a GeoJSON point's longitude and latitude.
func point(v any) (lon, lat float64, ok bool) {
	m, _ := v.(map[string]any)
	c, _ := m["coordinates"].([]any)
	if m["type"] != "Point" || len(c) < 2 {
		return 0, 0, false
	}
	lon, ok1 := c[0].(float64)
	lat, ok2 := c[1].(float64)
	return lon, lat, ok1 && ok2
}

func number(v any) float64 {
	switch v := v.(type) {
	case float64:
		return v
	case string:
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	return 0
}

func label(v any) string {
	switch v := v.(type) {
	case nil:
		return "(null)"
	case string:
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Drawing is a picture: the PNG and the sentence that says what it shows
// (the viewer's aria-label).
type Drawing struct {
	PNG         []byte
	Description string
}

// Draw draws rows as spec says. period is the query's date_trunc_* period
// ("year", "month", "day"), or "" to take it from the values.
func Draw(spec Spec, rows []map[string]any, period string) (Drawing, error) {
	p := plot.New()
	var desc string
	var err error
	switch spec.Kind {
	case Line:
		desc, err = drawLine(p, spec, rows, period)
	case Bars:
		desc, err = drawBars(p, spec, rows)
	case Points:
		desc, err = drawPoints(p, spec, rows)
	case Areas:
		desc, err = drawAreas(p, spec, rows)
	default:
		err = fmt.Errorf("no picture of kind %q", spec.Kind)
	}
	if err != nil {
		return Drawing{}, err
	}
	p.Title.Text, _, _ = strings.Cut(desc, ";") // the notes are said with the picture
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))}
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return Drawing{}, err
	}
	if b.Len() > MaxBytes {
		return Drawing{}, fmt.Errorf("the picture is %d bytes, over the bound of %d", b.Len(), MaxBytes)
	}
	return Drawing{PNG: b.Bytes(), Description: desc}, nil
}

var errEmpty = errors.New("nothing to draw")

// ---- a line over time -----------------------------------------------------------

// Point is a point of a line: its period's index and label, and its value.
type Point struct {
	Index float64
	Label string
	Value float64
}

// LinePoints returns the points of a line in time order, whatever the
// rows' order, with the period used; rows whose time is null or
// unreadable are left out.
func LinePoints(spec Spec, rows []map[string]any, period string) ([]Point, string) {
	type tv struct {
		t time.Time
		v float64
	}
	var ts []tv
	for _, r := range rows {
		s, _ := r[spec.Label].(string)
		if t, ok := parseTime(s); ok {
			ts = append(ts, tv{t, number(r[spec.Value])})
		}
	}
	if period == "" {
		period = "month"
		for _, x := range ts {
			if x.t.Hour() != 0 || x.t.Minute() != 0 || x.t.Second() != 0 {
				period = "time"
				break
			}
			if x.t.Day() != 1 {
				period = "day"
			}
		}
		if period == "month" && len(ts) > 1 && !slices.ContainsFunc(ts, func(x tv) bool { return x.t.Month() != 1 }) {
			period = "year"
		}
	}
	pts := make([]Point, 0, len(ts))
	for _, x := range ts {
		p := Point{Value: x.v}
		switch period {
		case "year":
			p.Index, p.Label = float64(x.t.Year()), x.t.Format("2006")
		case "month":
			p.Index, p.Label = float64(x.t.Year()*12+int(x.t.Month())-1), x.t.Format("2006-01")
		case "day":
			p.Index, p.Label = math.Floor(float64(x.t.Unix())/86400), x.t.Format("2006-01-02")
		default:
			p.Index, p.Label = float64(x.t.Unix()), x.t.Format("2006-01-02 15:04")
		}
		pts = append(pts, p)
	}
	slices.SortStableFunc(pts, func(a, b Point) int { return cmp.Compare(a.Index, b.Index) })
	return pts, period
}

// parseTime reads an ISO date or timestamp (a floating one as UTC).
func parseTime(s string) (time.Time, bool) {
	m := isoTime.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	part := func(i, def int) int {
		if m[i] == "" {
			return def
		}
		n, _ := strconv.Atoi(m[i])
		return n
	}
	return time.Date(part(1, 0), time.Month(part(2, 1)), part(3, 1), part(4, 0), part(5, 0), part(6, 0), 0, time.UTC), true
}

func drawLine(p *plot.Plot, spec Spec, rows []map[string]any, period string) (string, error) {
	pts, period := LinePoints(spec, rows, period)
	if len(pts) == 0 {
		return "", errEmpty
	}
	// One line a run of consecutive periods: a gap stays open.
	gaps := 0
	var run plotter.XYs
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		l, s, err := plotter.NewLinePoints(run)
		if err != nil {
			return err
		}
		l.Color = color.RGBA{59, 111, 182, 255}
		l.Width = vg.Points(2)
		s.Color = l.Color
		s.Radius = vg.Points(2)
		p.Add(l, s)
		run = nil
		return nil
	}
	for i, pt := range pts {
		if i > 0 && period != "time" && pt.Index-pts[i-1].Index > 1 {
			gaps++
			if err := flush(); err != nil {
				return "", err
			}
		}
		run = append(run, plotter.XY{X: pt.Index, Y: pt.Value})
	}
	if err := flush(); err != nil {
		return "", err
	}
	var ticks plot.ConstantTicks
	step := max(1, len(pts)/8)
	for i := 0; i < len(pts); i += step {
		ticks = append(ticks, plot.Tick{Value: pts[i].Index, Label: pts[i].Label})
	}
	p.X.Tick.Marker = ticks
	p.X.Label.Text = period
	p.Y.Label.Text = spec.Value
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	desc := fmt.Sprintf("line chart of %s by %s, %s from %s to %s", spec.Value, period, plural(len(pts), "point"), pts[0].Label, pts[len(pts)-1].Label)
	if gaps > 0 {
		desc += ", " + plural(gaps, "gap") + " with no rows"
	}
	return desc, nil
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + one + "s"
}

// ---- bars -----------------------------------------------------------------------

func drawBars(p *plot.Plot, spec Spec, rows []map[string]any) (string, error) {
	type bar struct {
		label string
		value float64
	}
	var bars []bar
	for _, r := range rows {
		bars = append(bars, bar{label(r[spec.Label]), number(r[spec.Value])})
	}
	if len(bars) == 0 {
		return "", errEmpty
	}
	slices.SortStableFunc(bars, func(a, b bar) int { return cmp.Compare(b.value, a.value) })
	bars = bars[:min(len(bars), maxBars)]
	slices.Reverse(bars) // the largest on top
	values := make(plotter.Values, len(bars))
	names := make([]string, len(bars))
	for i, b := range bars {
		values[i] = b.value
		names[i] = b.label
		if len(names[i]) > 28 {
			names[i] = names[i][:27] + "…"
		}
	}
	// Bars about two thirds of their row, at most 24pt thick.
	bc, err := plotter.NewBarChart(values, min(vg.Points(24), (height-vg.Inch)/vg.Length(len(bars))*2/3))
	if err != nil {
		return "", err
	}
	bc.Horizontal = true
	bc.Color = color.RGBA{59, 111, 182, 255}
	bc.LineStyle.Width = 0
	p.Add(bc)
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.7, float64(len(bars))-0.3 // half a row around the bars
	p.X.Label.Text = spec.Value
	p.X.Min = 0
	return fmt.Sprintf("bar chart of %s by %s, %s", spec.Value, spec.Label, plural(len(bars), "bar")), nil
}

// ---- maps -----------------------------------------------------------------------

type area struct {
	name  string
	rings []plotter.XYs
}

// neighborhoods reads the viewer's neighborhoods.
func neighborhoods() ([]area, error) { return readAreas(viewer.Neighborhoods()) }

// readAreas reads boundaries: a GeoJSON FeatureCollection whose features
// have the property "name".
func readAreas(b []byte) ([]area, error) {
	var fc struct {
		Features []struct {
			Properties struct{ Name string } `json:"properties"`
			Geometry   struct {
				Type        string          `json:"type"`
				Coordinates json.RawMessage `json:"coordinates"`
			} `json:"geometry"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		return nil, err
	}
	var out []area
	for _, f := range fc.Features {
		var polys [][][][2]float64
		if f.Geometry.Type == "Polygon" {
			var rings [][][2]float64
			if err := json.Unmarshal(f.Geometry.Coordinates, &rings); err != nil {
				return nil, err
			}
			polys = [][][][2]float64{rings}
		} else if err := json.Unmarshal(f.Geometry.Coordinates, &polys); err != nil {
			return nil, err
		}
		a := area{name: f.Properties.Name}
		for _, rings := range polys {
			for _, ring := range rings {
				xys := make(plotter.XYs, len(ring))
				for i, c := range ring {
					xys[i] = plotter.XY{X: c[0], Y: c[1]}
				}
				a.rings = append(a.rings, xys)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// box is the city's box, with a margin.
func box(areas []area) (minX, minY, maxX, maxY float64) {
	minX, minY, maxX, maxY = math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, a := range areas {
		for _, r := range a.rings {
			for _, c := range r {
				minX, maxX = min(minX, c.X), max(maxX, c.X)
				minY, maxY = min(minY, c.Y), max(maxY, c.Y)
			}
		}
	}
	const margin = 0.01
	return minX - margin, minY - margin, maxX + margin, maxY + margin
}

func mapPlot(p *plot.Plot, areas []area, fill func(area) color.Color) error {
	for _, a := range areas {
		rings := make([]plotter.XYer, len(a.rings))
		for i, r := range a.rings {
			rings[i] = r
		}
		poly, err := plotter.NewPolygon(rings...)
		if err != nil {
			return err
		}
		poly.Color = fill(a)
		poly.LineStyle.Color = color.RGBA{200, 205, 214, 255}
		poly.LineStyle.Width = vg.Points(0.5)
		p.Add(poly)
	}
	minX, minY, maxX, maxY := box(areas)
	// Keep the city's shape: degrees of longitude are shorter here.
	k := math.Cos((minY + maxY) / 2 * math.Pi / 180)
	w, h := (maxX-minX)*k, maxY-minY
	aspect := float64(width) / float64(height-0.5*vg.Inch)
	if w/h < aspect {
		pad := (h*aspect - w) / k / 2
		minX, maxX = minX-pad, maxX+pad
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = minX, maxX, minY, maxY
	p.HideAxes()
	return nil
}

// Located counts where a result's points fall.
type Located struct{ In, Swapped, Outside, Missing int }

func drawPoints(p *plot.Plot, spec Spec, rows []map[string]any) (string, error) {
	areas, err := neighborhoods()
	if err != nil {
		return "", err
	}
	minX, minY, maxX, maxY := box(areas)
	in := func(x, y float64) bool { return x >= minX && x <= maxX && y >= minY && y <= maxY }
	var xys plotter.XYs
	var n Located
	for _, r := range rows {
		lon, lat, ok := point(r[spec.Point])
		switch {
		case !ok:
			n.Missing++
		case in(lon, lat):
			n.In++
			xys = append(xys, plotter.XY{X: lon, Y: lat})
		case in(lat, lon):
			n.Swapped++
			xys = append(xys, plotter.XY{X: lat, Y: lon})
		default:
			n.Outside++
		}
	}
	if err := mapPlot(p, areas, func(area) color.Color { return color.RGBA{243, 245, 248, 255} }); err != nil {
		return "", err
	}
	if len(xys) > 0 {
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return "", err
		}
		s.Color = color.RGBA{164, 0, 0, 200}
		s.Radius = vg.Points(2)
		s.Shape = draw.CircleGlyph{}
		p.Add(s)
	}
	desc := "map of " + plural(len(xys), "point")
	if n.Outside > 0 {
		desc += "; " + plural(n.Outside, "point") + " outside San Francisco not drawn"
	}
	if n.Swapped > 0 {
		desc += "; " + plural(n.Swapped, "point") + " with latitude and longitude swapped, drawn where they belong"
	}
	if n.Missing > 0 {
		desc += "; " + plural(n.Missing, "row") + " with no " + spec.Point
	}
	return desc, nil
}

func drawAreas(p *plot.Plot, spec Spec, rows []map[string]any) (string, error) {
	set := setOf(spec.Set)
	areas, err := readAreas(set.boundaries())
	if err != nil {
		return "", err
	}
	values := map[string]float64{}
	unmatched := 0
	names := map[string]string{}
	for _, a := range areas {
		if k, ok := set.key(a.name); ok {
			names[k] = a.name
		}
	}
	for _, r := range rows {
		k, ok := set.key(r[spec.Label])
		if name, found := names[k]; ok && found {
			values[name] += number(r[spec.Value])
		} else {
			unmatched++
		}
	}
	if len(values) == 0 {
		return "", errEmpty
	}
	top := 0.0
	for _, v := range values {
		top = max(top, v)
	}
	err = mapPlot(p, areas, func(a area) color.Color {
		v, ok := values[a.name]
		if !ok {
			return color.RGBA{243, 245, 248, 255}
		}
		class := min(4, int(5*v/max(top, 1)))
		return color.NRGBA{59, 111, 182, uint8(51 * (class + 1))}
	})
	if err != nil {
		return "", err
	}
	desc := fmt.Sprintf("map of %s by %s, %s", spec.Value, spec.Label, plural(len(values), "area"))
	if unmatched > 0 {
		desc += "; " + plural(unmatched, "group") + " naming no area"
	}
	return desc, nil
}
