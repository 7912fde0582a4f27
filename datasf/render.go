package datasf

import (
	"strings"

	"github.com/datasf-mcp/datasf-mcp/internal/portal"
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

// cell makes a value safe inside a markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return s
}
