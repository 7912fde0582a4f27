package datasf

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/expiring"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo"
	"github.com/datasf-mcp/datasf-mcp/dualresp/spill"
	"github.com/datasf-mcp/datasf-mcp/internal/analyze"
	"github.com/datasf-mcp/datasf-mcp/internal/portal"
	"github.com/datasf-mcp/datasf-mcp/schemacache"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Version is the server version reported to MCP clients.
const Version = "0.1.0"

// instructionsFormat tells the model how to use the tools (%[1]s: the
// portal's domain).
const instructionsFormat = `Tools for the open data portal %[1]s (Socrata).
Workflow: 1) search_datasf (or list_datasf) to find a dataset and its 4x4 id; 2) get_schema to learn its exact column fieldNames and types; 3) query_datasf with SoQL (SELECT ... WHERE ... GROUP BY ... ORDER BY ... LIMIT ..., no FROM).
query_datasf returns a dual response: "results" is only a SAMPLE of the rows; metadata.total_count is the exact number of rows; resource.url holds the complete result (paged JSON, CSV/NDJSON export) for the user or application. Do not try to page through the full result yourself: aggregate with GROUP BY and count(*)/sum()/avg() instead, and give the user the link.
list_results shows this session's stored results; analyze_results runs read-only SQL (SQLite) over one or more of them, for joins across datasets. Very large search, list or schema answers come back as a preview plus a link (full_result).
Other Socrata portals: every portal tool takes domain (a portal's host, e.g. data.cityofchicago.org; default %[1]s). search_datasf with domain "*" searches every portal ("a,b" several; each hit names its domain); list_datasf with domain "*" lists portals. Pass a dataset's domain on to get_schema and query_datasf.
Column names are corrected automatically when slightly wrong (see metadata.corrections). Text comparison is case-sensitive; use upper(col) = 'VALUE' when unsure of case. Timestamps are compared as '2024-01-01T00:00:00'.`

// toolServerOptions is what New hands the tool server. Portals, Results
// and Blobs are required.
type toolServerOptions struct {
	// Portals are the Socrata portals: the configured one (its client and
	// schema cache) and the others the tools may name (package portal).
	Portals *portal.Registry
	// Results stores dual responses and serves their full results, with
	// the portals' and the blobs' Executors.
	Results *dualresp.Server
	// Blobs keeps spilled results: the spill middleware fills it, Results
	// reads the query kind spill.Kind from it.
	Blobs *spill.Store
	// DefaultSampleSize is the sample size when the caller gives none
	// (default 15, dualresp's default).
	DefaultSampleSize int
	// Logger receives diagnostics (default: discard). Never stdout.
	Logger *slog.Logger
	// Spill configures the large-result middleware that keeps big
	// search_datasf, list_datasf and get_schema answers out of the model's
	// context (query_datasf is a dual response already and never spills).
	Spill spill.Options
	// Version is the server version told to MCP clients (default Version).
	Version string
	// ServerOptions are passed to mcp-go (for example server.WithOutputSchemaValidation()).
	ServerOptions []server.ServerOption
	// Offline, when set, is the sentence answers say in place of a live
	// portal's URL: where the local portal's data comes from.
	Offline string
	// SearchValues and SearchValuesDir are Config's.
	SearchValues    bool
	SearchValuesDir string
	// CatalogOnly, offline, reports whether a dataset of a domain has no
	// data: only the catalog (built in, or --catalog) describes it, and its queries
	// answer no rows. Nil online.
	CatalogOnly func(domain, id string) bool
}

// toolServer holds the tool handlers and the mcp-go server they are
// registered on.
type toolServer struct {
	client  *socrata.Client // the configured portal's
	portals *portal.Registry
	results *dualresp.Server
	schemas *schemacache.Cache
	sample  int
	log     *slog.Logger
	mcp     *server.MCPServer
	session sessionResults
	// indexes keeps the portals' ranked catalogs (searchindex.go).
	indexes *catalogIndexes
	// valueStats keeps column statistics computed by queries (colvalues.go).
	valueStats *valueStats
	offline    string // toolServerOptions.Offline
	// catalogOnly is toolServerOptions.CatalogOnly (nil online).
	catalogOnly func(domain, id string) bool

	// categories keeps the portal's categories (key "") for answers
	// without hits, categoriesTTL long.
	categories *expiring.LRU[string, []categoryCount]

	spiller  *mcpgo.Spiller
	analyzer *analyze.Analyzer
}

