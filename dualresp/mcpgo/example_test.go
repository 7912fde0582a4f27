package mcpgo_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo"
)

// ExampleCallToolResult is an mcp-go tool handler that answers with a dual
// response: a text block and a resource_link for clients that read content,
// and the structured content (sample, exact total, link) for the rest.
func ExampleCallToolResult() {
	results, stop := serveLetters(30)
	defer stop()

	// Registered with s.AddTool(mcp.NewTool("letters",
	// mcp.WithRawOutputSchema(dualresp.OutputSchema)), handler).
	handler := func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		resp, err := results.CreateResponse(ctx, dualresp.Spec{Name: "Letters", Query: dualresp.Query{Kind: "letters"}, SampleSize: 2})
		if err != nil {
			return nil, err
		}
		return mcpgo.CallToolResult(resp), nil
	}

	res, err := handler(context.Background(), mcp.CallToolRequest{})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range res.Content {
		fmt.Printf("%T\n", c)
	}
	sc := res.StructuredContent.(*dualresp.Structured)
	fmt.Println("total:", sc.Metadata.TotalCount, "sample:", len(sc.Results))
	// Output:
	// mcp.TextContent
	// mcp.ResourceLink
	// total: 30 sample: 2
}

// ExampleParse reads the complete result behind a tool result that an
// mcp-go client received; other results parse as nil.
func ExampleParse() {
	results, stop := serveLetters(3)
	defer stop()
	ctx := context.Background()
	resp, err := results.CreateResponse(ctx, dualresp.Spec{Query: dualresp.Query{Kind: "letters"}, SampleSize: 1})
	if err != nil {
		log.Fatal(err)
	}
	res := mcpgo.CallToolResult(resp) // as client.CallTool returns it

	parsed := mcpgo.Parse(nil, res) // nil: the default dualresp.Client
	rows, err := parsed.FetchAll(ctx, dualresp.FetchAllOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(parsed.Sample), "sample row;", len(rows), "rows in all")
	fmt.Println("plain text parses:", mcpgo.Parse(nil, mcp.NewToolResultText("hello")) != nil)
	// Output:
	// 1 sample row; 3 rows in all
	// plain text parses: false
}
