package reliability

import (
	"net/http"
	"testing"
)

func TestListResultsShowsThisSessionsLiveResults(t *testing.T) {
	t.Parallel()
	st := newStack(t, stackOptions{maxRetries: -1, generated: 40})
	var urls []string
	for _, soql := range []string{"SELECT n", "SELECT grp, count(*) AS c GROUP BY grp"} {
		res, raw := st.call(t, "query_datasf", map[string]any{"dataset_id": st.gen, "soql": soql})
		if res.IsError {
			t.Fatal(raw)
		}
		urls = append(urls, res.StructuredContent.(map[string]any)["resource"].(map[string]any)["url"].(string))
	}
	list := func() []map[string]any {
		res, raw := st.call(t, "list_results", map[string]any{})
		if res.IsError {
			t.Fatal(raw)
		}
		var out []map[string]any
		for _, r := range res.StructuredContent.(map[string]any)["results"].([]any) {
			out = append(out, r.(map[string]any))
		}
		return out
	}
	got := list()
	if len(got) != 2 || got[0]["url"] != urls[1] || got[1]["url"] != urls[0] {
		t.Fatalf("list_results = %v; want the two results, newest first", got)
	}
	if got[0]["total_count"].(float64) != 7 || got[1]["total_count"].(float64) != 40 {
		t.Errorf("totals %v, %v; want 7 groups and 40 rows", got[0]["total_count"], got[1]["total_count"])
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, urls[0], nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", err, resp)
	}
	if got := list(); len(got) != 1 || got[0]["url"] != urls[1] {
		t.Errorf("after deleting one, list_results = %v; want only %s", got, urls[1])
	}
	if res, raw := st.call(t, "list_results", map[string]any{"format": "yaml"}); !res.IsError {
		t.Errorf("list_results with format yaml succeeded: %s", raw)
	}
}
