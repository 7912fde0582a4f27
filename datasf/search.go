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

	"github.com/datasf-mcp/datasf-mcp/internal/portal"
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
		hits   rankedHits
		domain string         // "" on the configured portal alone
		reader *portal.Reader // the portal's, for row counts; nil over several portals
		moved  string         // the line saying the portal moved
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
		p, err := s.portals.Run(ctx, p, func(p *portal.Target) error {
			var err error
			if hits, err = s.indexes.search(ctx, p.Client, p.Domain, in.Query, limit); err != nil {
				// Without the catalog, the Discovery API's candidates,
				// reranked.
				s.log.Warn("search: the portal's catalog is not kept; reranking the Discovery API's candidates", "domain", p.Domain, "error", err)
				ds, serr := p.Client.Search(ctx, in.Query, min(max(4*limit, 40), 100))
				if serr != nil {
					return serr
				}
				hits = rerank(ds, in.Query, limit)
			}
			return nil
		})
		if err != nil {
			return catalogResult{}, &opError{what: "the catalog search", err: err}
		}
		if d != "" {
			domain = p.Domain // named, even the configured one: the hits say their domain
		}
		reader = s.portals.Reader(p)
		_, moved = s.portals.Moved(ctx, d, p)
	}
	out := catalogResult{Query: in.Query, Domain: domain, Results: searchItems(hits.hits, limit, domain)}
	if reader != nil {
		// The row counts read the portal's schemas through the registry:
		// a move the portal answers to them (its catalog came from the
		// Discovery API, which does not answer moves) is followed, and
		// the answer says so.
		from := reader.Portal()
		addRowCounts(ctx, reader, out.Results)
		if now := reader.Portal(); now != from {
			_, moved = s.portals.Moved(ctx, strings.TrimSpace(in.Domain), now)
			if domain != "" {
				out.Domain = now.Domain
				for i := range out.Results {
					out.Results[i].Domain = now.Domain
				}
			}
		}
	}
	out.Count = len(out.Results)
	sum := summary{facts: searchFacts(in.Query, out.Count, hits)}
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
	// Matched says why the search words matched, strongest first:
	// "title", "tags: crime, sfpd", "columns: fooditems", "values:
	// Larceny Theft (incident_category)", "category", "description", …
	Matched []string `json:"matched,omitempty"`
	// PageViews is how often the dataset's page was viewed, as the
	// portal counts it, in search answers when it says.
	PageViews int64  `json:"page_views,omitempty"`
	Link      string `json:"link,omitempty"`
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
	searchDescription = 100
	searchFields      = 3
)

