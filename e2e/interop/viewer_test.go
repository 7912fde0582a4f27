//go:build e2e

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/viewer"
	"github.com/datasf-mcp/datasf-mcp/e2e/harness"
)

// rowsExecutor serves a fixed, generated result and sorts by any column.
type rowsExecutor struct{ rows []map[string]any }

// Prepare returns e itself: every query is the same result.
func (e *rowsExecutor) Prepare(context.Context, dualresp.Query) (dualresp.Plan, error) { return e, nil }

func (e *rowsExecutor) Count(context.Context) (int64, error) {
	return int64(len(e.rows)), nil
}

func (e *rowsExecutor) Page(_ context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	idx := make([]int, len(e.rows))
	for i := range idx {
		idx[i] = i
	}
	if len(req.Sort) > 0 {
		s := req.Sort[0]
		less := func(a, b int) bool {
			va, vb := fmt.Sprint(e.rows[a][s.Field]), fmt.Sprint(e.rows[b][s.Field])
			if va == vb {
				return a < b // stable tie-breaker: row order
			}
			if s.Desc {
				return va > vb
			}
			return va < vb
		}
		sortInts(idx, less)
	}
	var out []json.RawMessage
	for k := req.Offset; k < int64(len(idx)) && k < req.Offset+req.Limit; k++ {
		b, err := json.Marshal(e.rows[idx[k]])
		if err != nil {
			return dualresp.PageResult{}, err
		}
		out = append(out, b)
	}
	return dualresp.PageResult{Rows: out}, nil
}

func sortInts(xs []int, less func(a, b int) bool) {
	// insertion into a merge sort keeps the tie-breaker simple and stable.
	if len(xs) < 2 {
		return
	}
	mid := len(xs) / 2
	left := append([]int(nil), xs[:mid]...)
	right := append([]int(nil), xs[mid:]...)
	sortInts(left, less)
	sortInts(right, less)
	i, j := 0, 0
	for k := range xs {
		if j >= len(right) || (i < len(left) && !less(right[j], left[i])) {
			xs[k] = left[i]
			i++
		} else {
			xs[k] = right[j]
			j++
		}
	}
}

func TestViewerInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the browser test in -short mode")
	}
	node := harness.Node(t, "playwright-core")
	chromium := harness.Chromium(t)

	const n = 5000
	exec1 := &rowsExecutor{}
	// Groups that name no police district (a count by those is a map).
	districts := []string{"Bayview Hunters Point", "Castro/Upper Market", "Haight Ashbury", "Inner Sunset", "Nob Hill", "Outer Richmond", "Potrero Hill", "West of Twin Peaks"}
	for i := range n {
		exec1.rows = append(exec1.rows, map[string]any{
			"incident_id": fmt.Sprintf("%06d", i),
			"district":    districts[(i*7)%len(districts)],
			"amount":      fmt.Sprint((i * 37) % 1000),
		})
	}
	mux := http.NewServeMux() // routes are added once the server's URL is known
	ts := httptest.NewServer(mux)
	defer ts.Close()
	grouped := &rowsExecutor{} // its rows are set below
	results, err := dualresp.New(dualresp.Options{BaseURL: ts.URL, CleanupInterval: -1,
		Executors: map[string]dualresp.Executor{"test": exec1, "grouped": grouped}})
	if err != nil {
		t.Fatal(err)
	}
	defer results.Close()
	mux.Handle("/resources/", viewer.Wrap("/resources/", results.Handler()))
	resp, err := results.CreateResponse(t.Context(), dualresp.Spec{
		Name:    "Generated incidents",
		Query:   dualresp.Query{Kind: "test", Text: "SELECT incident_id, district, amount ORDER BY :id"},
		Columns: []dualresp.Column{{Name: "incident_id", Type: "text"}, {Name: "district", Type: "text"}, {Name: "amount", Type: "number"}},
	})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	shot := filepath.Join(t.TempDir(), "viewer.png")
	if dir := os.Getenv("DATASF_SCREENSHOT_DIR"); dir != "" {
		shot = filepath.Join(dir, "viewer.png")
	}
	cmd := exec.CommandContext(ctx, node, "viewer.mjs", resp.URL(), shot)
	cmd.Env = append(os.Environ(), "CHROMIUM="+chromium)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node viewer.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	var figures struct {
		ChartBars    int    `json:"chart_bars"`
		Total        int    `json:"total"`
		LastOffset   int    `json:"last_offset"`
		LastPageRows int    `json:"last_page_rows"`
		SortedBy     string `json:"sorted_by"`
	}
	if err := json.Unmarshal(out, &figures); err != nil {
		t.Fatalf("viewer output %q: %v", out, err)
	}
	if figures.Total != n || figures.LastOffset != 4900 || figures.LastPageRows != 100 {
		t.Errorf("viewer figures = %+v; want total %d, last page at 4900 with 100 rows", figures, n)
	}
	if figures.ChartBars != 0 {
		t.Errorf("an ungrouped result shows a chart with %d bars; want none", figures.ChartBars)
	}

	// A grouped count gets a bar chart, one bar a group.
	counts := map[string]int{}
	for _, r := range exec1.rows {
		counts[r["district"].(string)]++
	}
	for _, d := range districts {
		grouped.rows = append(grouped.rows, map[string]any{"district": d, "count": fmt.Sprint(counts[d])})
	}
	gresp, err := results.CreateResponse(t.Context(), dualresp.Spec{
		Name:    "Incidents by district",
		Query:   dualresp.Query{Kind: "grouped", Text: "SELECT district, count(*) AS count GROUP BY district"},
		Columns: []dualresp.Column{{Name: "district", Type: "text"}, {Name: "count", Type: "number"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	gcmd := exec.CommandContext(ctx, node, "viewer.mjs", gresp.URL(), filepath.Join(filepath.Dir(shot), "chart.png"))
	gcmd.Env = cmd.Env
	var gerr strings.Builder
	gcmd.Stderr = &gerr
	gout, err := gcmd.Output()
	if err != nil {
		t.Fatalf("node viewer.mjs (grouped): %v\nstdout: %s\nstderr: %s", err, gout, gerr.String())
	}
	var gfig struct {
		ChartBars int `json:"chart_bars"`
	}
	if err := json.Unmarshal(gout, &gfig); err != nil {
		t.Fatalf("viewer output %q: %v", gout, err)
	}
	if gfig.ChartBars != len(districts) {
		t.Errorf("grouped count chart has %d bars; want %d (one per group)", gfig.ChartBars, len(districts))
	}

	if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
		t.Errorf("screenshot %s missing or empty: %v", shot, err)
	}
	t.Logf("viewer in Chromium: %d rows, last page offset %d (%d rows) matches REST, sorted by %s matches REST, screenshot %s",
		figures.Total, figures.LastOffset, figures.LastPageRows, figures.SortedBy, shot)
}
