package datasf

import (
	"encoding/json"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/internal/portal"
	"github.com/mark3labs/mcp-go/mcp"
)

// otherDomain is p's domain when it is not the configured portal, else "".
func otherDomain(p *portal.Portal) string {
	if p.Configured {
		return ""
	}
	return p.Domain
}

// datasetName names a dataset in messages: "dataset ID", plus " on
// DOMAIN" for another portal's.
func datasetName(p *portal.Portal, id string) string {
	if d := otherDomain(p); d != "" {
		return "dataset " + id + " on " + d
	}
	return "dataset " + id
}

// render builds a tool result: structured content plus text for clients that
// show text (markdown by default, compact JSON for format=json).
func render(format string, structured any, summary, table string) *mcp.CallToolResult {
	var text string
	if format == "json" {
		b, err := json.Marshal(structured)
		if err != nil {
			text = summary
		} else {
			text = string(b)
		}
	} else {
		text = summary + "\n\n" + table
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(text)},
		StructuredContent: structured,
	}
}

// cell makes a value safe inside a markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return s
}
