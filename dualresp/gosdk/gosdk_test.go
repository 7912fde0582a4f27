package gosdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/gosdk"
)

// numbers is an Executor over the rows {"n": 0} … {"n": Total-1}.
type numbers struct{ Total int64 }

// Prepare returns e itself: every query is the same result.
func (e numbers) Prepare(context.Context, dualresp.Query) (dualresp.Plan, error) { return e, nil }

func (e numbers) Count(context.Context) (int64, error) { return e.Total, nil }

func (e numbers) Page(_ context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	var res dualresp.PageResult
	for i := req.Offset; i < min(req.Offset+req.Limit, e.Total); i++ {
		res.Rows = append(res.Rows, json.RawMessage(fmt.Sprintf(`{"n":%d,"label":"row %d"}`, i, i)))
	}
	res.Columns = []dualresp.Column{{Name: "n", Type: "number"}, {Name: "label", Type: "text"}}
	return res, nil
}

// startResults serves a dualresp Server's REST API on a loopback listener.
func startResults(tb testing.TB, total int64) *dualresp.Server {
	tb.Helper()
	results, stop := serveNumbers(total)
	tb.Cleanup(stop)
	return results
}

// serveNumbers serves a dualresp Server over numbers{Total: total} on a
// loopback listener; stop ends both.
func serveNumbers(total int64) (results *dualresp.Server, stop func()) {
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	results, err := dualresp.New(dualresp.Options{
		BaseURL:   ts.URL,
		Executors: map[string]dualresp.Executor{"numbers": numbers{Total: total}},
	})
	if err != nil {
		log.Fatal(err)
	}
	mux.Handle("/resources/", results.Handler())
	return results, func() { _ = results.Close(); ts.Close() }
}

type queryInput struct {
	Below int64 `json:"below,omitempty"`
}

// addQueryTool adds a typed tool answering with a dual response, declaring
// schema as its output schema.
func addQueryTool(srv *mcp.Server, results *dualresp.Server, schema *jsonschema.Schema) {
	mcp.AddTool(srv, &mcp.Tool{Name: "numbers", Description: "Numbers", OutputSchema: schema},
		func(ctx context.Context, _ *mcp.CallToolRequest, in queryInput) (*mcp.CallToolResult, *dualresp.Structured, error) {
			resp, err := results.CreateResponse(ctx, dualresp.Spec{
				Name:       "Numbers",
				Query:      dualresp.Query{Kind: "numbers", Text: "all"},
				SampleSize: 3,
				Metadata:   map[string]any{"source": "test"},
			})
			if err != nil {
				return nil, nil, err
			}
			res, out := gosdk.Result(resp)
			return res, out, nil
		})
}

