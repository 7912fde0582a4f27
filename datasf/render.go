package datasf

import (
	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/portal"
)

// otherDomain is p's domain when it is not the configured portal, else "".
func otherDomain(p *portal.Target) string {
	if p.Configured {
		return ""
	}
	return p.Domain
}

// datasetName names a dataset in messages: "dataset ID", plus " on
// DOMAIN" for another portal's.
func datasetName(p *portal.Target, id string) string {
	if d := otherDomain(p); d != "" {
		return "dataset " + id + " on " + d
	}
	return "dataset " + id
}

// cell makes a value safe inside a markdown table cell: at most 80
// characters, then escaped (dualresp.MarkdownText), so that a portal's
// text never acts as markup.
func cell(s string) string {
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return dualresp.MarkdownText(s)
}

// portalWords marks text the portal wrote (a dataset's name) inside the
// tool's own sentences: quoted and escaped, so that it reads as data, never
// as the tool's words or as markup.
func portalWords(s string) string {
	return "“" + dualresp.MarkdownText(s) + "”"
}
