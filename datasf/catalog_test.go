package datasf_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// catalogOut is the structured content of search_datasf and list_datasf.
type catalogOut struct {
	Summary  string `json:"summary"`
	Query    string `json:"query"`
	Category string `json:"category"`
	Count    int    `json:"count"`
	Results  []struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Category    string   `json:"category"`
		UpdatedAt   string   `json:"updated_at"`
		Columns     []string `json:"columns"`
	} `json:"results"`
	// FullResult is set when the answer was too large and spilled: the
	// results above are a preview, the full list is at URL.
	FullResult *struct {
		URL string `json:"url"`
	} `json:"full_result"`
}

// namesArgument checks that a validation error names the argument, in its
// text and in its details.
func namesArgument(t *testing.T, e toolError, arg string) {
	t.Helper()
	if e.ErrorType != "validation" {
		t.Errorf("error_type = %q; want validation (error %q)", e.ErrorType, e.Error)
	}
	if !strings.Contains(e.Error, arg) {
		t.Errorf("error %q does not name %s", e.Error, arg)
	}
	inDetails := e.Details["field"] == arg
	if fields, ok := e.Details["fields"].([]any); ok {
		inDetails = inDetails || slices.Contains(fields, any(arg))
	}
	if !inDetails {
		t.Errorf("details %v do not name %s", e.Details, arg)
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	inCatalog := map[string]bool{}
	for _, e := range catalog(t) {
		inCatalog[e.Endpoint] = true
	}
	tests := []struct {
		name      string
		args      map[string]any
		wantCount int    // exact number of results
		wantID    string // a dataset that must be among them
	}{
		{"default limit is 5", map[string]any{"query": "permit"}, 5, ""},
		{"limit 3 respected", map[string]any{"query": "food truck", "limit": 3}, 3, "rqzj-sfat"},
		{"limit 1", map[string]any{"query": "Mobile Food Facility Permit", "limit": 1}, 1, ""},
		{"limit 20", map[string]any{"query": "police", "limit": 20}, 20, ""},
		{"json text", map[string]any{"query": "film locations", "format": "json"}, 5, "yitu-d5am"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out catalogOut
			structured(t, "search_datasf", tt.args, h.call(t, "search_datasf", tt.args), &out)
			if out.Count != tt.wantCount || len(out.Results) != tt.wantCount {
				t.Errorf("search_datasf(%v): count %d, %d results; want %d", tt.args, out.Count, len(out.Results), tt.wantCount)
			}
			ids := make([]string, len(out.Results))
			for i, r := range out.Results {
				ids[i] = r.ID
				if !inCatalog[r.ID] {
					t.Errorf("search_datasf(%v) returned %s, which is not in the catalog", tt.args, r.ID)
				}
				if r.Name == "" {
					t.Errorf("search_datasf(%v): result %s has no name", tt.args, r.ID)
				}
			}
			if tt.wantID != "" && !slices.Contains(ids, tt.wantID) {
				t.Errorf("search_datasf(%v) = %v; want %s among them", tt.args, ids, tt.wantID)
			}
			if out.Query != tt.args["query"] {
				t.Errorf("search_datasf(%v).query = %q", tt.args, out.Query)
			}
			t.Logf("search_datasf(%v) = %v", tt.args, ids)
		})
	}
}

func TestSearchValidation(t *testing.T) {
	t.Parallel()
	h := newStubHarness(t) // refused before any request
	tests := []struct {
		name string
		args any
		arg  string
	}{
		{"empty query", map[string]any{"query": ""}, "query"},
		{"blank query", map[string]any{"query": "   "}, "query"},
		{"missing query", map[string]any{}, "query"},
		{"501 characters", map[string]any{"query": strings.Repeat("a", 501)}, "query"},
		{"limit 21", map[string]any{"query": "food", "limit": 21}, "limit"},
		{"negative limit", map[string]any{"query": "food", "limit": -1}, "limit"},
		{"limit 0 is not unset", map[string]any{"query": "food", "limit": 0}, "limit"},
		{"limit as text", map[string]any{"query": "food", "limit": "5"}, "limit"},
		{"query as number", map[string]any{"query": 5}, "query"},
		{"unknown argument", map[string]any{"query": "food", "portal": "evil.example"}, "portal"},
		{"bad format", map[string]any{"query": "food", "format": "xml"}, "format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := errorOf(t, "search_datasf", tt.args, h.call(t, "search_datasf", tt.args))
			namesArgument(t, e, tt.arg)
		})
	}
	t.Run("500 characters accepted", func(t *testing.T) {
		t.Parallel()
		args := map[string]any{"query": strings.Repeat("a", 500)}
		var out catalogOut
		structured(t, "search_datasf", args, sharedHarness(t).call(t, "search_datasf", args), &out)
		if out.Count != len(out.Results) {
			t.Errorf("count %d, %d results", out.Count, len(out.Results))
		}
	})
}

