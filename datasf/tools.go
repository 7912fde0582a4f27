package datasf

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo"
	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/soql"
)

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

func (s *toolServer) search(ctx context.Context, _ mcp.CallToolRequest, in *SearchInput) (*mcp.CallToolResult, error) {
	limit := or(in.Limit, DefaultSearchLimit)
	var (
		ds     []socrata.Dataset
		err    error
		domain string // "" on the configured portal alone
	)
	switch d := strings.TrimSpace(in.Domain); {
	case d == "*" || strings.Contains(d, ","):
		domains, derr := s.portals.domainsOf(ctx, d)
		if derr != nil {
			return upstreamError(derr, "the domain", ""), nil
		}
		domain = cmp.Or(strings.Join(domains, ","), "*")
		if ds, err = s.portals.catalog.SearchPortals(ctx, in.Query, domains, limit); err == nil {
			ds = slices.DeleteFunc(ds, func(x socrata.Dataset) bool { return !s.portals.permitted(x.Domain) })
		}
	default:
		p, perr := s.portals.get(ctx, d)
		if perr != nil {
			return upstreamError(perr, "the domain", ""), nil
		}
		if d != "" {
			domain = p.domain // named, even the configured one: the hits say their domain
		}
		ds, err = p.client.Search(ctx, in.Query, limit)
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
	return render(responseFormat(ctx, in.Format), out, out.Summary, table), nil
}

func (s *toolServer) list(ctx context.Context, _ mcp.CallToolRequest, in *ListInput) (*mcp.CallToolResult, error) {
	limit := or(in.Limit, DefaultListLimit)
	if strings.TrimSpace(in.Domain) == "*" {
		return s.listPortals(ctx, in, limit), nil
	}
	p, err := s.portals.get(ctx, strings.TrimSpace(in.Domain))
	if err != nil {
		return upstreamError(err, "the domain", ""), nil
	}
	domain := s.otherDomain(p)
	ds, err := p.client.List(ctx, in.Category, limit)
	if err != nil {
		return upstreamError(err, "the catalog listing", ""), nil
	}
	out := catalogResult{Category: in.Category, Domain: domain, Results: datasetItems(ds, limit, domain)}
	out.Count = len(out.Results)
	if in.Category != "" {
		out.Summary = fmt.Sprintf("The %d most recently updated datasets in category %q.", out.Count, in.Category)
	} else {
		out.Summary = fmt.Sprintf("The %d most recently updated datasets.", out.Count)
	}
	table := catalogTable(out.Results)
	if out.Count == 0 && in.Category != "" && domain != "" {
		out.Summary = fmt.Sprintf("No dataset of %s is in category %q. Call list_datasf without a category to see its datasets.", domain, in.Category)
	} else if out.Count == 0 && in.Category != "" {
		out.Summary = fmt.Sprintf("No dataset is in category %q.", in.Category)
		if out.Categories, table = s.noHits(ctx); out.Categories != nil {
			out.Summary += " The portal's categories are below: call list_datasf with one of them."
		}
	}
	return render(responseFormat(ctx, in.Format), out, out.Summary, table), nil
}

type schemaColumn struct {
	Name        string `json:"name"`
	FieldName   string `json:"fieldName"`
	DataType    string `json:"dataType"`
	Description string `json:"description,omitempty"`
}

type schemaResult struct {
	Summary     string         `json:"summary"`
	DatasetID   string         `json:"dataset_id"`
	Domain      string         `json:"domain,omitempty"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Category    string         `json:"category,omitempty"`
	RowCount    int64          `json:"row_count"`
	Cached      bool           `json:"cached"`
	Columns     []schemaColumn `json:"columns"`
}

func (s *toolServer) schema(ctx context.Context, _ mcp.CallToolRequest, in *SchemaInput) (*mcp.CallToolResult, error) {
	p, err := s.portals.get(ctx, strings.TrimSpace(in.Domain))
	if err != nil {
		return upstreamError(err, "the domain", ""), nil
	}
	sc, cached, err := p.schemas.Schema(ctx, in.DatasetID)
	if err != nil {
		return upstreamError(err, s.datasetName(p, in.DatasetID), "Check the id with search_datasf."), nil
	}
	out := schemaResult{
		DatasetID: in.DatasetID, Domain: s.otherDomain(p), Name: sc.Name, Description: sc.Description, Category: sc.Category,
		RowCount: sc.RowCount, Cached: cached, Columns: make([]schemaColumn, 0, len(sc.Columns)),
	}
	for _, c := range sc.Columns {
		out.Columns = append(out.Columns, schemaColumn{Name: c.Name, FieldName: c.FieldName, DataType: c.DataType, Description: c.Description})
	}
	out.Summary = fmt.Sprintf("%s (%s): %d columns, %d rows. Use the fieldName values in query_datasf.", sc.Name, in.DatasetID, len(out.Columns), sc.RowCount)
	if out.Domain != "" {
		out.Summary = fmt.Sprintf("%s (%s on %s): %d columns, %d rows. Use the fieldName values in query_datasf, with domain %s.", sc.Name, in.DatasetID, out.Domain, len(out.Columns), sc.RowCount, out.Domain)
	}
	var table strings.Builder
	table.WriteString("| fieldName | type | name |\n|---|---|---|\n")
	for _, c := range out.Columns {
		fmt.Fprintf(&table, "| %s | %s | %s |\n", cell(c.FieldName), cell(c.DataType), cell(c.Name))
	}
	return render(responseFormat(ctx, in.Format), out, out.Summary, table.String()), nil
}

func (s *toolServer) query(ctx context.Context, _ mcp.CallToolRequest, in *QueryInput) (*mcp.CallToolResult, error) {
	// The query is parsed once; correction, the local checks, the count,
	// the sample, the hints and the stored query all use this tree.
	parsed, err := parseSoQL(ctx, in.SoQL)
	if err != nil {
		return syntaxError(err), nil
	}
	p, err := s.portals.get(ctx, strings.TrimSpace(in.Domain))
	if err != nil {
		return upstreamError(err, "the domain", ""), nil
	}
	domain := s.otherDomain(p)
	sc, _, err := p.schemas.Schema(ctx, in.DatasetID)
	if err != nil {
		return upstreamError(err, s.datasetName(p, in.DatasetID), "Check the id with search_datasf."), nil
	}
	fixed := fuzzymatch.Result{Query: in.SoQL}
	if or(in.AutoCorrect, true) {
		fixed = fuzzymatch.CorrectQuery(parsed, in.SoQL, fieldNames(sc), fuzzymatch.Options{})
	}
	corrections := fixed.Corrections
	// What the portal would refuse is answered now, in its words
	// (checks.go). Positions point into the query as the model wrote it.
	if res := localCheck(parsed, in.SoQL, in.DatasetID, sc, fixed); res != nil {
		return res, nil
	}
	stable := parsed.WithStableOrderFor(schemaFields(sc))

	sampleSize := or(in.SampleSize, s.sample)
	if sampleSize == 0 {
		sampleSize = DefaultSampleSize
	}
	// What a model needs on every call, said once: the dataset's name is
	// the resource's name.
	meta := map[string]any{
		"dataset_id": in.DatasetID,
		"query":      stable.String(),
	}
	name := sc.Name
	if domain != "" {
		meta["domain"] = domain
		name += " (" + domain + ")"
	}
	if len(corrections) > 0 {
		meta["corrections"] = corrections
	}
	if len(fixed.Ambiguous) > 0 {
		meta["ambiguous"] = fixed.Ambiguous
	}
	if fixed.Query != in.SoQL {
		meta["original_query"] = in.SoQL
	}
	// Provenance (provenance.go): how fresh the rows are, and the URL that
	// runs this query on the portal.
	portalURL := portalQueryURL(p.domain, in.DatasetID, stable.String())
	meta["portal_url"] = portalURL
	if !sc.UpdatedAt.IsZero() {
		meta["as_of"] = sc.UpdatedAt.UTC().Format(time.RFC3339)
	}
	// One call: the count and the sample run concurrently (two upstream
	// requests), and the sample's response headers give the columns.
	stored := storedQuery(domain, in.DatasetID, stable)
	stored.Parsed = stable
	resp, err := s.results.CreateResponse(ctx, dualresp.Spec{
		Name:        name,
		Description: stable.String(),
		Query:       stored,
		SampleSize:  sampleSize,
		Metadata:    meta,
		Owner:       recordOwner(ctx),
		Notes:       correctionNotes(corrections, fixed.Query),
	})
	var countErr *dualresp.CountError
	var sampleErr *dualresp.QueryError
	switch {
	case errors.As(err, &countErr):
		return queryError(countErr.Err, s.datasetName(p, in.DatasetID), sc), nil
	case errors.As(err, &sampleErr):
		return queryError(sampleErr.Err, s.datasetName(p, in.DatasetID), sc), nil
	case err != nil:
		return toolError{Error: "The result could not be stored: " + err.Error(), ErrorType: errAPI}.result(), nil
	}
	s.session.add(ctx, resp.ID())
	res := mcpgo.CallToolResult(resp)
	if zeroAnswer(resp, parsed) {
		addHints(res, s.zeroHints(ctx, p.client, in.DatasetID, parsed, sc)) // hints.go
	}
	if responseFormat(ctx, in.Format) == FormatJSON {
		b, _ := json.Marshal(res.StructuredContent)
		res.Content[0] = mcp.NewTextContent(string(b))
	} else {
		addTextLine(res, provenanceLine(sc.UpdatedAt, portalURL))
	}
	return res, nil
}

// correctionNotes are the sentences an answer must carry when column names
// were corrected: each correction, and the query that ran.
func correctionNotes(corrections []fuzzymatch.Correction, ran string) []string {
	if len(corrections) == 0 {
		return nil
	}
	pairs := make([]string, len(corrections))
	for i, c := range corrections {
		pairs[i] = c.Original + " → " + c.Corrected
	}
	return []string{"Column names corrected: " + strings.Join(pairs, ", ") + " (the query run: " + ran + ")."}
}

// parseCounter counts the SoQL parses of a call when its context carries
// one (see parseSoQL); tests use it.
type parseCounter struct{ n atomic.Int64 }

type parseCounterKey struct{}

// parseSoQL parses SoQL text, counting the parse in ctx's parseCounter.
func parseSoQL(ctx context.Context, text string) (*soql.Query, error) {
	if c, ok := ctx.Value(parseCounterKey{}).(*parseCounter); ok {
		c.n.Add(1)
	}
	return soql.Parse(text)
}

// syntaxError answers a SoQL syntax error locally, with its position.
func syntaxError(err error) *mcp.CallToolResult {
	var se *soql.SyntaxError
	if errors.As(err, &se) && se.Got == "FROM" {
		return toolError{Error: fmt.Sprintf("SoQL has no FROM: the dataset is the dataset_id argument. Remove FROM and the name after it (line %d, column %d), and call query_datasf again.", se.Pos.Line, se.Pos.Column),
			ErrorType: errValidation, Code: "soql_syntax",
			Details: map[string]any{"line": se.Pos.Line, "column": se.Pos.Column, "expected": se.Expected, "got": se.Got}}.result()
	}
	if errors.As(err, &se) {
		return toolError{Error: "soql has a syntax error: " + se.Error() + ". Fix the query and call query_datasf again.",
			ErrorType: errValidation, Code: "soql_syntax",
			Details: map[string]any{"line": se.Pos.Line, "column": se.Pos.Column, "expected": se.Expected, "got": se.Got}}.result()
	}
	return validationError("soql could not be read: "+err.Error(), nil)
}

// queryError translates a failed query, adding the closest real columns when
// Socrata says a column does not exist. datasetID names the dataset (with
// its domain when it is not the configured portal's).
func queryError(err error, datasetID string, sc *socrata.Schema) *mcp.CallToolResult {
	var api *socrata.APIError
	if errors.As(err, &api) && api.Code == "query.soql.no-such-column" {
		col, _ := api.Data["column"].(string)
		close := fuzzymatch.Closest(col, fieldNames(sc), 5)
		if close == nil {
			close = []string{} // an empty list, not null, for the model
		}
		msg := fmt.Sprintf("No such column %q in %s (%s).", col, datasetID, api.Message)
		if len(close) > 0 {
			msg += " Closest columns: " + strings.Join(close, ", ") + "."
		}
		msg += " Call get_schema for the full list."
		return toolError{Error: msg, ErrorType: errValidation, Code: "no_such_column", Details: map[string]any{
			"code": api.Code, "column": col, "closest_columns": close, "socrata_message": api.Message,
		}}.result()
	}
	return upstreamError(err, "the query on "+datasetID, "Check the id with search_datasf.")
}

// otherDomain is p's domain when it is not the configured portal, else "".
func (s *toolServer) otherDomain(p *portal) string {
	if p == s.portals.def {
		return ""
	}
	return p.domain
}

// datasetName names a dataset in messages: "dataset ID", plus " on
// DOMAIN" for another portal's.
func (s *toolServer) datasetName(p *portal, id string) string {
	if d := s.otherDomain(p); d != "" {
		return "dataset " + id + " on " + d
	}
	return "dataset " + id
}

// portalItem is one portal of list_datasf's domain "*" answer.
type portalItem struct {
	Domain   string `json:"domain"`
	Datasets int    `json:"datasets"`
}

// listPortals answers list_datasf with domain "*": the portals the
// Discovery API knows (only the allowed ones with an allowlist), most
// datasets first.
func (s *toolServer) listPortals(ctx context.Context, in *ListInput, limit int) *mcp.CallToolResult {
	all, err := s.portals.catalog.Portals(ctx)
	if err != nil {
		return upstreamError(err, "the list of portals", "")
	}
	out := catalogResult{Domain: "*", Results: []datasetItem{}, Portals: []portalItem{}}
	for _, p := range all {
		if len(out.Portals) == limit {
			break
		}
		if d, err := socrata.CheckDomain(p.Domain); err == nil && s.portals.permitted(d) {
			out.Portals = append(out.Portals, portalItem{Domain: d, Datasets: p.Count})
		}
	}
	out.Count = len(out.Portals)
	out.Summary = fmt.Sprintf("%d portals, most datasets first. Pass one as domain to search_datasf, list_datasf, get_schema and query_datasf.", out.Count)
	var table strings.Builder
	table.WriteString("| domain | datasets |\n|---|---|\n")
	for _, p := range out.Portals {
		fmt.Fprintf(&table, "| %s | %d |\n", cell(p.Domain), p.Datasets)
	}
	return render(responseFormat(ctx, in.Format), out, out.Summary, table.String())
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

// cell makes a value safe inside a markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return s
}
