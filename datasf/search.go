package datasf

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/rank"
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

func (in SearchInput) format() string { return in.Format }

func searchTool(s *toolServer) tool {
	return newTool[SearchInput](toolDef{
		name:        "search_datasf",
		title:       "Search datasets",
		description: "Search datasets by keywords: ids (e.g. wg3w-h783), names, descriptions. Next: get_schema.",
		openWorld:   true,
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
	// portalCounts is whether Portals have their dataset counts.
	portalCounts bool
	// next is the next step Summary leaves out (summary.forCall).
	next NextStep
}

func (c catalogResult) nextLeftOut() NextStep { return c.next }

// markdown is the summary and the table of what the answer lists: its
// portals, its categories (when nothing matched) or its datasets.
func (c catalogResult) markdown() string {
	var table string
	switch {
	case c.Portals != nil:
		table = portalTable(c.Portals, c.portalCounts)
	case len(c.Categories) > 0:
		table = categoryTable(c.Categories)
	default:
		table = catalogTable(c.Results)
	}
	return c.Summary + "\n\n" + table
}

func (s *toolServer) search(ctx context.Context, req mcp.CallToolRequest, in SearchInput) (catalogResult, error) {
	limit := or(in.Limit, DefaultSearchLimit)
	var (
		hits   []rankedHit
		domain string        // "" on the configured portal alone
		schema schemaFetcher // the portal's schemas, for row counts; nil over several portals
		moved  string        // the line saying the portal moved
	)
	switch d := strings.TrimSpace(in.Domain); {
	case d == "*" || strings.Contains(d, ","):
		domains, derr := s.portals.Domains(ctx, d)
		if derr != nil {
			return catalogResult{}, &opError{what: "the domain", err: derr}
		}
		domain = cmp.Or(strings.Join(domains, ","), "*")
		// Discovery finds the candidates over several portals; our ranker
		// orders them, as it orders a single portal's catalog.
		ds, err := s.portals.Catalog.SearchPortals(ctx, in.Query, domains, min(max(4*limit, 40), 100))
		if err != nil {
			return catalogResult{}, &opError{what: "the catalog search", err: err}
		}
		ds = slices.DeleteFunc(ds, func(x socrata.Dataset) bool { return !s.portals.Permitted(x.Domain) })
		hits = rerank(ds, in.Query, limit)
	default:
		p, perr := s.portals.Get(ctx, d)
		if perr != nil {
			return catalogResult{}, &opError{what: "the domain", err: perr}
		}
		if d != "" {
			domain = p.Domain // named, even the configured one: the hits say their domain
		}
		schema = p.Schemas
		var err error
		if hits, err = s.indexes.search(ctx, p.Client, p.Domain, in.Query, limit); err != nil {
			// Without the catalog, the Discovery API's candidates,
			// reranked.
			s.log.Warn("search: the portal's catalog is not kept; reranking the Discovery API's candidates", "domain", p.Domain, "error", err)
			ds, serr := p.Client.Search(ctx, in.Query, min(max(4*limit, 40), 100))
			if serr != nil {
				return catalogResult{}, &opError{what: "the catalog search", err: serr}
			}
			hits = rerank(ds, in.Query, limit)
		}
		_, moved = s.portals.Moved(ctx, d, p)
	}
	out := catalogResult{Query: in.Query, Domain: domain, Results: searchItems(hits, limit, domain)}
	if schema != nil {
		addRowCounts(ctx, schema, out.Results)
	}
	out.Count = len(out.Results)
	sum := summary{facts: fmt.Sprintf("%d datasets match %q, best first.", out.Count, in.Query)}
	switch out.Count {
	case 0:
		sum.facts = fmt.Sprintf("No dataset matches %q.", in.Query)
	case 1:
		sum.facts = fmt.Sprintf("1 dataset matches %q.", in.Query)
	}
	switch {
	case out.Count == 0 && domain == "":
		sum.next, sum.code = "Try other or fewer words, or list_datasf to browse.", NextBrowse
		out.Categories = s.noHits(ctx)
		if out.Categories != nil {
			sum.next += " The portal's categories are below: list_datasf with one of them shows its datasets."
			sum.code = NextCategory
		}
	case out.Count == 0:
		sum.next, sum.code = "Try other or fewer words, another domain, or list_datasf to browse.", NextBrowse
	case domain != "":
		sum.next, sum.code = "Call get_schema with a dataset id and its domain to see its columns.", NextSchema
	default:
		sum.next, sum.code = "Call get_schema with a dataset id to see its columns.", NextSchema
	}
	if note := s.catalogOnlyNote(cmp.Or(domain, s.portals.Default().Domain), out.Results); note != "" {
		sum.facts += " " + note
	}
	out.Summary, out.next = sum.forCall(req)
	out.Summary = s.sourceNotes(out.Summary, moved)
	s.offlineLinks(out.Results)
	return out, nil
}

// schemaFetcher gives a dataset's schema through the schema cache.
type schemaFetcher interface {
	Schema(ctx context.Context, datasetID string) (*socrata.Schema, bool, error)
}

// Row counts in search answers: the schemas of the first rowCountHits hits
// are read at once (through the schema cache, which the get_schema call
// that follows reuses), within rowCountTimeout; a hit whose schema is not
// there in time has no row_count.
const (
	rowCountHits    = 5
	rowCountTimeout = 4 * time.Second
)

func addRowCounts(ctx context.Context, schemas schemaFetcher, items []datasetItem) {
	ctx, cancel := context.WithTimeout(ctx, rowCountTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for i := range items[:min(len(items), rowCountHits)] {
		wg.Go(func() {
			if sc, _, err := schemas.Schema(ctx, items[i].ID); err == nil {
				n := sc.RowCount
				items[i].RowCount = &n
			}
		})
	}
	wg.Wait()
}

type datasetItem struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Category    string `json:"category,omitempty"`
	UpdatedAt   string `json:"updated_at,omitempty"`
	// RowCount is the dataset's row count, in search answers when the
	// portal gave it in time.
	RowCount *int64 `json:"row_count,omitempty"`
	// Matched says which fields the search words matched, strongest first
	// ("name", "columns: fooditems", "description", …).
	Matched []string `json:"matched,omitempty"`
	Link    string   `json:"link,omitempty"`
	// Columns are the dataset's first field names, in search answers.
	Columns []string `json:"columns,omitempty"`
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

// Search answers are made for choosing among five datasets within
// searchTokenBudget Claude tokens (TestSearchAnswerTokens): a cleaned
// description of searchDescription characters, the first searchFields
// field names and what matched.
const (
	searchTokenBudget = 1200
	searchDescription = 240
	searchFields      = 6
)

// searchItems are the first limit hits as search answers.
func searchItems(hits []rankedHit, limit int, domain string) []datasetItem {
	items := make([]datasetItem, 0, min(len(hits), limit))
	for _, h := range hits {
		if len(items) == limit {
			break
		}
		it := datasetItem{ID: h.ID, Name: h.Name, Description: clipText(cleanDescription(h.Description), searchDescription), Category: h.Category}
		if domain != "" {
			it.Domain = cmp.Or(strings.ToLower(h.Domain), domain)
		}
		if !h.UpdatedAt.IsZero() {
			it.UpdatedAt = h.UpdatedAt.UTC().Format(time.DateOnly)
		}
		for _, f := range h.Fields {
			if f == "columns" && len(h.Columns) > 0 {
				f += ": " + strings.Join(h.Columns, ", ")
			}
			it.Matched = append(it.Matched, f)
		}
		for _, f := range h.FieldNames {
			if len(it.Columns) == searchFields {
				break
			}
			if !strings.HasPrefix(f, ":") {
				it.Columns = append(it.Columns, f)
			}
		}
		items = append(items, it)
	}
	return items
}

// summaryHeadRE is DataSF's "A. SUMMARY" heading at the start of a
// description, perhaps after a note; summaryHeadSpan is how far into the
// text it is looked for (a regexp over a whole description of several KB,
// for each of 20 hits, cost a search more than its ranking did).
var summaryHeadRE = regexp.MustCompile(`^(?i)(?:note[^.]*\.\s*)?(?:[A-F]\.\s*)?summary:?\s*`)

const summaryHeadSpan = 400

// cleanDescription is a description as plain text on one line, without
// HTML and without DataSF's "A. SUMMARY" heading.
func cleanDescription(s string) string {
	s = strings.Join(strings.Fields(rank.PlainText(s)), " ")
	if loc := summaryHeadRE.FindStringIndex(s[:min(len(s), summaryHeadSpan)]); loc != nil {
		s = s[loc[1]:]
	}
	return s
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
	if slices.ContainsFunc(items, func(it datasetItem) bool { return len(it.Matched) > 0 }) {
		// A search: what a model chooses by.
		b.WriteString("| id | name | rows | updated | matched | first columns |\n|---|---|---|---|---|---|\n")
		for _, it := range items {
			rows := ""
			if it.RowCount != nil {
				rows = strconv.FormatInt(*it.RowCount, 10)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", cell(it.ID), cell(it.Name), rows, cell(it.UpdatedAt),
				cell(strings.Join(it.Matched, "; ")), cell(strings.Join(it.Columns, ", ")))
		}
		return b.String()
	}
	b.WriteString("| id | name | category | updated |\n|---|---|---|---|\n")
	for _, it := range items {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(it.ID), cell(it.Name), cell(it.Category), cell(it.UpdatedAt))
	}
	return b.String()
}
