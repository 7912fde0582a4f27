package datasf

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// A connection without a session or a bearer token is told by list_results
// to use the links query_datasf returned, in one sentence; apart, the
// sentence ends where the next step began.
func TestListResultsWithoutSessionApart(t *testing.T) {
	t.Parallel()
	tl := listResultsTool(&toolServer{}) // no session in the context: nothing is read
	call := func(meta *mcp.Meta) *mcp.CallToolResult {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name = tl.def.Name
		req.Params.Arguments = map[string]any{}
		req.Params.Meta = meta
		res, err := tl.handler(t.Context(), req)
		if err != nil || res.IsError {
			t.Fatalf("list_results() = %v, %v; want an answer", resultText(res), err)
		}
		return res
	}
	model := call(nil)
	person := call(&mcp.Meta{AdditionalFields: map[string]any{MetaNextStep: true}})
	const words = "This connection has no session and no bearer token, so no results are listed to it; use the links that query_datasf returned."
	if got := model.StructuredContent.(listResultsOutput).Summary; got != words || model.Meta != nil {
		t.Errorf("list_results() without a session: summary %q, _meta %v; want %q and no _meta", got, model.Meta, words)
	}
	const facts = "This connection has no session and no bearer token, so no results are listed to it."
	if got := person.StructuredContent.(listResultsOutput).Summary; got != facts {
		t.Errorf("list_results() without a session, apart: summary %q; want %q", got, facts)
	}
	var code any
	if person.Meta != nil {
		code = person.Meta.AdditionalFields[MetaNextStep]
	}
	if code != string(NextLinks) {
		t.Errorf("list_results() without a session, apart: _meta %s = %v; want %q", MetaNextStep, code, NextLinks)
	}
}
