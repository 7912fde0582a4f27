package reliability

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// analyze_results joins two stored results in SQL, reports progress while
// loading them, and refuses anything but a read.
func TestAnalyzeResultsJoinsStoredResults(t *testing.T) {
	t.Parallel()
	const n = 3000
	st := newStack(t, stackOptions{maxRetries: -1, generated: n})
	var mu sync.Mutex
	var progress []float64
	st.mcp.OnNotification(func(note mcp.JSONRPCNotification) {
		if note.Method == "notifications/progress" {
			// In process the fields keep their Go types; over the wire they
			// are JSON numbers: read them through JSON either way.
			b, _ := json.Marshal(note.Params.AdditionalFields)
			var f struct {
				Progress float64 `json:"progress"`
			}
			if json.Unmarshal(b, &f) == nil {
				mu.Lock()
				progress = append(progress, f.Progress)
				mu.Unlock()
			}
		}
	})
	uri := func(soql string) string {
		res, raw := st.call(t, "query_datasf", map[string]any{"dataset_id": st.gen, "soql": soql})
		if res.IsError {
			t.Fatal(raw)
		}
		return res.StructuredContent.(map[string]any)["resource"].(map[string]any)["uri"].(string)
	}
	rows := uri("SELECT n, grp")
	groups := uri("SELECT grp, count(*) AS c GROUP BY grp")

	req := mcp.CallToolRequest{}
	req.Params.Name = "analyze_results"
	req.Params.Arguments = map[string]any{
		"sql":     "SELECT r.grp AS grp, count(*) AS n, max(g.c) AS c FROM rows r JOIN groups g ON g.grp = r.grp GROUP BY r.grp ORDER BY r.grp",
		"results": map[string]any{"rows": rows, "groups": groups},
	}
	req.Params.Meta = &mcp.Meta{ProgressToken: "load-1"}
	res, err := st.mcp.CallTool(t.Context(), req)
	if err != nil || res.IsError {
		t.Fatalf("analyze_results: %v %+v", err, res)
	}
	out := res.StructuredContent.(map[string]any)
	got := out["rows"].([]any)
	if len(got) != 7 {
		t.Fatalf("analyze_results gave %d rows; want 7 groups", len(got))
	}
	for k, r := range got {
		row := r.(map[string]any)
		want := 0
		for i := range n {
			if i%7 == k {
				want++
			}
		}
		if row["grp"] != fmt.Sprintf("g%d", k) || row["n"].(float64) != float64(want) || row["c"].(float64) != float64(want) {
			t.Errorf("row %d = %v; want grp g%d with n = c = %d", k, row, k, want)
		}
	}
	// Notifications reach the client asynchronously: wait (bounded) for the last.
	var p []float64
	for deadline := time.Now().Add(5 * time.Second); ; {
		mu.Lock()
		p = append([]float64(nil), progress...)
		mu.Unlock()
		if (len(p) > 0 && p[len(p)-1] == n+7) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(p) == 0 || p[len(p)-1] != n+7 {
		t.Errorf("progress notifications %v; want them to end at %d rows loaded", p, n+7)
	}
	for i := 1; i < len(p); i++ {
		if p[i] < p[i-1] {
			t.Errorf("progress went backwards: %v", p)
		}
	}

	for _, sql := range []string{"DELETE FROM rows", "SELECT 1; DROP TABLE rows", "PRAGMA query_only=OFF", "ATTACH DATABASE ':memory:' AS x"} {
		res, raw := st.call(t, "analyze_results", map[string]any{"sql": sql, "results": map[string]any{"rows": rows}})
		if !res.IsError {
			t.Errorf("analyze_results(%q) succeeded: %s", sql, raw)
			continue
		}
		if e := errorOf(t, res); e.ErrorType != "validation" {
			t.Errorf("analyze_results(%q): error_type %s; want validation", sql, e.ErrorType)
		}
	}
	res2, _ := st.call(t, "analyze_results", map[string]any{"sql": "SELECT 1", "results": map[string]any{"t": "resource://ffffffffffffffffffffffffffffffff"}})
	if e := errorOf(t, res2); e.ErrorType != "not_found" {
		t.Errorf("unknown result: error_type %s; want not_found", e.ErrorType)
	}
	t.Logf("analyze_results: join of %d rows with 7 groups correct; %d progress notifications ending at %v", n, len(p), p[len(p)-1])
}
