package datasf_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// searchItem is one result of search_datasf as a model reads it.
type searchItem struct {
	ID        string   `json:"id"`
	RowCount  *int64   `json:"row_count"`
	UpdatedAt string   `json:"updated_at"`
	Matched   []string `json:"matched"`
	Columns   []string `json:"columns"`
}

// Search answers are made for choosing: each hit says why it matched, its
// row count, its last update and its first field names; five of them fit
// in 1,200 Claude tokens, as structuredContent and as text, and the text
// in 1,200 bytes (issue 56's budget for a search answer's text), a
// warning line included ("crime" is broad).
func TestSearchAnswerForChoosing(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	for _, q := range []string{"food trucks", "police incident reports", "Which intersections have the most traffic collisions where someone was injured?", "311", "crime"} {
		args := map[string]any{"query": q}
		res := h.call(t, "search_datasf", args)
		var out struct {
			Results []searchItem `json:"results"`
		}
		structured(t, "search_datasf", args, res, &out)
		if len(out.Results) != 5 {
			t.Fatalf("search_datasf(%q): %d results; want 5", q, len(out.Results))
		}
		for _, r := range out.Results {
			if len(r.Matched) == 0 || r.RowCount == nil || r.UpdatedAt == "" || len(r.Columns) == 0 {
				t.Errorf("search_datasf(%q) result %s = %+v; want matched, row_count, updated_at and columns", q, r.ID, r)
			}
		}
		sc, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		n := claudeTokens(t, sc)
		text := textOf(t, res)
		nt := claudeTokens(t, []byte(text))
		t.Logf("search_datasf(%q): structuredContent %d bytes, %d tokens; text %d bytes, %d tokens (budget 1,200)", q, len(sc), n, len(text), nt)
		if n > 1200 || nt > 1200 {
			t.Errorf("search_datasf(%q): %d tokens structured, %d as text; want at most 1,200 for 5 hits", q, n, nt)
		}
		if len(text) > 1200 {
			t.Errorf("search_datasf(%q): text of %d bytes; want at most 1,200 for 5 hits:\n%s", q, len(text), text)
		}
	}
}

// A dataset named by its id comes first, alone or among words.
func TestSearchByID(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	for _, q := range []string{"wg3w-h783", "incidents WG3W-H783"} {
		var out catalogOut
		args := map[string]any{"query": q}
		structured(t, "search_datasf", args, h.call(t, "search_datasf", args), &out)
		if len(out.Results) == 0 || out.Results[0].ID != "wg3w-h783" {
			t.Errorf("search_datasf(%q) = %+v; want wg3w-h783 first", q, out.Results)
		}
	}
}

// A search answer keeps the model off the wrong dataset: each hit says
// why it matched in the portal's words (title, tags, columns, values), how
// much it is used (page views, in the text too), and a broad search, or
// one whose first two hits fit about as well, says so in one line that
// names the most used of the hits; a search that names its dataset
// exactly has no such line.
func TestSearchAnswerWarns(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	for _, tt := range []struct {
		query string
		warns bool
	}{
		{"crime", true},
		{"police", true},
		{"mobile food facility permit", false},
	} {
		args := map[string]any{"query": tt.query}
		res := h.call(t, "search_datasf", args)
		var out struct {
			Summary string `json:"summary"`
			Results []struct {
				ID        string   `json:"id"`
				Matched   []string `json:"matched"`
				PageViews int64    `json:"page_views"`
			} `json:"results"`
		}
		structured(t, "search_datasf", args, res, &out)
		text := textOf(t, res)
		warned := strings.Contains(out.Summary, "a broad search") || strings.Contains(out.Summary, "fit about as well")
		if warned != tt.warns {
			t.Errorf("search_datasf(%q).summary = %q; warns %v, want %v", tt.query, out.Summary, warned, tt.warns)
		}
		if warned {
			most := out.Results[0]
			for _, r := range out.Results {
				if r.PageViews > most.PageViews {
					most = r
				}
			}
			if most.ID != out.Results[0].ID && !strings.Contains(out.Summary, most.ID) {
				t.Errorf("search_datasf(%q).summary = %q; want it to name the most used hit %s", tt.query, out.Summary, most.ID)
			}
			if !strings.Contains(text, out.Summary) {
				t.Errorf("search_datasf(%q): the text does not carry the summary's warning:\n%s", tt.query, text)
			}
		}
		for _, r := range out.Results {
			for _, m := range r.Matched {
				if m == "name" {
					t.Errorf("search_datasf(%q) %s matched %v; want the portal's word \"title\"", tt.query, r.ID, r.Matched)
				}
			}
		}
		if out.Results[0].PageViews == 0 || !strings.Contains(text, "| views |") {
			t.Errorf("search_datasf(%q): first hit's page_views %d, text header without views:\n%s", tt.query, out.Results[0].PageViews, text)
		}
	}
}

// When no hit has the search's words in its title, tags or values, the
// answer says the dataset wanted may not be among them, instead of naming
// a most used hit (a question from the users' set: the 311 cases it means
// say "complaints" nowhere a dataset is named).
func TestSearchAnswerSaysWeakMatch(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	for _, tt := range []struct {
		query string
		weak  bool
	}{
		{"We’re going to look at what people complain about.", true},
		{"police incident reports", false},
	} {
		args := map[string]any{"query": tt.query}
		var out struct {
			Summary string `json:"summary"`
		}
		structured(t, "search_datasf", args, h.call(t, "search_datasf", args), &out)
		if got := strings.Contains(out.Summary, "may not be among them"); got != tt.weak {
			t.Errorf("search_datasf(%q).summary = %q; says the match is weak: %v, want %v", tt.query, out.Summary, got, tt.weak)
		}
	}
}
