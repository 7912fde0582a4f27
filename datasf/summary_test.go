package datasf_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// nextStepCodes are the codes of the next steps answers leave out.
var nextStepCodes = []datasf.NextStep{
	datasf.NextSchema, datasf.NextQuery, datasf.NextBrowse, datasf.NextCategory, datasf.NextList,
	datasf.NextDomain, datasf.NextAnyDomain, datasf.NextOffset, datasf.NextLinks,
}

// callApart calls a tool through c, asking for the next step apart
// (datasf.MetaNextStep) when apart.
func callApart(t *testing.T, c *client.Client, tool string, args map[string]any, apart bool) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	if apart {
		req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{datasf.MetaNextStep: true}}
	}
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatalf("%s(%v): %v", tool, args, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v) = error %s; want an answer", tool, args, resultText(res))
	}
	return res
}

// resultText is a result's text contents.
func resultText(res *mcp.CallToolResult) string {
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// asMap is a result's structured content as JSON decodes it.
func asMap(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// An answer whose summary tells the model its next step says it in the
// same words as ever to a caller that does not ask for it apart, with no
// code in _meta; to one that asks (the command line), it says what it found
// without the step, whose code is in the result's _meta, and the rest of
// the answer is the same.
func TestNextStepLeftOutOnRequest(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	e := newDomainsEnv(t, datasf.Config{})
	// Two stored results, so that list_results with limit 1 has more.
	for range 2 {
		callApart(t, h.mcp, "query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT applicant LIMIT 3"}, false)
	}
	num := func(m map[string]any, k string) int { n, _ := m[k].(float64); return int(n) }
	tests := []struct {
		name   string
		c      *client.Client
		before func() // readies the fake for the call
		tool   string
		args   map[string]any
		// model is the summary a model reads, facts what is left of it
		// without the next step, both from the answer's structured content.
		model, facts func(m map[string]any) string
		code         datasf.NextStep
	}{
		{
			name: "search hits", c: h.mcp, tool: "search_datasf", args: map[string]any{"query": "mobile food facility permit"},
			model: func(m map[string]any) string {
				return matchFacts(num(m, "count"), "mobile food facility permit") + " Call get_schema with a dataset id to see its columns."
			},
			facts: func(m map[string]any) string {
				return matchFacts(num(m, "count"), "mobile food facility permit")
			},
			code: datasf.NextSchema,
		},
		{
			name: "search hits on a portal", c: e.env.MCP, tool: "search_datasf", args: map[string]any{"query": "311", "domain": chiDomain},
			model: func(m map[string]any) string {
				return matchFacts(num(m, "count"), "311") + " Call get_schema with a dataset id and its domain to see its columns."
			},
			facts: func(m map[string]any) string {
				return matchFacts(num(m, "count"), "311")
			},
			code: datasf.NextSchema,
		},
		{
			name: "search nothing, with categories", c: h.mcp, tool: "search_datasf", args: map[string]any{"query": "qqxzq vwkjj"},
			model: func(map[string]any) string {
				return `No dataset matches "qqxzq vwkjj". Try other or fewer words, or list_datasf to browse. ` +
					"The portal's categories are below: list_datasf with one of them shows its datasets."
			},
			facts: func(map[string]any) string { return `No dataset matches "qqxzq vwkjj".` },
			code:  datasf.NextCategory,
		},
		{
			name: "search nothing on a portal", c: e.env.MCP, tool: "search_datasf", args: map[string]any{"query": "qqxzq vwkjj", "domain": chiDomain},
			model: func(map[string]any) string {
				return `No dataset matches "qqxzq vwkjj". Try other or fewer words, another domain, or list_datasf to browse.`
			},
			facts: func(map[string]any) string { return `No dataset matches "qqxzq vwkjj".` },
			code:  datasf.NextBrowse,
		},
		{
			name: "list no such category", c: h.mcp, tool: "list_datasf", args: map[string]any{"category": "Nope"},
			model: func(map[string]any) string {
				return `No dataset is in category "Nope". The portal's categories are below: call list_datasf with one of them.`
			},
			facts: func(map[string]any) string { return `No dataset is in category "Nope".` },
			code:  datasf.NextCategory,
		},
		{
			name: "list no such category on a portal", c: e.env.MCP, tool: "list_datasf", args: map[string]any{"category": "Nope", "domain": chiDomain},
			model: func(map[string]any) string {
				return `No dataset of data.cityofchicago.org is in category "Nope". Call list_datasf without a category to see its datasets.`
			},
			facts: func(map[string]any) string { return `No dataset of data.cityofchicago.org is in category "Nope".` },
			code:  datasf.NextList,
		},
		{
			name: "list portals", c: e.env.MCP, tool: "list_datasf", args: map[string]any{"domain": "*"},
			model: func(m map[string]any) string {
				return fmt.Sprintf("%d portals, most datasets first. Pass one as domain to search_datasf, list_datasf, get_schema and query_datasf.", num(m, "count"))
			},
			facts: func(m map[string]any) string { return fmt.Sprintf("%d portals, most datasets first.", num(m, "count")) },
			code:  datasf.NextDomain,
		},
		{
			name: "list portals without Discovery's list", c: e.env.MCP, tool: "list_datasf", args: map[string]any{"domain": "*"},
			before: func() { e.fake.Fail(1, socratatest.Fault{Status: http.StatusNotFound}) },
			model: func(m map[string]any) string {
				return fmt.Sprintf("The Discovery API no longer lists portals (it answered 404), so their dataset counts are unknown. "+
					"This server knows %d: %s. Any Socrata portal's host name works as domain (if this server allows it); "+
					`search_datasf with domain "*" finds datasets on every portal.`, num(m, "count"), sfDomain)
			},
			facts: func(m map[string]any) string {
				return fmt.Sprintf("The Discovery API no longer lists portals (it answered 404), so their dataset counts are unknown. "+
					"This server knows %d: %s.", num(m, "count"), sfDomain)
			},
			code: datasf.NextAnyDomain,
		},
		{
			name: "schema", c: h.mcp, tool: "get_schema", args: map[string]any{"dataset_id": "rqzj-sfat"},
			model: func(m map[string]any) string {
				return fmt.Sprintf("“%s” (rqzj-sfat): %d columns, %d rows. Use the fieldName values in query_datasf.", m["name"], len(m["columns"].([]any)), num(m, "row_count"))
			},
			facts: func(m map[string]any) string {
				return fmt.Sprintf("“%s” (rqzj-sfat): %d columns, %d rows.", m["name"], len(m["columns"].([]any)), num(m, "row_count"))
			},
			code: datasf.NextQuery,
		},
		{
			name: "schema on a portal", c: e.env.MCP, tool: "get_schema", args: map[string]any{"dataset_id": sharedID, "domain": chiDomain},
			model: func(m map[string]any) string {
				return fmt.Sprintf("“311 Service Requests” (abcd-1234 on %s): 2 columns, %d rows. Use the fieldName values in query_datasf, with domain %s.", chiDomain, rowsOf[chiDomain], chiDomain)
			},
			facts: func(map[string]any) string {
				return fmt.Sprintf("“311 Service Requests” (abcd-1234 on %s): 2 columns, %d rows.", chiDomain, rowsOf[chiDomain])
			},
			code: datasf.NextQuery,
		},
		{
			name: "results with more", c: h.mcp, tool: "list_results", args: map[string]any{"limit": 1},
			model: func(m map[string]any) string {
				return fmt.Sprintf("Results 1-1 of %d stored results of this session, newest first. More: offset %d.", num(m, "total"), num(m, "next_offset"))
			},
			facts: func(m map[string]any) string {
				return fmt.Sprintf("Results 1-1 of %d stored results of this session, newest first.", num(m, "total"))
			},
			code: datasf.NextOffset,
		},
	}
	for _, tt := range tests {
		if tt.before != nil {
			tt.before()
		}
		model := callApart(t, tt.c, tt.tool, tt.args, false)
		if tt.before != nil {
			tt.before()
		}
		person := callApart(t, tt.c, tt.tool, tt.args, true)
		mm, pm := asMap(t, model), asMap(t, person)

		if want := tt.model(mm); mm["summary"] != want {
			t.Errorf("%s: %s(%v).summary = %q; want the model's words %q", tt.name, tt.tool, tt.args, mm["summary"], want)
		}
		if text, want := resultText(model), tt.model(mm)+"\n\n"; !strings.HasPrefix(text, want) {
			t.Errorf("%s: %s(%v) text = %q; want it to begin %q", tt.name, tt.tool, tt.args, text, want)
		}
		if model.Meta != nil && model.Meta.AdditionalFields[datasf.MetaNextStep] != nil {
			t.Errorf("%s: %s(%v)._meta = %v; want no %s for a model", tt.name, tt.tool, tt.args, model.Meta.AdditionalFields, datasf.MetaNextStep)
		}

		if want := tt.facts(pm); pm["summary"] != want {
			t.Errorf("%s: %s(%v) apart: summary = %q; want %q", tt.name, tt.tool, tt.args, pm["summary"], want)
		}
		for _, name := range toolNames(t, h) {
			if text := resultText(person); strings.Contains(text, name) {
				t.Errorf("%s: %s(%v) apart: text %q names the tool %s", tt.name, tt.tool, tt.args, text, name)
			}
		}
		var code any
		if person.Meta != nil {
			code = person.Meta.AdditionalFields[datasf.MetaNextStep]
		}
		if code != string(tt.code) || !slices.Contains(nextStepCodes, tt.code) {
			t.Errorf("%s: %s(%v) apart: _meta %s = %v; want %q, a code the command line knows", tt.name, tt.tool, tt.args, datasf.MetaNextStep, code, tt.code)
		}

		// Apart from the summary (and what other calls stored since), the
		// two answers are the same.
		for _, m := range []map[string]any{mm, pm} {
			delete(m, "summary")
			delete(m, "total")
			delete(m, "next_offset")
		}
		if tt.tool == "list_results" {
			continue // other tests store results on the shared session meanwhile
		}
		if diff := cmp.Diff(mm, pm); diff != "" {
			t.Errorf("%s: %s(%v): the answer apart differs beyond its summary (-model +apart):\n%s", tt.name, tt.tool, tt.args, diff)
		}
	}
}

// matchFacts is search_datasf's first sentence for n datasets found,
// in the number n takes.
func matchFacts(n int, query string) string {
	switch n {
	case 0:
		return fmt.Sprintf("No dataset matches %q.", query)
	case 1:
		return fmt.Sprintf("1 dataset matches %q.", query)
	}
	return fmt.Sprintf("%d datasets match %q, best first.", n, query)
}
