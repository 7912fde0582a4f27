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
// any. The package stores the query, not the rows: an Executor, supplied by
// the caller, counts and pages through a Query, so dualresp knows nothing of
// the query language or the data source.
//
// Server side:
//
//	srv, err := dualresp.New(dualresp.Options{
//		BaseURL:  "http://127.0.0.1:8765",
//		Executor: myExecutor, // Count and Page for your queries
//	})
//	...
//	defer srv.Close()
//	http.Handle("/resources/", srv.Handler())
//
//	// In a tool handler:
//	resp, err := srv.CreateResponse(ctx, dualresp.Spec{
//		Name:    "Food trucks by status",
//		Query:   dualresp.Query{Kind: "soql", Text: "SELECT status, count(*) GROUP BY status"},
//		Columns: []dualresp.Column{{Name: "status"}, {Name: "count"}},
//	})
//	...
//	return resp.CallToolResult(), nil
//
// Client side (an application that called the tool):
//
//	client, _ := dualresp.NewClient(dualresp.ClientOptions{})
//	parsed := client.Parse(toolResult) // nil when not a dual response
//	for row, err := range parsed.Rows(ctx) {
//		...
//	}
//
// The structured content has the shape of the mcp-dual-response
// specification, plus resource.url as in the "Building a Dual Response MCP
// Server" article:
//
//	{"summary": "847 rows match. 15 sample rows follow. Full result: http://…/resources/9f3c…",
//	 "results": [{…}, …],
//	 "resource": {"uri": "resource://9f3c…", "url": "http://…/resources/9f3c…", "name": "…", "mimeType": "application/json"},
//	 "metadata": {"total_count": 847, "sample_count": 15, "truncated": true, "columns": […],
//	              "executed_at": "…", "expires_at": "…", …caller metadata}}
//
// Resources expire DefaultExpiration after creation unless accessed (each
// REST access extends the expiry) or pinned. Records live in a Store: the
// default MemoryStore, or another implementation (the storetest package
// checks the contract).
package dualresp
