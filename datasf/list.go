package datasf

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/internal/portal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/mark3labs/mcp-go/mcp"
)

// list_datasf's limits: its input schema and its validation use them.
const (
	MaxCategory      = 200 // characters of category
	MaxListLimit     = 100 // datasets per answer
	DefaultListLimit = 10
)

// ListInput is list_datasf's arguments. A nil Limit means DefaultListLimit.
type ListInput struct {
	Category string `json:"category,omitempty" validate:"omitempty,cleantext,max=200" jsonschema:"e.g. \"Public Safety\"; omit for all."`
	Limit    *int   `json:"limit,omitempty" validate:"omitnil,min=1,max=100" default:"10"`
	Domain   string `json:"domain,omitempty" validate:"omitempty,cleantext" jsonschema:"Portal host. \"*\" lists portals."`
	Format   string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

func (in ListInput) format() string { return in.Format }

func listTool(s *toolServer) tool {
	return newTool[ListInput](toolDef{
		name:        "list_datasf",
		title:       "List datasets",
		description: "Datasets, most recently updated first, optionally of one category. Next: get_schema.",
		openWorld:   true,
	}, s.list)
}

func (s *toolServer) list(ctx context.Context, req mcp.CallToolRequest, in ListInput) (catalogResult, error) {
	limit := or(in.Limit, DefaultListLimit)
	if strings.TrimSpace(in.Domain) == "*" {
		return s.listPortals(ctx, req, limit)
	}
	p, err := s.portals.Get(ctx, strings.TrimSpace(in.Domain))
	if err != nil {
		return catalogResult{}, &opError{what: "the domain", err: err}
	}
	var ds []socrata.Dataset
	p, err = s.portals.Run(ctx, p, func(p *portal.Target) (err error) {
		ds, err = p.Client.List(ctx, in.Category, limit)
		return err
	})
	if err != nil {
		return catalogResult{}, &opError{what: "the catalog listing", err: err}
	}
	p, moved := s.portals.Moved(ctx, strings.TrimSpace(in.Domain), p)
	domain := otherDomain(p)
	out := catalogResult{Category: in.Category, Domain: domain, Results: datasetItems(ds, limit, domain)}
	out.Count = len(out.Results)
	var sum summary
	switch {
	case out.Count == 1 && in.Category != "":
		sum.facts = fmt.Sprintf("The most recently updated dataset in category %q.", in.Category)
	case out.Count == 1:
		sum.facts = "The most recently updated dataset."
	case in.Category != "":
		sum.facts = fmt.Sprintf("The %d most recently updated datasets in category %q.", out.Count, in.Category)
	case out.Count == 0:
		sum.facts = "The portal lists no dataset."
	default:
		sum.facts = fmt.Sprintf("The %d most recently updated datasets.", out.Count)
	}
	if out.Count == 0 && in.Category != "" && domain != "" {
		sum = summary{facts: fmt.Sprintf("No dataset of %s is in category %q.", domain, in.Category),
			next: "Call list_datasf without a category to see its datasets.", code: NextList}
	} else if out.Count == 0 && in.Category != "" {
		sum = summary{facts: fmt.Sprintf("No dataset is in category %q.", in.Category)}
		if out.Categories = s.noHits(ctx); out.Categories != nil {
			sum.next, sum.code = "The portal's categories are below: call list_datasf with one of them.", NextCategory
		}
	}
	if note := s.catalogOnlyNote(p.Domain, out.Results); note != "" {
		sum.facts += " " + note
	}
	out.Summary, out.next = sum.forCall(req)
	out.Summary = s.sourceNotes(out.Summary, moved)
	s.offlineLinks(out.Results)
	return out, nil
}

// portalItem is one portal of list_datasf's domain "*" answer.
type portalItem struct {
	Domain   string `json:"domain"`
	Datasets int    `json:"datasets,omitempty"` // 0: unknown (Discovery gave no count)
}

// listPortals answers list_datasf with domain "*": the portals the
// Discovery API knows (only the allowed ones with an allowlist), most
// datasets first.
func (s *toolServer) listPortals(ctx context.Context, req mcp.CallToolRequest, limit int) (catalogResult, error) {
	all, err := s.portals.Catalog.CatalogDomains(ctx)
	if errors.Is(err, socrata.ErrNotFound) {
		return s.knownPortals(req), nil
	}
	if err != nil {
		return catalogResult{}, &opError{what: "the list of portals", err: err}
	}
	out := catalogResult{Domain: "*", Results: []datasetItem{}, Portals: []portalItem{}, portalCounts: true}
	for _, p := range all {
		if len(out.Portals) == limit {
			break
		}
		if d, err := socrata.CheckDomain(p.Domain); err == nil && s.portals.Permitted(d) {
			out.Portals = append(out.Portals, portalItem{Domain: d, Datasets: p.Count})
		}
	}
	out.Count = len(out.Portals)
	out.Summary, out.next = summary{facts: nouns(int64(out.Count), "portal", "") + ", most datasets first.",
		next: "Pass one as domain to search_datasf, list_datasf, get_schema and query_datasf.", code: NextDomain}.forCall(req)
	return out, nil
}

// knownPortals answers list_datasf with domain "*" when Discovery has no
// list of portals: "Discovery has no /domains listing endpoint (404)"
// (evidence discovery-no-domains-endpoint, observed 2026-05-23). It names the portals this server knows and says
// how to reach any other.
func (s *toolServer) knownPortals(req mcp.CallToolRequest) catalogResult {
	out := catalogResult{Domain: "*", Results: []datasetItem{}, Portals: []portalItem{}}
	for _, d := range s.portals.Known() {
		out.Portals = append(out.Portals, portalItem{Domain: d})
	}
	out.Count = len(out.Portals)
	out.Summary, out.next = summary{
		facts: fmt.Sprintf("The Discovery API no longer lists portals (it answered 404), so their dataset counts are unknown. "+
			"This server knows %d: %s.", out.Count, strings.Join(s.portals.Known(), ", ")),
		next: "Any Socrata portal's host name works as domain (if this server allows it); " +
			"search_datasf with domain \"*\" finds datasets on every portal.",
		code: NextAnyDomain,
	}.forCall(req)
	return out
}

// portalTable is the markdown table of list_datasf's portals, with their
// dataset counts when they are known.
func portalTable(portals []portalItem, counts bool) string {
	var b strings.Builder
	if !counts {
		b.WriteString("| domain |\n|---|\n")
		for _, p := range portals {
			fmt.Fprintf(&b, "| %s |\n", cell(p.Domain))
		}
		return b.String()
	}
	b.WriteString("| domain | datasets |\n|---|---|\n")
	for _, p := range portals {
		fmt.Fprintf(&b, "| %s | %d |\n", cell(p.Domain), p.Datasets)
	}
	return b.String()
}
