package mcpgo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo"
)

// letters is an Executor over the rows {"i": 0, "letter": "a"} … for
// Total rows.
type letters struct{ Total int64 }

// Prepare returns e itself: every query is the same result.
func (e letters) Prepare(context.Context, dualresp.Query) (dualresp.Plan, error) { return e, nil }

func (e letters) Count(context.Context) (int64, error) { return e.Total, nil }

func (e letters) Page(_ context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	var res dualresp.PageResult
	for i := req.Offset; i < min(req.Offset+req.Limit, e.Total); i++ {
		res.Rows = append(res.Rows, json.RawMessage(fmt.Sprintf(`{"i":%d,"letter":"%c"}`, i, 'a'+i%26)))
	}
	return res, nil
}

func newResults(tb testing.TB, total int64) *dualresp.Server {
	tb.Helper()
	results, stop := serveLetters(total)
	tb.Cleanup(stop)
	return results
}

// serveLetters serves a dualresp Server over letters{Total: total} on a
// loopback listener; stop ends both.
func serveLetters(total int64) (results *dualresp.Server, stop func()) {
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	results, err := dualresp.New(dualresp.Options{BaseURL: ts.URL, CleanupInterval: -1,
		Executors: map[string]dualresp.Executor{"letters": letters{Total: total}}})
	if err != nil {
		log.Fatal(err)
	}
	mux.Handle("/resources/", results.Handler())
	return results, func() { _ = results.Close(); ts.Close() }
}

