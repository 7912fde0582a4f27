// Package datasf is the MCP server for San Francisco's open data portal
// (data.sf.gov, formerly data.sfgov.org) and any other Socrata portal.
//
// New is the product's one composition root: from a Config it builds the
// Socrata client (against the real portal, or the local one of package
// localportal when Config.Offline is set), the result store and the result
// registry (dualresp) with one executor per stored query kind, the schema
// cache, the tools, and the HTTP transport (package mcphttp), and returns a Service holding
// them: its MCPServer to serve over any transport, ServeStdio, Serve (the
// REST API, and MCP over Streamable HTTP at /mcp), HTTPHandler and Close.
// Tests assemble it through package datasftest.
//
// The MCP server has six read-only tools:
//
//   - search_datasf: full-text search of the portal's catalog (Discovery API);
//   - list_datasf: the newest datasets, optionally of one category;
//   - get_schema: a dataset's columns and exact row count, through a schema cache;
//   - query_datasf: runs SoQL and answers with a dual response: a small sample,
//     the exact total and a link to the complete result (package dualresp);
//   - list_results: the stored results of the caller's session that are still available;
//   - analyze_results: read-only SQL (SQLite) over one or more stored results,
//     for joins and calculations across datasets.
//
// query_datasf and analyze_results declare the result viewer, an MCP App
// (the io.modelcontextprotocol/ui extension; app.go): hosts that support
// the extension render AppURI beside the call, and the app pages through
// the complete result with a seventh tool, result_page, which only the app
// sees (visibility ["app"]; clients that do not declare the extension
// neither list nor call it). The model's payload is the same either way.
//
// Each tool is one value in one file named for its topic (search.go holds
// search_datasf, query.go query_datasf, ...): its input type (SearchInput,
// ListInput, SchemaInput, QueryInput, ListResultsInput, AnalyzeInput,
// ResultPageInput), whose struct tags state each argument once (json, the
// jsonschema description, the validate rules, the default), its output
// type, its definition (the input schema is derived from the input type,
// the output schema from the output type) and its typed handler, which
// returns its output and an error; newTool (tool.go) decodes and checks
// the arguments and renders the output or the error once. The limits are
// also exported as constants (MaxSearchQuery, MaxSoQL, ...), which a test
// holds to the tags; zero is a value, not "unset": an omitted limit or
// sample_size means the default, 0 is refused.
//
// The query path validates the input (dataset ids in any case, padded, or as
// the dataset's URL are normalized to the id), parses the SoQL locally (syntax
// errors are answered with their position before any request), corrects column
// names that are surely misspelt against the real schema (package fuzzymatch),
// answers locally, with the portal's error code and wording, what the portal
// would refuse (names that are neither a column nor an alias, duplicate
// aliases, sum or avg of a non-number, a column neither grouped nor
// aggregated; checks.go), gives the query a deterministic order, and stores
// the query (not the rows) so the full result can be paged later through the
// REST endpoint or read as an MCP resource. When no row matches, the answer
// carries hints about its text literals (package hints).
//
// The four portal tools take a domain: the configured portal when it is
// left out, else any public Socrata portal (or those of Config.Domains),
// checked before any request by package portal (a DNS host name only;
// public addresses only, at lookup and at dial time); each portal has its
// own client, app token (Config.AppTokens) and schema cache. search_datasf
// and list_datasf take "*" for every portal (list_datasf then lists the
// portals). A stored query keeps its domain, so its pages and exports run
// on its own portal.
//
// Stored results are re-executed by kind: "soql" through portal.Executor
// (on its portal, paged or streamed), "spill" (large search, list and schema
// answers kept whole in memory) through package dualresp/spill.
package datasf
