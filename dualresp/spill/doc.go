// Package spill keeps large tool results out of the model's context: the
// "large-response-handler" pattern, without any MCP library. It holds the
// rows of spilled results (Store) and the policy of when and how to spill
// (Options); an SDK adapter applies it to that SDK's tool results
// (dualresp/mcpgo's Spiller, a mark3labs/mcp-go tool handler middleware).
//
// When a tool's result is larger than a threshold (bytes of the JSON-encoded
// tool result, or estimated tokens = bytes/4; by default 25 KiB or 20,000
// tokens, whichever is reached first; overridable per tool), the spiller
// stores the full result and answers with a small replacement: the original
// size, the item count, a preview (the first items of the result's largest
// top-level array, or the beginning of its text) and a link to the full
// result, served page by page by the dualresp REST API at /resources/{id}.
//
//	blobs := spill.NewStore(spill.StoreOptions{})
//	results, err := dualresp.New(dualresp.Options{
//		BaseURL:   "http://127.0.0.1:8765",
//		Executors: map[string]dualresp.Executor{"soql": soqlExec, spill.Kind: blobs},
//	})
//	…
//	sp := mcpgo.NewSpiller(results, blobs, spill.Options{
//		Tools: map[string]spill.ToolOptions{"get_schema": {MaxBytes: 16 << 10}},
//	})
//	s := server.NewMCPServer("name", "1.0", server.WithToolHandlerMiddleware(sp.Middleware()))
//
// # Rows of a spilled result
//
// dualresp stores queries, not rows; a spilled result has no query to run
// again, so its rows are kept in a Store, in process memory, bounded by
// count and bytes, in all and per owner (least recently used first out;
// one owner's spills never evict another's while it holds some of its
// own: Options.Owner names the owner), and the spiller
// registers a dualresp record whose Query is {Kind: Kind, Text: key}. The
// Store is the dualresp.Executor of that kind: it is built first and given
// both to dualresp.New (in Options.Executors, under Kind) and to the
// spiller, so there is one route from a record to its rows, chosen by the
// query's kind like any other. The rows are:
//
//   - structured content that is an object with top-level arrays: the items
//     of the largest array (by encoded size), one row each; the other fields
//     are kept in the record's metadata under "envelope" when small;
//   - structured content that is an array: its items;
//   - an object without arrays: a single row holding the whole object;
//   - no structured content: the text content, parsed as JSON when it is
//     JSON (then as above), else cut at line ends into parts of about 4 KiB,
//     rows {"part": n, "text": …} whose texts concatenate to the original.
//
// A row that is not a JSON object is wrapped as {"value": item}.
//
// Spilled rows live in this process only: after a restart, or once evicted,
// the record's pages fail (REST 502 query_failed, ErrGone) until the record
// expires; an evicted result's record is deleted at once when possible.
//
// # The replacement result
//
// Tools that declare an output schema must still get structured content
// that validates against it, so the replacement depends on the schema:
//
//   - with an output schema: the structured content keeps its shape, with
//     its largest top-level array cut to the preview items (and long strings
//     cut when that is not enough); when the schema allows additional
//     properties a FieldName ("full_result") field is added with the link
//     and sizes. The link is always in the text content, in a resource_link
//     content and in _meta[MetaKey];
//   - without an output schema: the structured content is replaced by
//     {"summary", "preview", "resource": {uri, url, name, mimeType},
//     "metadata": {original_bytes, estimated_tokens, item_count, …}}.
//
// Error results (isError) are never spilled. When storing fails, the
// original result passes through and the failure is logged.
package spill
