package datasf_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

// TestToolSpecsMatchTheRegisteredTools: the descriptions the command line
// builds its flags from are the registered tools' (less app-only ones),
// with each argument of the input schema, and Check validates as the tool.
func TestToolSpecsMatchTheRegisteredTools(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	specs := map[string]datasf.ToolSpec{}
	var names []string
	for _, s := range datasf.ToolSpecs() {
		specs[s.Name] = s
		names = append(names, s.Name)
	}
	if want := modelToolNames(t, h); !slices.Equal(names, want) {
		t.Errorf("ToolSpecs() names %v; want the tools the model sees, %v", names, want)
	}
	for _, tool := range h.srv.Tools() {
		spec, ok := specs[tool.Tool.Name]
		if !ok {
			continue // app-only: checked above
		}
		delete(specs, tool.Tool.Name)
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tool.Tool.RawInputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		for _, a := range spec.Args {
			if _, ok := schema.Properties[a.Name]; !ok {
				t.Errorf("%s: ToolSpec argument %s is not in the input schema", spec.Name, a.Name)
			}
			if a.Required != slices.Contains(schema.Required, a.Name) {
				t.Errorf("%s: ToolSpec argument %s required = %v; the schema says otherwise", spec.Name, a.Name, a.Required)
			}
		}
		if len(spec.Args) != len(schema.Properties) {
			t.Errorf("%s: %d ToolSpec arguments; the input schema has %d", spec.Name, len(spec.Args), len(schema.Properties))
		}
	}
	for name := range specs {
		t.Errorf("ToolSpecs() has %s, which is not registered", name)
	}

	search := datasf.ToolSpecs()[0]
	if err := search.Check(map[string]any{"query": "trees", "limit": 3}); err != nil {
		t.Errorf("search_datasf Check(valid) = %v", err)
	}
	err := search.Check(map[string]any{"query": "trees", "limit": datasf.MaxSearchLimit + 1})
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("search_datasf Check(limit %d) = %v; want an error naming limit", datasf.MaxSearchLimit+1, err)
	}
	if err := search.Check(map[string]any{"query": "trees", "nope": 1}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("search_datasf Check(unknown argument) = %v; want an error naming it", err)
	}
}

// TestNoHitsListTheCategories: a category without datasets, and a search
// without hits, answer with the categories the portal has.
func TestNoHitsListTheCategories(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"list_datasf", map[string]any{"category": "No Such Category"}},
		{"search_datasf", map[string]any{"query": "zqxjkvw"}},
	} {
		res := h.call(t, tc.tool, tc.args)
		if res.IsError {
			t.Fatalf("%s(%v): %v", tc.tool, tc.args, res.Content)
		}
		var out struct {
			Summary    string `json:"summary"`
			Count      int    `json:"count"`
			Categories []struct {
				Name  string `json:"name"`
				Count int    `json:"count"`
			} `json:"categories"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		if out.Count != 0 || len(out.Categories) == 0 || out.Categories[0].Name == "" || out.Categories[0].Count == 0 {
			t.Errorf("%s(%v) = count %d, categories %+v; want none found and the portal's categories", tc.tool, tc.args, out.Count, out.Categories)
		}
		if !strings.Contains(out.Summary, "categories") {
			t.Errorf("%s(%v) summary %q does not point to the categories", tc.tool, tc.args, out.Summary)
		}
		text := res.Content[0]
		if b, _ := json.Marshal(text); !strings.Contains(string(b), out.Categories[0].Name) {
			t.Errorf("%s(%v): the text content does not show the categories: %s", tc.tool, tc.args, b)
		}
	}
}

// TestCategoriesReadOnce: answers without hits reuse the categories they
// read; the catalog is read once, not per answer.
func TestCategoriesReadOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{}) // its own: the test counts requests
	before := h.fake.RequestCount("")
	for i := range 3 {
		res := h.call(t, "search_datasf", map[string]any{"query": fmt.Sprintf("zqxjkvw%d", i)})
		if res.IsError {
			t.Fatalf("search_datasf: %v", res.Content)
		}
	}
	// The portal's whole catalog read once for the three searches (they
	// are ranked here), and one catalog listing for the categories.
	if n := h.fake.RequestCount("") - before; n != 2 {
		t.Errorf("three searches without hits made %d portal requests; want 2 (1 catalog read, 1 categories listing)", n)
	}
}
