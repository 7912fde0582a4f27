package gosdk_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/gosdk"
)

// ExampleResult is a typed go-sdk tool handler that answers with a dual
// response: the SDK validates the structured output against
// gosdk.OutputSchema() and sends it as structuredContent.
func ExampleResult() {
	results, stop := serveNumbers(40)
	defer stop()

	// Registered with mcp.AddTool(srv, &mcp.Tool{Name: "numbers",
	// OutputSchema: gosdk.OutputSchema()}, handler).
	handler := func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, *dualresp.Structured, error) {
		resp, err := results.CreateResponse(ctx, dualresp.Spec{Name: "Numbers", Query: dualresp.Query{Kind: "numbers"}, SampleSize: 3})
		if err != nil {
			return nil, nil, err
		}
		res, out := gosdk.Result(resp)
		return res, out, nil
	}

	res, out, err := handler(context.Background(), nil, struct{}{})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range res.Content {
		fmt.Printf("%T\n", c)
	}
	fmt.Println("total:", out.Metadata.TotalCount, "sample:", len(out.Results))
	// Output:
	// *mcp.TextContent
	// *mcp.ResourceLink
	// total: 40 sample: 3
}

// ExampleParse reads the complete result behind a tool result that a
// go-sdk client received; other results parse as nil.
func ExampleParse() {
	results, stop := serveNumbers(3)
	defer stop()
	ctx := context.Background()
	resp, err := results.CreateResponse(ctx, dualresp.Spec{Query: dualresp.Query{Kind: "numbers"}, SampleSize: 1})
	if err != nil {
		log.Fatal(err)
	}
	res := gosdk.CallToolResult(resp) // as ClientSession.CallTool returns it

	parsed := gosdk.Parse(nil, res) // nil: the default dualresp.Client
	rows, err := parsed.FetchAll(ctx, dualresp.FetchAllOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(parsed.Sample), "sample row;", len(rows), "rows in all")
	plain := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}
	fmt.Println("plain text parses:", gosdk.Parse(nil, plain) != nil)
	// Output:
	// 1 sample row; 3 rows in all
	// plain text parses: false
}
