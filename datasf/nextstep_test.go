package datasf

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// An isError answer has its next step apart (next) only for a caller that
// asks for it in _meta; the error's words are the same either way.
func TestNextStepApart(t *testing.T) {
	t.Parallel()
	tl := queryTool(&toolServer{}) // a syntax error is answered before the portal is read
	call := func(meta *mcp.Meta) errorBody {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name = tl.def.Name
		req.Params.Arguments = map[string]any{"dataset_id": "abcd-1234", "soql": "SELECT n FROM trees"}
		req.Params.Meta = meta
		res, err := tl.handler(t.Context(), req)
		if err != nil || !res.IsError {
			t.Fatalf("query_datasf(FROM) = %v, %v; want an isError result", resultText(res), err)
		}
		var body errorBody
		if err := json.Unmarshal([]byte(resultText(res)), &body); err != nil {
			t.Fatal(err)
		}
		return body
	}
	model := call(nil)
	person := call(&mcp.Meta{AdditionalFields: map[string]any{MetaNextStep: true}})
	if model.Next != "" {
		t.Errorf("without %s: next = %q; want none", MetaNextStep, model.Next)
	}
	if person.Error != model.Error {
		t.Errorf("with %s: error = %q; want the same words as without (%q)", MetaNextStep, person.Error, model.Error)
	}
	if person.Next == "" || !strings.HasSuffix(person.Error, " "+person.Next) || !strings.Contains(person.Next, "query_datasf") {
		t.Errorf("with %s: next = %q; want the last words of error (%q), the step a model takes", MetaNextStep, person.Next, person.Error)
	}
	if reason := strings.TrimSuffix(person.Error, " "+person.Next); !strings.HasPrefix(reason, "SoQL has no FROM") || strings.Contains(reason, "query_datasf") {
		t.Errorf("the reason = %q; want the syntax error without the model's next step", reason)
	}
}
