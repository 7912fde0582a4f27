package datasf_test

import (
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

// toolCall is one call through the MCP client. arg "" means the call must
// succeed (the harness's server checks the structured content against the
// tool's output schema); otherwise it must be a validation error naming arg.
type toolCall struct {
	name string
	args map[string]any
	arg  string
}

// toolCalls returns, for every tool, calls through a real MCP client: a
// good call, the bounds of its arguments, zero (which is not "unset") and
// an unknown argument. stored is the URI of a stored query result.
func toolCalls(stored string) map[string][]toolCall {
	return map[string][]toolCall{
		"search_datasf": {
			{"default limit", map[string]any{"query": "police"}, ""},
			{"limit 1", map[string]any{"query": "police", "limit": 1}, ""},
			{"limit 0", map[string]any{"query": "police", "limit": 0}, "limit"},
			{"limit null is the default", map[string]any{"query": "police", "limit": nil}, ""},
			{"unknown argument", map[string]any{"query": "police", "bogus": 1}, "bogus"},
		},
		"list_datasf": {
			{"no arguments", map[string]any{}, ""},
			{"limit 100", map[string]any{"limit": 100}, ""},
			{"limit 0", map[string]any{"limit": 0}, "limit"},
			{"unknown argument", map[string]any{"bogus": 1}, "bogus"},
		},
		"get_schema": {
			{"a dataset", map[string]any{"dataset_id": "rqzj-sfat"}, ""},
			{"not a 4x4", map[string]any{"dataset_id": "rqzj"}, "dataset_id"},
			{"unknown argument", map[string]any{"dataset_id": "rqzj-sfat", "bogus": 1}, "bogus"},
		},
		"query_datasf": {
			{"default sample", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT objectid"}, ""},
			{"sample_size 1", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT objectid", "sample_size": 1}, ""},
			{"sample_size 0", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT objectid", "sample_size": 0}, "sample_size"},
			{"unknown argument", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT objectid", "bogus": 1}, "bogus"},
		},
		"list_results": {
			{"no arguments", map[string]any{}, ""},
			{"json", map[string]any{"format": "json"}, ""},
			{"bad format", map[string]any{"format": "xml"}, "format"},
			{"limit and offset", map[string]any{"limit": 5, "offset": 1}, ""},
			{"limit 0", map[string]any{"limit": 0}, "limit"},
			{"offset past the kept results", map[string]any{"offset": datasf.MaxResultsPerOwner + 1}, "offset"},
			{"unknown argument", map[string]any{"bogus": 5}, "bogus"},
		},
		"analyze_results": {
			{"one result", map[string]any{"sql": "SELECT count(*) AS n FROM r", "results": map[string]any{"r": stored}}, ""},
			{"blank sql", map[string]any{"sql": "  ", "results": map[string]any{"r": stored}}, "sql"},
			{"no results", map[string]any{"sql": "SELECT 1"}, "results"},
			{"empty results", map[string]any{"sql": "SELECT 1", "results": map[string]any{}}, "results"},
			{"17 results", map[string]any{"sql": "SELECT 1", "results": manyResults(17, stored)}, "results"},
			{"sql too long", map[string]any{"sql": "SELECT 1" + strings.Repeat(" ", 25000), "results": map[string]any{"r": stored}}, "sql"},
			{"unknown argument", map[string]any{"sql": "SELECT 1", "results": map[string]any{"r": stored}, "bogus": 1}, "bogus"},
		},
		"result_page": {
			{"first page", map[string]any{"result": stored}, ""},
			{"sorted", map[string]any{"result": stored, "sort_by": "applicant", "order": "desc", "limit": 2, "offset": 1}, ""},
			{"limit 1000", map[string]any{"result": stored, "limit": datasf.MaxResultPageLimit}, ""},
			{"limit 0", map[string]any{"result": stored, "limit": 0}, "limit"},
			{"limit 1001", map[string]any{"result": stored, "limit": datasf.MaxResultPageLimit + 1}, "limit"},
			{"offset -1", map[string]any{"result": stored, "offset": -1}, "offset"},
			{"not a column", map[string]any{"result": stored, "sort_by": "nope"}, "sort_by"},
			{"order without sort_by", map[string]any{"result": stored, "order": "desc"}, "order"},
			{"bad order", map[string]any{"result": stored, "sort_by": "applicant", "order": "up"}, "order"},
			{"not a result", map[string]any{"result": "SELECT *"}, "result"},
			{"unknown argument", map[string]any{"result": stored, "bogus": 1}, "bogus"},
		},
	}
}

func manyResults(n int, ref string) map[string]any {
	m := map[string]any{}
	for i := range n {
		m["t"+strings.Repeat("x", i)] = ref
	}
	return m
}

// TestEveryToolThroughClient calls every tool of the tool list through the
// MCP client session; a tool without calls here fails the test.
func TestEveryToolThroughClient(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	stored := h.query(t, map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT objectid, applicant LIMIT 5"}).Resource.URI
	calls := toolCalls(stored)
	for _, name := range toolNames(t, h) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if len(calls[name]) == 0 {
				t.Fatalf("no calls for tool %s in toolCalls; add some", name)
			}
			for _, tc := range calls[name] {
				res := h.call(t, name, tc.args)
				if tc.arg == "" {
					var out map[string]any
					structured(t, name, tc.args, res, &out)
					if _, ok := out["summary"]; !ok {
						t.Errorf("%s %s: structured content has no summary", name, tc.name)
					}
					continue
				}
				namesArgument(t, errorOf(t, name, tc.args, res), tc.arg)
			}
		})
	}
}