// newestFirst returns the ids of the catalog entries of category (all when
// empty), most recently updated first. Entries without rows_updated_at
// count as oldest.
func newestFirst(entries []catalogEntry, category string) []catalogEntry {
	var out []catalogEntry
	for _, e := range entries {
		if category == "" || e.Category == category {
			out = append(out, e)
		}
	}
	key := func(e catalogEntry) string {
		var s string
		if json.Unmarshal(e.RowsUpdatedAt, &s) != nil || s == "" {
			return ""
		}
		return s
	}
	slices.SortStableFunc(out, func(a, b catalogEntry) int { return cmp.Compare(key(b), key(a)) })
	return out
}

func TestList(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	entries := catalog(t)
	tests := []struct {
		category string
		limit    int // 0: the default, 10
	}{
		{"Economy and Community", 5},
		{"Public Safety", 0},
		{"Transportation", 100},
		{"COVID-19", 20}, // fewer datasets than the limit
		{"", 7},
		{"No Such Category", 5},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q limit %d", tt.category, tt.limit), func(t *testing.T) {
			t.Parallel()
			args := map[string]any{}
			if tt.category != "" {
				args["category"] = tt.category
			}
			if tt.limit != 0 {
				args["limit"] = tt.limit
			}
			var out catalogOut
			structured(t, "list_datasf", args, h.call(t, "list_datasf", args), &out)
			if out.FullResult != nil {
				// Too large for the model: a preview here, every item at the link.
				if len(out.Results) >= out.Count {
					t.Errorf("list_datasf(%v) spilled but its preview has all %d results", args, out.Count)
				}
				var page struct {
					Data json.RawMessage `json:"data"`
				}
				resp, err := http.Get(out.FullResult.URL + "?offset=0&limit=1000")
				if err != nil {
					t.Fatal(err)
				}
				err = json.NewDecoder(resp.Body).Decode(&page)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(page.Data, &out.Results); err != nil {
					t.Fatal(err)
				}
				t.Logf("list_datasf(%v) spilled: preview in the answer, %d items at %s", args, len(out.Results), out.FullResult.URL)
			}

			limit := cmp.Or(tt.limit, 10)
			all := newestFirst(entries, tt.category)
			want := all[:min(limit, len(all))]
			if out.Count != len(want) || len(out.Results) != len(want) {
				t.Fatalf("list_datasf(%v): count %d, %d results; want %d (of %d in the catalog)", args, out.Count, len(out.Results), len(want), len(all))
			}
			var gotIDs, wantIDs []string
			for i, r := range out.Results {
				gotIDs = append(gotIDs, r.ID)
				wantIDs = append(wantIDs, want[i].Endpoint)
				if tt.category != "" && r.Category != tt.category {
					t.Errorf("list_datasf(%v): %s has category %q", args, r.ID, r.Category)
				}
				if i > 0 && r.UpdatedAt > out.Results[i-1].UpdatedAt {
					t.Errorf("list_datasf(%v): %s (%s) after %s (%s); want newest first", args, r.ID, r.UpdatedAt, out.Results[i-1].ID, out.Results[i-1].UpdatedAt)
				}
			}
			// Ties in rows_updated_at may come in any order: compare the
			// ids only when the last one kept is not tied with the first dropped.
			if len(all) == len(want) || newestKeyDiffers(all[len(want)-1], all[len(want)]) {
				slices.Sort(gotIDs)
				slices.Sort(wantIDs)
				if diff := gocmp.Diff(wantIDs, gotIDs); diff != "" {
					t.Errorf("list_datasf(%v) ids (-want +got):\n%s", args, diff)
				}
			}
			t.Logf("list_datasf(%v): %d results of %d in the catalog", args, len(out.Results), len(all))
		})
	}
}

func newestKeyDiffers(a, b catalogEntry) bool {
	return string(a.RowsUpdatedAt) != string(b.RowsUpdatedAt)
}

func TestListValidation(t *testing.T) {
	t.Parallel()
	h := newStubHarness(t) // refused before any request
	tests := []struct {
		name string
		args any
		arg  string
	}{
		{"limit 101", map[string]any{"limit": 101}, "limit"},
		{"limit 0 is not unset", map[string]any{"limit": 0}, "limit"},
		{"category too long", map[string]any{"category": strings.Repeat("x", 201)}, "category"},
		{"category as number", map[string]any{"category": 7}, "category"},
		{"unknown argument", map[string]any{"order": "oldest"}, "order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := errorOf(t, "list_datasf", tt.args, h.call(t, "list_datasf", tt.args))
			namesArgument(t, e, tt.arg)
		})
	}
}