func TestCallToolResult(t *testing.T) {
	t.Parallel()
	results := newResults(t, 30)
	resp, err := results.CreateResponse(t.Context(), dualresp.Spec{
		Name: "Letters", Query: dualresp.Query{Kind: "letters"}, SampleSize: 2,
		Columns: []dualresp.Column{{Name: "i"}, {Name: "letter"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := mcpgo.CallToolResult(resp)
	if len(res.Content) != 2 {
		t.Fatalf("Content has %d items; want 2", len(res.Content))
	}
	text, ok := mcp.AsTextContent(res.Content[0])
	if !ok || text.Text != resp.Text() {
		t.Errorf("content[0] = %#v; want the text %q", res.Content[0], resp.Text())
	}
	link, ok := res.Content[1].(mcp.ResourceLink)
	if !ok {
		t.Fatalf("content[1] is %T; want mcp.ResourceLink", res.Content[1])
	}
	if link.Type != "resource_link" || link.URI != resp.URI() || link.Name != "Letters" || link.MIMEType != "application/json" || link.Description != resp.Link().Description || strings.Contains(link.Description, resp.URL()) {
		t.Errorf("resource link = %+v", link)
	}

	// The whole tool result survives the wire.
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	raw := json.RawMessage(b)
	back, err := mcp.ParseCallToolResult(&raw)
	if err != nil {
		t.Fatalf("ParseCallToolResult: %v", err)
	}
	want, _ := json.Marshal(resp.StructuredContent())
	got, _ := json.Marshal(back.StructuredContent)
	if diff := cmp.Diff(jsonValue(t, want), jsonValue(t, got)); diff != "" {
		t.Errorf("structuredContent on the wire (-want +got):\n%s", diff)
	}
	if _, ok := back.Content[1].(mcp.ResourceLink); !ok {
		t.Errorf("content[1] on the wire is %T; want mcp.ResourceLink", back.Content[1])
	}

	for name, r := range map[string]*mcp.CallToolResult{"value": res, "wire": back} {
		p := mcpgo.Parse(nil, r)
		if p == nil || p.ID() != resp.ID() || p.TotalCount != 30 || len(p.Sample) != 2 {
			t.Errorf("Parse(%s) = %+v", name, p)
		}
	}
	textOnly := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(want))}}
	if p := mcpgo.Parse(nil, textOnly); p == nil || p.ID() != resp.ID() {
		t.Errorf("Parse(JSON text only) = %+v", p)
	}
	if p := mcpgo.Parse(nil, mcp.NewToolResultText("hello")); p != nil {
		t.Errorf("Parse(plain text) = %+v; want nil", p)
	}

	// dualresp's own Parse takes mcp-go's results too, as the README's
	// client shows (cmd/datasf-mcp/readme_goclient_test.go, in the app module).
	c, err := dualresp.NewClient(dualresp.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]any{"*CallToolResult": res, "CallToolResult": *res} {
		if p := c.Parse(r); p == nil || p.ID() != resp.ID() || p.TotalCount != 30 || p.Name != "Letters" {
			t.Errorf("Client.Parse(%s) = %+v", name, p)
		}
	}
	for name, r := range map[string]any{"nil *CallToolResult": (*mcp.CallToolResult)(nil), "plain tool result": mcp.NewToolResultText("hello")} {
		if p := c.Parse(r); p != nil {
			t.Errorf("Client.Parse(%s) = %+v; want nil", name, p)
		}
	}
}

// CallToolResultJSON's text is the structured content's JSON; the rest is
// CallToolResult's.
func TestCallToolResultJSON(t *testing.T) {
	t.Parallel()
	results := newResults(t, 30)
	resp, err := results.CreateResponse(t.Context(), dualresp.Spec{
		Name: "Letters", Query: dualresp.Query{Kind: "letters"}, SampleSize: 2,
		Columns: []dualresp.Column{{Name: "i"}, {Name: "letter"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := mcpgo.CallToolResultJSON(resp)
	want, _ := json.Marshal(resp.StructuredContent())
	if text, ok := mcp.AsTextContent(res.Content[0]); !ok || text.Text != string(want) {
		t.Errorf("CallToolResultJSON content[0] = %#v; want the text %s", res.Content[0], want)
	}
	plain := mcpgo.CallToolResult(resp)
	if diff := cmp.Diff(plain.Content[1:], res.Content[1:]); diff != "" {
		t.Errorf("CallToolResultJSON's other content differs from CallToolResult's (-want +got):\n%s", diff)
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if diff := cmp.Diff(jsonValue(t, want), jsonValue(t, sc)); diff != "" {
		t.Errorf("CallToolResultJSON's structured content differs from CallToolResult's (-want +got):\n%s", diff)
	}
}

// TestOutputSchemaValidation serves a dual response through an mcp-go
// server that validates structured content against dualresp.OutputSchema.
func TestOutputSchemaValidation(t *testing.T) {
	t.Parallel()
	results := newResults(t, 12)
	s := server.NewMCPServer("test", "1.0", server.WithOutputSchemaValidation())
	tool := mcp.NewTool("letters", mcp.WithRawOutputSchema(dualresp.OutputSchema))
	s.AddTool(tool, func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		resp, err := results.CreateResponse(ctx, dualresp.Spec{Query: dualresp.Query{Kind: "letters"}, Metadata: map[string]any{"extra": 1}})
		if err != nil {
			return nil, err
		}
		return mcpgo.CallToolResult(resp), nil
	})
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "letters"
	res, err := c.CallTool(t.Context(), req)
	if err != nil || res.IsError {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	p := mcpgo.Parse(nil, res)
	if p == nil || p.TotalCount != 12 {
		t.Fatalf("Parse = %+v", p)
	}
	// The structured content leaves the name to the resource_link.
	if want := "result " + p.ID(); p.Name != want || p.MIMEType != dualresp.MIMEType {
		t.Errorf("Parse: name %q, MIME type %q; want %q, %q (the resource_link's)", p.Name, p.MIMEType, want, dualresp.MIMEType)
	}
	rows, err := p.FetchAll(t.Context(), dualresp.FetchAllOptions{PageSize: 5})
	if err != nil || len(rows) != 12 {
		t.Errorf("FetchAll = %d rows, %v; want 12", len(rows), err)
	}
}

func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Example shows an mcp-go tool answering with a dual response and an
// application reading the whole result.
func Example() {
	results, stop := serveLetters(3)
	defer stop()

	s := server.NewMCPServer("letters", "1.0")
	s.AddTool(mcp.NewTool("letters", mcp.WithRawOutputSchema(dualresp.OutputSchema)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			resp, err := results.CreateResponse(ctx, dualresp.Spec{Query: dualresp.Query{Kind: "letters"}, SampleSize: 1})
			if err != nil {
				return nil, err
			}
			return mcpgo.CallToolResult(resp), nil
		})

	ctx := context.Background()
	c, err := client.NewInProcessClient(s)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		log.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "letters"
	res, err := c.CallTool(ctx, req)
	if err != nil {
		log.Fatal(err)
	}

	parsed := mcpgo.Parse(nil, res)
	fmt.Println(len(parsed.Sample), "sample row of", parsed.TotalCount)
	for row, err := range parsed.Rows(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(row)
	}
	// Output:
	// 1 sample row of 3
	// {"i":0,"letter":"a"}
	// {"i":1,"letter":"b"}
	// {"i":2,"letter":"c"}
}

// Notes that change an answer's meaning reach a host that shows only the
// text content, and one that shows only the structured content.
func TestNotesInTextAndStructured(t *testing.T) {
	t.Parallel()
	results := newResults(t, 30)
	note := "Column names corrected: letr → letter."
	resp, err := results.CreateResponse(t.Context(), dualresp.Spec{
		Query: dualresp.Query{Kind: "letters"}, SampleSize: 2, Notes: []string{note},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := mcpgo.CallToolResult(resp)
	text, _ := mcp.AsTextContent(res.Content[0])
	if !strings.Contains(text.Text, note) {
		t.Errorf("text content %q lacks the note %q", text.Text, note)
	}
	if s := resp.StructuredContent().Summary; !strings.Contains(s, note) {
		t.Errorf("structured summary %q lacks the note %q", s, note)
	}
}