// newToolServer returns the DataSF MCP server with its tools, the
// resource://{id} template for stored results and the result viewer app
// (AppURI).
func newToolServer(opts toolServerOptions) (*toolServer, error) {
	if opts.Portals == nil {
		return nil, errors.New("datasf: toolServerOptions.Portals is required")
	}
	if opts.Results == nil || opts.Blobs == nil {
		return nil, errors.New("datasf: toolServerOptions.Results and Blobs are required")
	}
	s := &toolServer{
		client:  opts.Portals.Default().Client,
		portals: opts.Portals,
		results: opts.Results,
		schemas: opts.Portals.Default().Schemas,
		sample:  opts.DefaultSampleSize,
		log:     opts.Logger,
		offline: opts.Offline,

		catalogOnly: opts.CatalogOnly,
	}
	s.categories = expiring.New[string, []categoryCount](1, categoriesTTL)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.indexes = newCatalogIndexes(s.log)
	s.indexes.rowless = s.catalogOnly
	if opts.SearchValues {
		s.indexes.values = &searchValues{dir: opts.SearchValuesDir, now: time.Now}
	}
	s.valueStats = newValueStats()
	spillOpts := opts.Spill
	if spillOpts.Hint == "" {
		spillOpts.Hint = "Page through it at the url, or analyze it with analyze_results."
	}
	if spillOpts.Tools == nil {
		spillOpts.Tools = map[string]spill.ToolOptions{}
	}
	for _, name := range []string{"query_datasf"} {
		if _, ok := spillOpts.Tools[name]; !ok {
			spillOpts.Tools[name] = spill.ToolOptions{Never: true}
		}
	}
	if spillOpts.Logger == nil {
		spillOpts.Logger = s.log
	}
	if spillOpts.Owner == nil {
		spillOpts.Owner = recordOwner // spilled results are owned, and bounded, as query results are
	}
	s.spiller = mcpgo.NewSpiller(opts.Results, opts.Blobs, spillOpts)
	s.analyzer = analyze.New(opts.Results, analyze.Options{Logger: s.log})

	mopts := []server.ServerOption{
		server.WithToolHandlerMiddleware(s.spillUnlessWhole),
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, false),
		server.WithInstructions(instructions(s.client.Domain())),
		server.WithRecovery(),
		// The result viewer app (app.go): the extension is advertised to
		// MCP Apps hosts, and only they see the app-only tool.
		server.WithHooks(appHooks()),
		server.WithToolFilter(hideAppTools),
	}
	mopts = append(mopts, opts.ServerOptions...)
	version := opts.Version
	if version == "" {
		version = Version
	}
	s.mcp = server.NewMCPServer("datasf-mcp", version, mopts...)
	for _, t := range s.toolList() {
		s.mcp.AddTool(t.def, t.handler)
	}
	s.mcp.AddResourceTemplate(
		mcp.NewResourceTemplate("resource://{id}", "Stored query result",
			mcp.WithTemplateDescription("A stored query_datasf result: its metadata and first page of rows. The full result is at the resource's url."),
			mcp.WithTemplateMIMEType("application/json"),
		),
		s.readResource,
	)
	s.mcp.AddResource(appResource(), s.readApp)
	return s, nil
}

// MCP returns the mcp-go server, to serve over stdio or Streamable HTTP.
func (s *toolServer) MCP() *server.MCPServer { return s.mcp }

// Tools returns every tool's definition with its handler, as registered.
func (s *toolServer) Tools() []server.ServerTool {
	list := s.toolList()
	out := make([]server.ServerTool, len(list))
	for i, t := range list {
		out[i] = server.ServerTool{Tool: t.def, Handler: t.handler}
	}
	return out
}

func instructions(domain string) string {
	return fmt.Sprintf(instructionsFormat, domain)
}

// spillUnlessWhole spills next's large answers (s.spiller) unless the call
// asks for them whole (MetaWhole).
func (s *toolServer) spillUnlessWhole(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	spilled := s.spiller.Wrap(next)
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if wantsWhole(req) {
			return next(ctx, req)
		}
		return spilled(ctx, req)
	}
}
