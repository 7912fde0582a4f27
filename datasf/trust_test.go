package datasf_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// textOf returns the text content of a result, as a host that shows the
// model only the text (and ignores structuredContent) passes it on.
func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	if len(parts) == 0 {
		t.Fatalf("result has no text content: %+v", res.Content)
	}
	return strings.Join(parts, "\n")
}

// The answers a model could have taken for true without a warning, each
// through an MCP session and read as text: every one now says what the
// model needs to know.
func TestAnswersTheModelCanTrust(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	query := func(t *testing.T, soql string) *mcp.CallToolResult {
		t.Helper()
		return h.call(t, "query_datasf", map[string]any{"dataset_id": "wg3w-h783", "soql": soql})
	}

	t.Run("unquoted date", func(t *testing.T) {
		soql := "SELECT count(*) AS n WHERE incident_date > 2023-01-01"
		res := query(t, soql)
		e := errorOf(t, "query_datasf", soql, res)
		for _, want := range []string{"incident_date", "floating_timestamp", "number", "Quote the date: incident_date > '2023-01-01'"} {
			if !strings.Contains(e.Error, want) {
				t.Errorf("error %q lacks %q", e.Error, want)
			}
		}
	})

	t.Run("a zero count from a wrong-case filter", func(t *testing.T) {
		soql := "SELECT count(*) AS n WHERE police_district = 'MISSION'"
		res := query(t, soql)
		if res.IsError {
			t.Fatalf("query_datasf(%q) = error %s", soql, textOf(t, res))
		}
		text := textOf(t, res)
		if !strings.Contains(text, "Ignoring case it matches 'Mission'") {
			t.Errorf("text of a zero count lacks the case-insensitive match:\n%s", text)
		}
		var out hintsOut
		structured(t, "query_datasf", soql, res, &out)
		if len(out.Hints) == 0 || out.Hints[0].Column != "police_district" || len(out.Hints[0].Matches) == 0 || out.Hints[0].Matches[0].Value != "Mission" {
			t.Errorf("hints = %+v; want police_district's 'Mission'", out.Hints)
		}
	})

	t.Run("a count that is not zero has no hint", func(t *testing.T) {
		soql := "SELECT count(*) AS n WHERE police_district = 'Mission'"
		text := textOf(t, query(t, soql))
		if strings.Contains(text, "Hints:") {
			t.Errorf("text of a non-zero count has hints:\n%s", text)
		}
	})

	t.Run("a corrected name", func(t *testing.T) {
		soql := "SELECT incident_catagory, count(*) AS n GROUP BY incident_catagory"
		text := textOf(t, query(t, soql))
		for _, want := range []string{"incident_catagory → incident_category", "SELECT incident_category, count(*) AS n GROUP BY incident_category"} {
			if !strings.Contains(text, want) {
				t.Errorf("text lacks %q:\n%s", want, text)
			}
		}
	})

	t.Run("FROM", func(t *testing.T) {
		soql := "SELECT * FROM wg3w-h783"
		e := errorOf(t, "query_datasf", soql, query(t, soql))
		if !strings.Contains(e.Error, "SoQL has no FROM: the dataset is the dataset_id argument") {
			t.Errorf("error %q does not explain FROM", e.Error)
		}
		if strings.Contains(e.Error, "expected ','") {
			t.Errorf("error %q still reads as a parser's complaint", e.Error)
		}
	})
}

// After 20 queries on one dataset, list_results' text tells them apart: no
// two rows read alike, and each shows its dataset and query.
func TestListResultsTellsResultsApart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	for i := range 20 {
		soql := fmt.Sprintf("SELECT incident_category, count(*) AS n WHERE supervisor_district = %d OR latitude > %d GROUP BY incident_category ORDER BY n DESC LIMIT %d", i%11, 30+i, i+1)
		if res := h.call(t, "query_datasf", map[string]any{"dataset_id": "wg3w-h783", "soql": soql}); res.IsError {
			t.Fatalf("query %d: %s", i, textOf(t, res))
		}
	}
	text := textOf(t, h.call(t, "list_results", map[string]any{}))
	seen := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| wg3w-h783 |") {
			continue
		}
		rows++
		// The url differs anyway: compare what a reader tells them by.
		key := line[:strings.LastIndex(strings.TrimSuffix(line, " |"), "|")]
		if seen[key] {
			t.Errorf("two rows read alike: %s", key)
		}
		seen[key] = true
		if !strings.Contains(line, "SELECT incident_category") || !strings.Contains(line, "…") {
			t.Errorf("row %q does not show the query shortened in the middle", line)
		}
	}
	if rows != 20 {
		t.Errorf("list_results text has %d rows naming wg3w-h783; want 20:\n%s", rows, text)
	}
	if !strings.Contains(text, "LIMIT 20") {
		t.Errorf("the newest result (LIMIT 20) is not listed:\n%s", text)
	}
	if i, j := strings.Index(text, "LIMIT 20"), strings.Index(text, "LIMIT 19"); i < 0 || j < 0 || i > j {
		t.Errorf("results are not newest first:\n%s", text)
	}
}
