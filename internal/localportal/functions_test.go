package localportal

import (
	"math"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

func TestStandardDeviation(t *testing.T) {
	t.Parallel()
	p := newPortal(t)
	xs := []float64{2, 4, 4, 4, 5, 5, 7, 9, 1e9 + 1, 1e9 + 3}
	schema := Schema{ID: "stdv-0001", Name: "Deviation", Columns: []socrata.Column{
		{FieldName: "x", DataType: "number"}, {FieldName: "g", DataType: "text"}}}
	if err := p.AddGenerated(t.Context(), schema, len(xs)+1, func(i int) map[string]any {
		if i == len(xs) {
			return map[string]any{"g": "one"} // a null x is left out
		}
		g := "small"
		if xs[i] > 100 {
			g = "big"
		}
		if i == 0 {
			g = "one"
		}
		return map[string]any{"x": xs[i], "g": g}
	}); err != nil {
		t.Fatal(err)
	}
	want := func(vals []float64, sample bool) float64 {
		var mean, ss float64
		for _, v := range vals {
			mean += v
		}
		mean /= float64(len(vals))
		for _, v := range vals {
			ss += (v - mean) * (v - mean)
		}
		n := float64(len(vals))
		if sample {
			n--
		}
		return math.Sqrt(ss / n)
	}
	groups := map[string][]float64{"one": xs[:1], "small": xs[1:8], "big": xs[8:]}
	rows := query(t, p, "stdv-0001", "SELECT g, stddev_pop(x) AS pop, stddev_samp(x) AS samp GROUP BY g")
	if len(rows) != len(groups) {
		t.Fatalf("%d groups; want %d: %v", len(rows), len(groups), rows)
	}
	for _, r := range rows {
		g := r["g"].(string)
		for _, c := range []struct {
			key    string
			sample bool
		}{{"pop", false}, {"samp", true}} {
			s, ok := r[c.key].(string)
			if g == "one" && c.sample {
				if ok {
					t.Errorf("stddev_samp of one value = %q; want null", s)
				}
				continue
			}
			got, err := strconv.ParseFloat(s, 64)
			if w := want(groups[g], c.sample); err != nil || math.Abs(got-w) > 1e-9*math.Max(1, w) {
				t.Errorf("group %s: %s = %q; want %v", g, c.key, s, w)
			}
		}
	}
	r := get(t, p, "/resource/stdv-0001.json", url.Values{"$query": {"SELECT stddev_pop(g)"}})
	if body := decodeObject(t, r.body); r.status != http.StatusBadRequest || body["errorCode"] != "query.soql.type-mismatch" {
		t.Errorf("stddev_pop of text: status %d, %v; want 400 query.soql.type-mismatch", r.status, body)
	}
}
