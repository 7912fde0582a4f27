package picture

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// monthly is a count by month of 2018 without March and April, largest
// first, with a null month.
func monthly() []map[string]any {
	var rows []map[string]any
	for _, m := range []int{8, 12, 1, 5, 9, 2, 6, 10, 7, 11} {
		rows = append(rows, map[string]any{"month": fmt.Sprintf("2018-%02d-01T00:00:00.000", m), "n": fmt.Sprint(1000 + m*10)})
	}
	return append(rows, map[string]any{"month": nil, "n": "7"})
}

func TestChoose(t *testing.T) {
	t.Parallel()
	pt := map[string]any{"type": "Point", "coordinates": []any{-122.41, 37.78}}
	tests := []struct {
		cols []string
		rows []map[string]any
		want Spec
		ok   bool
	}{
		{[]string{"month", "n"}, monthly(), Spec{Kind: Line, Value: "n", Label: "month"}, true},
		{[]string{"district", "count"}, []map[string]any{{"district": "Downtown", "count": "3"}, {"district": "Mission", "count": "2"}, {"district": "Sunset", "count": "1"}}, Spec{Kind: Bars, Value: "count", Label: "district"}, true},
		{[]string{"analysis_neighborhood", "n"}, []map[string]any{{"analysis_neighborhood": "Mission", "n": "3"}}, Spec{Kind: Areas, Value: "n", Label: "analysis_neighborhood", Set: "analysis_neighborhood"}, true},
		{[]string{"supervisor_district", "n"}, []map[string]any{{"supervisor_district": "3", "n": "7"}}, Spec{Kind: Areas, Value: "n", Label: "supervisor_district", Set: "supervisor_district"}, true},
		{[]string{"count", "supervisor_district"}, []map[string]any{{"supervisor_district": 11.0, "count": "7"}}, Spec{Kind: Areas, Value: "count", Label: "supervisor_district", Set: "supervisor_district"}, true},
		{[]string{"police_district", "n"}, []map[string]any{{"police_district": "MISSION", "n": "7"}}, Spec{Kind: Areas, Value: "n", Label: "police_district", Set: "police_district"}, true},
		{[]string{"pd_district", "n"}, []map[string]any{{"pd_district": "Tenderloin", "n": "7"}}, Spec{Kind: Areas, Value: "n", Label: "pd_district", Set: "police_district"}, true},
		// A bare "district" is a police district's when its values name them.
		{[]string{"district", "n"}, []map[string]any{{"district": "Tenderloin", "n": "7"}, {"district": "Out of SF", "n": "1"}}, Spec{Kind: Areas, Value: "n", Label: "district", Set: "police_district"}, true},
		{[]string{"zip_code", "n"}, []map[string]any{{"zip_code": "94110", "n": "7"}}, Spec{Kind: Areas, Value: "n", Label: "zip_code", Set: "zip_code"}, true},
		{[]string{"n", "zip"}, []map[string]any{{"zip": 94110.0, "n": "7"}}, Spec{Kind: Areas, Value: "n", Label: "zip", Set: "zip_code"}, true},
		{[]string{"postal_code", "count"}, []map[string]any{{"postal_code": "94110", "count": "7"}}, Spec{Kind: Areas, Value: "count", Label: "postal_code", Set: "zip_code"}, true},
		{[]string{"name", "location"}, []map[string]any{{"name": "a", "location": pt}, {"name": "b", "location": nil}}, Spec{Kind: Points, Point: "location"}, true},
		{[]string{"name", "status"}, []map[string]any{{"name": "a", "status": "x"}}, Spec{}, false},
	}
	for _, tt := range tests {
		got, ok := Choose(tt.cols, tt.rows)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Choose(%v) = %+v, %v; want %+v, %v", tt.cols, got, ok, tt.want, tt.ok)
		}
	}
}

func TestLinePointsInTimeOrder(t *testing.T) {
	t.Parallel()
	pts, period := LinePoints(Spec{Kind: Line, Value: "n", Label: "month"}, monthly(), "")
	var labels []string
	for _, p := range pts {
		labels = append(labels, p.Label)
	}
	want := []string{"2018-01", "2018-02", "2018-05", "2018-06", "2018-07", "2018-08", "2018-09", "2018-10", "2018-11", "2018-12"}
	if period != "month" || !slices.Equal(labels, want) {
		t.Errorf("LinePoints = %v (%s); want %v (month)", labels, period, want)
	}
}

