// Package mcpgo adapts dualresp to github.com/mark3labs/mcp-go: it renders
// a dual response as an mcp-go tool result, reads one back for the Go
// client, and spills large results of other tools (Spiller, a tool handler
// middleware) into a spill.Store served by the dualresp REST API.
//
// A tool handler answers with a dual response in one line:
//
//	resp, err := results.CreateResponse(ctx, spec)
//	if err != nil { … }
//	return mcpgo.CallToolResult(resp), nil
//
// and declares dualresp.OutputSchema (or a schema of its own that its
// metadata satisfies) as the tool's output schema:
//
//	tool := mcp.NewTool("query", mcp.WithRawOutputSchema(dualresp.OutputSchema))
//
// An application that called the tool reads the full result with
// Parse(client, toolResult) and the dualresp.Parsed it returns.
package mcpgo

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// CallToolResult returns the whole tool result of a dual response: Content
// and the structured content (a *dualresp.Structured).
func CallToolResult(r *dualresp.Response) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: Content(r), StructuredContent: r.StructuredContent()}
}

// CallToolResultJSON is CallToolResult with the compact JSON of the
// structured content as its text block, for clients that read only the
// text and parse it (code rather than a model). The JSON is written once,
// from the structured content the result also carries.
func CallToolResultJSON(r *dualresp.Response) *mcp.CallToolResult {
	sc := r.StructuredContent()
	b, err := json.Marshal(sc)
	if err != nil { // a Structured is plain data; a sample row that is not JSON (a Plan breaking its contract) gets the markdown
		return CallToolResult(r)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(b)), ResourceLink(r.Link())}, StructuredContent: sc}
}

// Content returns the unstructured content of a dual response: a text
// block (the summary and a markdown table of the sample) and a
// resource_link to the full result.
func Content(r *dualresp.Response) []mcp.Content {
	return []mcp.Content{mcp.NewTextContent(r.Text()), ResourceLink(r.Link())}
}

// ResourceLink returns l as an mcp-go resource_link content (mcp-go's
// resource links have no url: the uri and the description name the
// resource).
func ResourceLink(l dualresp.ResourceLink) mcp.ResourceLink {
	rl := mcp.NewResourceLink(l.URI, l.Name, l.Description, l.MIMEType)
	if l.Size != nil {
		n := *l.Size
		rl.Size = &n
	}
	return rl
}

// Parse reads a dual response from an mcp-go tool result: its structured
// content, else the JSON of its text contents. c nil means a Client with
// the default options. It returns nil when res is not a dual response.
func Parse(c *dualresp.Client, res *mcp.CallToolResult) *dualresp.Parsed {
	if res == nil {
		return nil
	}
	var structured any
	switch {
	case len(res.RawStructuredContent) > 0:
		structured = res.RawStructuredContent
	case res.StructuredContent != nil:
		structured = res.StructuredContent
	}
	var (
		texts []string
		link  *mcp.ResourceLink
	)
	for _, content := range res.Content {
		if tc, ok := mcp.AsTextContent(content); ok {
			texts = append(texts, tc.Text)
		} else if link == nil {
			switch rl := content.(type) {
			case mcp.ResourceLink:
				link = &rl
			case *mcp.ResourceLink:
				link = rl
			}
		}
	}
	var p *dualresp.Parsed
	if c == nil {
		p = dualresp.ParseContent(structured, texts...)
	} else {
		p = c.ParseContent(structured, texts...)
	}
	if p != nil && link != nil {
		p.NameFromLink(link.Name, link.MIMEType)
	}
	return p
}
