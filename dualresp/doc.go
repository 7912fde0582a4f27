// Package dualresp implements the dual response pattern for MCP servers.
//
// A tool that queries data answers with two things at once:
//
//   - for the language model, a small sample of rows, the exact total count,
//     the columns and a link to the full result, inside a byte budget;
//   - for the host application (or a person, or a script), a REST resource
//     that re-executes the stored query page by page with a stable order,
//     or streams all of it as CSV, NDJSON or JSON.
//
// The model never carries thousands of rows; the application never loses
// any. The package stores the query, not the rows, and knows nothing of the
// query language or the data source. One interface runs a query: a Plan (a
// query prepared to run) counts its rows and reads a page of them, and
// streams them when it is also a Streamer. An Executor, supplied by the
// caller for each Query.Kind, prepares a stored Query into a Plan. A tool
// that has prepared its query already (parsed it, resolved its source)
// hands that Plan to CreateResponse in Spec.Plan, so nothing is prepared
// twice; pages and exports, which start from a stored Query, ask the
// Executor. Preparing once is the point: a Plan holds what was parsed and
// resolved, so the pages of an export do not repeat that work.
//
// The package imports no MCP library: a Response renders as structured
// content (Structured), text (the summary and a markdown table) and a
// resource link (ResourceLink), and the adapters in dualresp/mcpgo
// (github.com/mark3labs/mcp-go) and dualresp/gosdk (the official
// github.com/modelcontextprotocol/go-sdk) turn those into their SDK's tool
// result and read it back.
//
// Server side, on mark3labs/mcp-go:
//
//	// sqlExecutor's Prepare(ctx, dualresp.Query) parses a query and returns
//	// its dualresp.Plan, whose Count and Page run it (see ExampleNew).
//	results, err := dualresp.New(dualresp.Options{
//		BaseURL:   "http://127.0.0.1:8765",
//		Executors: map[string]dualresp.Executor{"sql": sqlExecutor}, // by Query.Kind
//	})
//	...
//	defer results.Close()
//	http.Handle("/resources/", results.Handler())
//
//	s := server.NewMCPServer("name", "1.0")
//	s.AddTool(mcp.NewTool("query", mcp.WithRawOutputSchema(dualresp.OutputSchema)),
//		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
//			resp, err := results.CreateResponse(ctx, dualresp.Spec{
//				Name:  "Food trucks by status",
//				Query: dualresp.Query{Kind: "sql", Text: "SELECT status, count(*) FROM trucks GROUP BY status"},
//			})
//			if err != nil {
//				return nil, err
//			}
//			return mcpgo.CallToolResult(resp), nil
//		})
//
// The same tool on the official go-sdk (which validates the output against
// the schema):
//
//	mcp.AddTool(srv, &mcp.Tool{Name: "query", OutputSchema: gosdk.OutputSchema()},
//		func(ctx context.Context, req *mcp.CallToolRequest, in Input) (*mcp.CallToolResult, *dualresp.Structured, error) {
//			resp, err := results.CreateResponse(ctx, dualresp.Spec{…})
//			if err != nil {
//				return nil, nil, err
//			}
//			res, out := gosdk.Result(resp)
//			return res, out, nil
//		})
//
// CreateResponse counts the rows and fetches the sample concurrently
// through the Spec's Plan, or the Plan the Executor of the query's kind
// prepares; the sample page also reports the result's columns when the
// Spec gives none.
//
// Client side (an application that called the tool):
//
//	client, _ := dualresp.NewClient(dualresp.ClientOptions{})
//	parsed := mcpgo.Parse(client, toolResult) // or gosdk.Parse, or client.Parse(JSON)
//	for row, err := range parsed.Rows(ctx) {
//		...
//	}
//
// # Wire types
//
// Each shape on the wire is declared once and shared by the REST handler,
// the Client and applications: Structured (the structured content, with
// Metadata and ResourceLink), ResourceInfo (GET /resources/{id}), Page (a
// page of rows), OutputSchema (the JSON schema of Structured), and
// ResourceID, which reads an id out of a resource:// URI, a REST URL or a
// bare id.
//
// The structured content has the shape of the mcp-dual-response
// specification, plus resource.url as in the "Building a Dual Response MCP
// Server" article:
//
//	{"summary": "847 rows match. 15 sample rows follow. Download: http://…/resources/9f3c…/export?format=csv (or format=ndjson, json, parquet).",
//	 "results": [{…}, …],
//	 "resource": {"uri": "resource://9f3c…", "url": "http://…/resources/9f3c…"},
//	 "metadata": {"total_count": 847, "sample_count": 15, "truncated": true, "columns": ["applicant", …],
//	              "expires_at": "…", …caller metadata}}
//
// The model's payload says each thing once: the resource's name is the
// resource_link's, the columns are names (their types are in the REST
// metadata). A host may pass the text, the link and the structured content
// all three, so together they keep within Options.ByteBudget (5,500 bytes,
// about 1,800 Claude tokens): a wide sample has fewer rows than asked, and
// says so; an answer whose sample is the whole result may use the larger
// WholeByteBudget (12 KiB), since a model with every row needs no second
// query.
//
// # Reading stored results
//
// A record stores its query; the Server runs it again through the Plan the
// Executor registered for the query's kind in Options.Executors prepares,
// the one route from a record to its rows (a query of an unknown kind is an
// error naming the known kinds). Server.Page reads one page, and
// Server.Rows iterates over a whole result, preparing it once, streaming
// when the Plan is a Streamer and paging through Page otherwise: REST
// exports and analyses read through it. Server.ReadPage is a client's page request (offset,
// limit, sort by result columns) checked for its caller and counted as an
// access: the REST API's pages and an app's page tool read through it. Spilled tool results (dualresp/spill) are one more kind: their
// spill.Store is the Executor of spill.Kind.
//
// Resources expire DefaultExpiration after creation unless accessed (each
// REST access extends the expiry) or pinned; each owner may have at most
// Options.MaxPinnedPerOwner pinned results (ErrPinQuota beyond). Records live in a Store: the
// default MemoryStore, or another implementation (the storetest package
// checks the contract).
package dualresp