// TestDraw draws each kind and checks the PNG: its size and bound, the
// sentence that says what it shows, and that its marks are drawn (pixels
// of the line's, the points' or the areas' colour). The pictures go to
// $DATASF_SCREENSHOT_DIR when set.
func TestDraw(t *testing.T) {
	t.Parallel()
	var points []map[string]any
	for i := range 50 {
		points = append(points, map[string]any{"id": i, "point": map[string]any{"type": "Point", "coordinates": []any{-122.49 + float64(i%10)*0.009, 37.73 + float64(i/10)*0.01}}})
	}
	points = append(points, map[string]any{"id": 50, "point": map[string]any{"type": "Point", "coordinates": []any{37.75, -122.42}}},
		map[string]any{"id": 51, "point": map[string]any{"type": "Point", "coordinates": []any{-118.24, 34.05}}}, map[string]any{"id": 52, "point": nil})
	var hoods []map[string]any
	for i, n := range []string{"Mission", "Tenderloin", "South of Market", "Sunset/Parkside", "Atlantis"} {
		hoods = append(hoods, map[string]any{"analysis_neighborhood": n, "n": fmt.Sprint(100 * (i + 1))})
	}
	// Supervisor districts as DataSF's columns give them (text, numbers,
	// "District 3"), and two groups naming none.
	var districts []map[string]any
	for i, d := range []any{"1", "2", "03", 4.0, "5.0", "District 6", "7", "8", "9", "10", "11", "12", nil} {
		districts = append(districts, map[string]any{"supervisor_district": d, "n": fmt.Sprint(10 * (i + 1))})
	}
	// Police districts as the incident data write them (either case), and
	// one naming none; ZIP codes as text, numbers and ZIP+4, and two naming
	// none (one outside the city).
	var police []map[string]any
	for i, d := range []any{"BAYVIEW", "Central", "ingleside", "MISSION", "Northern", "PARK", "Richmond", "SOUTHERN", "Taraval", "Tenderloin", "Out of SF"} {
		police = append(police, map[string]any{"police_district": d, "n": fmt.Sprint(10 * (i + 1))})
	}
	var zips []map[string]any
	for i, z := range []any{"94102", 94103.0, "94110-1234", "94124", "94014", nil} {
		zips = append(zips, map[string]any{"zip_code": z, "n": fmt.Sprint(10 * (i + 1))})
	}
	tests := []struct {
		name  string
		spec  Spec
		rows  []map[string]any
		want  string
		color [3]uint8 // a colour the marks are drawn in
	}{
		{"image-line", Spec{Kind: Line, Value: "n", Label: "month"}, monthly(), "line chart of n by month, 10 points from 2018-01 to 2018-12, 1 gap with no rows", [3]uint8{59, 111, 182}},
		{"image-bars", Spec{Kind: Bars, Value: "count", Label: "district"}, []map[string]any{{"district": "Mission", "count": "30"}, {"district": nil, "count": "12"}}, "bar chart of count by district, 2 bars", [3]uint8{59, 111, 182}},
		{"image-points", Spec{Kind: Points, Point: "point"}, points, "map of 51 points; 1 point outside San Francisco not drawn; 1 point with latitude and longitude swapped, drawn where they belong; 1 row with no point", [3]uint8{0, 0, 0}},
		{"image-areas", Spec{Kind: Areas, Value: "n", Label: "analysis_neighborhood"}, hoods, "map of n by analysis_neighborhood, 4 areas; 1 group naming no area", [3]uint8{0, 0, 0}},
		{"image-districts", Spec{Kind: Areas, Value: "n", Label: "supervisor_district", Set: "supervisor_district"}, districts, "map of n by supervisor_district, 11 areas; 2 groups naming no area", [3]uint8{0, 0, 0}},
		{"image-police", Spec{Kind: Areas, Value: "n", Label: "police_district", Set: "police_district"}, police, "map of n by police_district, 10 areas; 1 group naming no area", [3]uint8{0, 0, 0}},
		{"image-zips", Spec{Kind: Areas, Value: "n", Label: "zip_code", Set: "zip_code"}, zips, "map of n by zip_code, 4 areas; 2 groups naming no area", [3]uint8{0, 0, 0}},
	}
	for _, tt := range tests {
		d, err := Draw(tt.spec, tt.rows, "")
		if err != nil {
			t.Fatalf("%s: Draw: %v", tt.name, err)
		}
		if d.Description != tt.want {
			t.Errorf("%s: description %q; want %q", tt.name, d.Description, tt.want)
		}
		img, err := png.Decode(bytes.NewReader(d.PNG))
		if err != nil {
			t.Fatalf("%s: not a PNG: %v", tt.name, err)
		}
		if b := img.Bounds(); b.Dx() != 768 || b.Dy() != 432 || len(d.PNG) > MaxBytes {
			t.Errorf("%s: %dx%d, %d bytes; want 768x432 within %d bytes", tt.name, b.Dx(), b.Dy(), len(d.PNG), MaxBytes)
		}
		if marks := coloured(img); marks < 200 {
			t.Errorf("%s: %d pixels of colour; want the marks drawn", tt.name, marks)
		}
		if dir := os.Getenv("DATASF_SCREENSHOT_DIR"); dir != "" {
			_ = os.WriteFile(filepath.Join(dir, tt.name+".png"), d.PNG, 0o644)
		}
	}
}

// coloured counts the pixels that are neither white nor grey: the marks.
func coloured(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			hi, lo := max(r, g, bl), min(r, g, bl)
			if hi-lo > 0x2000 {
				n++
			}
		}
	}
	return n
}
