package datasf

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/mark3labs/mcp-go/mcp"
)

// search_datasf's limits: its input schema and its validation use them.
const (
	MaxSearchQuery     = 500 // characters of query
	MaxSearchLimit     = 20  // datasets per answer
	DefaultSearchLimit = 5
)

// SearchInput is search_datasf's arguments. A nil Limit means
// DefaultSearchLimit.
type SearchInput struct {
	Query  string `json:"query" validate:"required,cleantext,notblank,min=1,max=500" jsonschema:"Keywords, e.g. \"police incidents\"."`
	Limit  *int   `json:"limit,omitempty" validate:"omitnil,min=1,max=20" default:"5"`
	Domain string `json:"domain,omitempty" validate:"omitempty,cleantext" jsonschema:"Portal host. \"a,b\" or \"*\" (all)."`
	Format string `json:"format,omitempty" validate:"omitempty,oneof=auto json markdown"`
}

func searchTool(s *toolServer) tool {
	return newTool[SearchInput](toolDef{
		name:        "search_datasf",
		title:       "Search datasets",
		description: "Search datasets by keywords: ids (e.g. wg3w-h783), names, descriptions. Next: get_schema.",
		openWorld:   true,
		output:      outputSchema[catalogResult](),
	}, s.search)
}

type catalogResult struct {
	Summary  string        `json:"summary"`
	Query    string        `json:"query,omitempty"`
	Category string        `json:"category,omitempty"`
	Domain   string        `json:"domain,omitempty"`
	Count    int           `json:"count"`
	Results  []datasetItem `json:"results"`
	// Portals are the portals list_datasf with domain "*" lists.
	Portals []portalItem `json:"portals,omitempty"`
	// Categories are the portal's categories, when nothing matched.
	Categories []categoryCount `json:"categories,omitempty"`
}

func (s *toolServer) search(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	in, refused := arguments[SearchInput](req)
	if refused != nil {
		return refused, nil
	}
	limit := or(in.Limit, DefaultSearchLimit)
	var (
		ds     []socrata.Dataset
		err    error
		domain string // "" on the configured portal alone
		moved  string // the line saying the portal moved
	)
	switch d := strings.TrimSpace(in.Domain); {
	case d == "*" || strings.Contains(d, ","):
		domains, derr := s.portals.Domains(ctx, d)
		if derr != nil {
			return upstreamError(derr, "the domain", ""), nil
		}
		domain = cmp.Or(strings.Join(domains, ","), "*")
		if ds, err = s.portals.Catalog.SearchPortals(ctx, in.Query, domains, limit); err == nil {
			ds = slices.DeleteFunc(ds, func(x socrata.Dataset) bool { return !s.portals.Permitted(x.Domain) })
		}
	default:
		p, perr := s.portals.Get(ctx, d)
		if perr != nil {
			return upstreamError(perr, "the domain", ""), nil
		}
		if d != "" {
			domain = p.Domain // named, even the configured one: the hits say their domain
		}
		ds, err = p.Client.Search(ctx, in.Query, limit)
		_, moved = s.portals.Moved(ctx, d, p)
	}
	if err != nil {
		return upstreamError(err, "the catalog search", ""), nil
	}
	out := catalogResult{Query: in.Query, Domain: domain, Results: datasetItems(ds, limit, domain)}
	out.Count = len(out.Results)
	out.Summary = fmt.Sprintf("%d datasets match %q.", out.Count, in.Query)
	table := catalogTable(out.Results)
	switch {
	case out.Count == 0 && domain == "":
		out.Summary += " Try other or fewer words, or list_datasf to browse."
		out.Categories, table = s.noHits(ctx)
		if out.Categories != nil {
			out.Summary += " The portal's categories are below: list_datasf with one of them shows its datasets."
		}
	case out.Count == 0:
		out.Summary += " Try other or fewer words, another domain, or list_datasf to browse."
	case domain != "":
		out.Summary += " Call get_schema with a dataset id and its domain to see its columns."
	default:
		out.Summary += " Call get_schema with a dataset id to see its columns."
	}
	out.Summary = s.sourceNotes(out.Summary, moved)
	s.offlineLinks(out.Results)
	return render(responseFormat(ctx, in.Format), out, out.Summary, table), nil
}

type datasetItem struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Category    string   `json:"category,omitempty"`
	UpdatedAt   string   `json:"updated_at,omitempty"`
	Link        string   `json:"link,omitempty"`
	Columns     []string `json:"columns,omitempty"`
	// Domain is the portal that publishes it, when the call named one.
	Domain string `json:"domain,omitempty"`
}

// maxDescription bounds each description in search and list answers: the
// model needs enough to choose a dataset, and get_schema gives the rest.
const maxDescription = 400

// datasetItems are the first limit datasets of ds; with domain set ("" for
// the configured portal's answers), each says its portal: domain, or its
// own metadata.domain when there is one (a search of several portals).
func datasetItems(ds []socrata.Dataset, limit int, domain string) []datasetItem {
	items := make([]datasetItem, 0, len(ds))
	for _, d := range ds {
		if len(items) == limit {
			break
		}
		it := datasetItem{ID: d.ID, Name: d.Name, Description: clipText(d.Description, maxDescription), Category: d.Category, Link: d.Link}
		if domain != "" {
			it.Domain = cmp.Or(strings.ToLower(d.Domain), domain)
		}
		if !d.UpdatedAt.IsZero() {
			it.UpdatedAt = d.UpdatedAt.UTC().Format(time.RFC3339)
		}
		items = append(items, it)
	}
	return items
}

// clipText cuts s to at most n characters, marking the cut.
func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}

func catalogTable(items []datasetItem) string {
	var b strings.Builder
	if slices.ContainsFunc(items, func(it datasetItem) bool { return it.Domain != "" }) {
		// Another portal's datasets, or several portals': each row names its domain.
		b.WriteString("| domain | id | name | category | updated |\n|---|---|---|---|---|\n")
		for _, it := range items {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell(it.Domain), cell(it.ID), cell(it.Name), cell(it.Category), cell(it.UpdatedAt))
		}
		return b.String()
	}
	b.WriteString("| id | name | category | updated |\n|---|---|---|---|\n")
	for _, it := range items {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(it.ID), cell(it.Name), cell(it.Category), cell(it.UpdatedAt))
	}
	return b.String()
}