// connect starts srv and returns a client session connected to it in
// process.
func connect(tb testing.TB, ctx context.Context, srv *mcp.Server) *mcp.ClientSession {
	tb.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestDualResponseThroughTheGoSDK(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	results := startResults(t, 40)
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1.0"}, nil)
	addQueryTool(srv, results, gosdk.OutputSchema())
	cs := connect(t, ctx, srv)

	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].OutputSchema == nil {
		t.Fatalf("ListTools = %+v, %v; want the tool with its output schema", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "numbers", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if res.IsError {
		t.Fatalf("CallTool: error result %+v", res.Content)
	}
	if len(res.Content) != 2 {
		t.Fatalf("content has %d items; want text and resource_link", len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok || !strings.HasPrefix(text.Text, "40 rows match. 3 sample rows follow.") || !strings.Contains(text.Text, "| n | label |") {
		t.Errorf("content[0] = %#v; want the summary and a table", res.Content[0])
	}
	link, ok := res.Content[1].(*mcp.ResourceLink)
	if !ok || !strings.HasPrefix(link.URI, "resource://") || link.MIMEType != dualresp.MIMEType || link.Name != "Numbers" {
		t.Errorf("content[1] = %#v; want a resource_link", res.Content[1])
	}

	// The structured content validates against the tool's output schema on
	// the client side too.
	schema, err := json.Marshal(tools.Tools[0].OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var sc any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	if err := resolved.Validate(sc); err != nil {
		t.Errorf("structured content does not validate against the output schema: %v", err)
	}

	// The application reads the whole result.
	parsed := gosdk.Parse(nil, res)
	if parsed == nil {
		t.Fatal("Parse(tool result) = nil")
	}
	if parsed.TotalCount != 40 || len(parsed.Sample) != 3 || parsed.ResourceURI != link.URI || parsed.Meta["source"] != "test" {
		t.Errorf("parsed: total %d, sample %d, uri %q, meta %v", parsed.TotalCount, len(parsed.Sample), parsed.ResourceURI, parsed.Meta)
	}
	// The structured content leaves the name to the resource_link.
	if parsed.Name == "" || parsed.Name != link.Name || parsed.MIMEType != link.MIMEType {
		t.Errorf("parsed: name %q, MIME type %q; want the resource_link's %q, %q", parsed.Name, parsed.MIMEType, link.Name, link.MIMEType)
	}
	rows, err := parsed.FetchAll(ctx, dualresp.FetchAllOptions{PageSize: 7})
	if err != nil || len(rows) != 40 {
		t.Fatalf("FetchAll = %d rows, %v; want 40", len(rows), err)
	}
	var last struct{ N int }
	if err := rows[39].Decode(&last); err != nil || last.N != 39 {
		t.Errorf("row 39 = %s", rows[39])
	}
}

// TestOutputIsValidated shows that the SDK checks the structured content
// against the declared schema: a schema the dual response does not satisfy
// makes the call fail, so the passing test above is a real check.
func TestOutputIsValidated(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	results := startResults(t, 5)
	strict := gosdk.OutputSchema()
	strict.Properties["metadata"].Required = append(strict.Properties["metadata"].Required, "no_such_key")
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1.0"}, nil)
	addQueryTool(srv, results, strict)
	cs := connect(t, ctx, srv)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "numbers", Arguments: map[string]any{}})
	t.Logf("CallTool with a strict schema: %v", err)
	if err == nil && !res.IsError {
		t.Fatalf("CallTool with a schema the output does not satisfy = %+v; want a validation failure", res)
	}
	if err != nil && !strings.Contains(err.Error(), "validating tool output") {
		t.Errorf("CallTool error = %v; want it to name the output validation", err)
	}
}

func TestCallToolResultAndParse(t *testing.T) {
	t.Parallel()
	results := startResults(t, 10)
	resp, err := results.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "numbers"}, SampleSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	res := gosdk.CallToolResult(resp)
	if res.StructuredContent == nil || len(res.Content) != 2 {
		t.Fatalf("CallToolResult = %+v", res)
	}
	// Through the wire format and back.
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back mcp.CallToolResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*mcp.CallToolResult{"value": res, "wire": &back} {
		p := gosdk.Parse(nil, r)
		if p == nil || p.ID() != resp.ID() || p.TotalCount != 10 || len(p.Sample) != 2 {
			t.Errorf("Parse(%s) = %+v", name, p)
		}
	}
	// Without structured content, the text is tried.
	sc, _ := json.Marshal(resp.StructuredContent())
	textOnly := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(sc)}}}
	if p := gosdk.Parse(nil, textOnly); p == nil || p.ID() != resp.ID() {
		t.Errorf("Parse(JSON text only) = %+v", p)
	}
	if p := gosdk.Parse(nil, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}); p != nil {
		t.Errorf("Parse(plain text) = %+v; want nil", p)
	}
}

// Example shows a go-sdk server whose tool answers with a dual response,
// and an application reading the whole result through the Go client.
func Example() {
	ctx := context.Background()
	results, stop := serveNumbers(4)
	defer stop()

	srv := mcp.NewServer(&mcp.Implementation{Name: "numbers", Version: "1.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "numbers", OutputSchema: gosdk.OutputSchema()},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, *dualresp.Structured, error) {
			resp, err := results.CreateResponse(ctx, dualresp.Spec{Query: dualresp.Query{Kind: "numbers"}, SampleSize: 1})
			if err != nil {
				return nil, nil, err
			}
			res, out := gosdk.Result(resp)
			return res, out, nil
		})

	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "app", Version: "1.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "numbers", Arguments: map[string]any{}})
	if err != nil {
		log.Fatal(err)
	}

	parsed := gosdk.Parse(nil, res)
	fmt.Println(len(parsed.Sample), "sample row of", parsed.TotalCount)
	for row, err := range parsed.Rows(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(row)
	}
	// Output:
	// 1 sample row of 4
	// {"n":0,"label":"row 0"}
	// {"n":1,"label":"row 1"}
	// {"n":2,"label":"row 2"}
	// {"n":3,"label":"row 3"}
}

// Notes that change an answer's meaning reach a host that shows only the
// text content of a go-sdk result.
func TestNotesInText(t *testing.T) {
	t.Parallel()
	results := startResults(t, 10)
	note := "Column names corrected: nmber → number."
	resp, err := results.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "numbers"}, SampleSize: 2, Notes: []string{note}})
	if err != nil {
		t.Fatal(err)
	}
	res := gosdk.CallToolResult(resp)
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok || !strings.Contains(text.Text, note) {
		t.Errorf("text content %+v lacks the note %q", res.Content[0], note)
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(sc), "nmber → number") {
		t.Errorf("structured content %s lacks the note", sc)
	}
}