// searchItems are the first limit hits as search answers.
func searchItems(hits []rankedHit, limit int, domain string) []datasetItem {
	items := make([]datasetItem, 0, min(len(hits), limit))
	for _, h := range hits {
		if len(items) == limit {
			break
		}
		it := datasetItem{ID: h.ID, Name: h.Name, Description: clipText(cleanDescription(h.Description), searchDescription)}
		if domain != "" {
			// Another portal's, or several portals': the table names each
			// one's domain and category.
			it.Domain = cmp.Or(strings.ToLower(h.Domain), domain)
			it.Category = h.Category
		}
		if !h.UpdatedAt.IsZero() {
			it.UpdatedAt = h.UpdatedAt.UTC().Format(time.DateOnly)
		}
		it.Matched = matchedWords(h)
		it.PageViews = h.PageViews
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
		b.WriteString("| id | name | rows | views | updated | matched | first columns |\n|---|---|---|---|---|---|---|\n")
		for _, it := range items {
			rows := ""
			if it.RowCount != nil {
				rows = strconv.FormatInt(*it.RowCount, 10)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", cell(it.ID), cell(it.Name), rows, compactCount(it.PageViews), cell(it.UpdatedAt),
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

// matchedWords says why a hit matched, strongest first, in the words of
// the portal's page: its title, which of its tags, which columns, which
// column values, its category, its description.
func matchedWords(h rankedHit) []string {
	var out, weak []string
	for _, f := range h.Fields {
		switch f {
		case "name":
			f = "title"
		case "tags":
			if len(h.Tags) > 0 {
				f += ": " + strings.Join(h.Tags[:min(len(h.Tags), 2)], ", ")
			}
		case "columns":
			if len(h.Columns) > 0 {
				f += ": " + strings.Join(h.Columns[:min(len(h.Columns), 2)], ", ")
			}
		case "values":
			if len(h.Values) == 0 {
				continue
			}
			var vs []string
			for _, v := range h.Values {
				vs = append(vs, fmt.Sprintf("%s (%s)", clipText(v.Value, 40), v.Column))
			}
			f += ": " + strings.Join(vs, ", ")
		case "category", "column descriptions":
			// Said only when nothing stronger matched: every dataset of
			// a category, and most column descriptions, share such words.
			weak = append(weak, f)
			continue
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return weak
	}
	return out[:min(len(out), 3)]
}

// compactCount is n for a person skimming: 950, 12k, 1.3M; "" for 0.
func compactCount(n int64) string {
	switch {
	case n <= 0:
		return ""
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatInt((n+500)/1000, 10) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

// A search is broad when it is a word or two that many datasets match,
// and its top hits are close when the second scores nearly as well as the
// first: either way the first hit may not be the dataset meant, and the
// answer says so and names the most used of the hits shown.
const (
	broadStrong = 4 // datasets scoring at least half the first's
	broadWords  = 2
	closeScores = 0.9
)

// searchFacts is a search answer's first sentences: how many datasets it
// shows, and, when the search is broad or its top hits close, a line that
// says so and names the most used of them.
func searchFacts(query string, shown int, found rankedHits) string {
	var facts string
	switch shown {
	case 0:
		return fmt.Sprintf("No dataset matches %q.", query)
	case 1:
		facts = fmt.Sprintf("1 dataset matches %q.", query)
	default:
		facts = fmt.Sprintf("%d datasets match %q, best first.", shown, query)
	}
	hits := found.hits[:min(len(found.hits), shown)]
	if len(hits) > 0 && weakMatch(hits[0]) {
		// No hit has the words where a dataset is named: the search may
		// have missed it, and naming the most used hit would mislead.
		return facts + " None has the words in its title, tags or values (only in descriptions or column names): the dataset wanted may not be among them; try other words, or list_datasf by category."
	}
	if len(hits) < 2 {
		return facts
	}
	terms := rank.Terms(query)
	broad := found.strong >= broadStrong && len(terms) <= broadWords
	near := hits[0].Score > 0 && hits[1].Score >= closeScores*hits[0].Score && !covers(hits[0].Name, terms)
	if !broad && !near {
		return facts
	}
	most := 0 // the most used of the hits that are not weak matches
	for i, h := range hits {
		if h.PageViews > hits[most].PageViews && !weakMatch(h) {
			most = i
		}
	}
	why := fmt.Sprintf("%d datasets fit about as well: a broad search", found.strong)
	if !broad {
		why = "the first two fit about as well"
	}
	if hits[most].PageViews == 0 {
		return facts + " " + strings.ToUpper(why[:1]) + why[1:] + "; compare their names and descriptions before choosing."
	}
	if most == 0 {
		return fmt.Sprintf("%s %s%s; the first is also the most used (%s views). Check its name and description fit the question.",
			facts, strings.ToUpper(why[:1]), why[1:], compactCount(hits[0].PageViews))
	}
	// The hit's id and use, not its name: the name is in the hit's own
	// row, and a search answer's text keeps within 1,200 bytes.
	return fmt.Sprintf("%s %s%s; the most used of these is %s (%s views). Compare names and descriptions before choosing.",
		facts, strings.ToUpper(why[:1]), why[1:], hits[most].ID, compactCount(hits[most].PageViews))
}

// weakMatch reports whether a hit matched only in its description or
// columns: not by its id, title, tags or a column value.
func weakMatch(h rankedHit) bool {
	if len(h.Fields) == 0 {
		return false // a candidate of Discovery's, matched by what we do not see
	}
	for _, f := range h.Fields {
		switch f {
		case "id", "name", "tags", "values":
			return false
		}
	}
	return true
}

// covers reports whether the name has every term.
func covers(name string, terms []string) bool {
	have := rank.Terms(name)
	for _, t := range terms {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}
