// Package gosdk adapts dualresp to the official MCP Go SDK,
// github.com/modelcontextprotocol/go-sdk: it renders a dual response as the
// SDK's tool result and reads one back for the Go client.
//
// With the SDK's typed tools, a handler returns the structured content as
// its output, which the SDK validates against the tool's output schema
// before sending it; give the tool OutputSchema (dualresp.OutputSchema),
// since a schema inferred from dualresp.Structured would not allow the
// caller's metadata keys:
//
//	mcp.AddTool(srv, &mcp.Tool{Name: "query", OutputSchema: gosdk.OutputSchema()},
//		func(ctx context.Context, req *mcp.CallToolRequest, in Input) (*mcp.CallToolResult, *dualresp.Structured, error) {
//			resp, err := results.CreateResponse(ctx, dualresp.Spec{…})
//			if err != nil {
//				return nil, nil, err
//			}
//			res, out := gosdk.Result(resp)
//			return res, out, nil
//		})
//
// With Server.AddTool (untyped handlers), return CallToolResult(resp).
// An application that called the tool reads the full result with
// Parse(client, toolResult).
package gosdk

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// CallToolResult returns the whole tool result of a dual response: Content
// and the structured content (a *dualresp.Structured).
func CallToolResult(r *dualresp.Response) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: Content(r), StructuredContent: r.StructuredContent()}
}

// Result returns what a typed tool handler (mcp.ToolHandlerFor[In,
// *dualresp.Structured]) returns for a dual response: a result holding the
// Content, and the structured content as the output, which the SDK
// validates against the tool's output schema and sends as the result's
// structuredContent.
func Result(r *dualresp.Response) (*mcp.CallToolResult, *dualresp.Structured) {
	return &mcp.CallToolResult{Content: Content(r)}, r.StructuredContent()
}

// Content returns the unstructured content of a dual response: a text
// block (the summary and a markdown table of the sample) and a
// resource_link to the full result.
func Content(r *dualresp.Response) []mcp.Content {
	return []mcp.Content{&mcp.TextContent{Text: r.Text()}, ResourceLink(r.Link())}
}

// ResourceLink returns l as a resource_link content (the SDK's links have
// no url: the uri and the description name the resource).
func ResourceLink(l dualresp.ResourceLink) *mcp.ResourceLink {
	rl := &mcp.ResourceLink{URI: l.URI, Name: l.Name, Description: l.Description, MIMEType: l.MIMEType}
	if l.Size != nil {
		n := *l.Size
		rl.Size = &n
	}
	return rl
}

// OutputSchema returns dualresp.OutputSchema, the JSON schema of the
// structured content, as a new *jsonschema.Schema for mcp.Tool.OutputSchema.
func OutputSchema() *jsonschema.Schema {
	var s jsonschema.Schema
	if err := json.Unmarshal(dualresp.OutputSchema, &s); err != nil {
		panic("gosdk: dualresp.OutputSchema does not parse: " + err.Error())
	}
	return &s
}

// Parse reads a dual response from a go-sdk tool result: its structured
// content, else the JSON of its text contents. c nil means a Client with
// the default options. It returns nil when res is not a dual response.
func Parse(c *dualresp.Client, res *mcp.CallToolResult) *dualresp.Parsed {
	if res == nil {
		return nil
	}
	var (
		texts []string
		link  *mcp.ResourceLink
	)
	for _, content := range res.Content {
		switch x := content.(type) {
		case *mcp.TextContent:
			texts = append(texts, x.Text)
		case *mcp.ResourceLink:
			if link == nil {
				link = x
			}
		}
	}
	var p *dualresp.Parsed
	if c == nil {
		p = dualresp.ParseContent(res.StructuredContent, texts...)
	} else {
		p = c.ParseContent(res.StructuredContent, texts...)
	}
	if p != nil && link != nil {
		p.NameFromLink(link.Name, link.MIMEType)
	}
	return p
}
