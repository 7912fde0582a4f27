// Package datasf is the MCP server for San Francisco's open data portal
// (data.sfgov.org) and any other Socrata portal.
//
// NewServer returns an mcp-go server with four read-only tools:
//
//   - search_datasf: full-text search of the portal's catalog (Discovery API);
//   - list_datasf: the newest datasets, optionally of one category;
//   - get_schema: a dataset's columns and exact row count, through a schema cache;
//   - query_datasf: runs SoQL and answers with a dual response: a small sample,
//     the exact total and a link to the complete result (package dualresp).
//
// The query path validates the input, parses the SoQL locally (syntax errors are
// answered with their position before any request), corrects column names that
// are slightly wrong against the real schema (package fuzzymatch), gives the query
// a deterministic order, and stores the query (not the rows) so the full result
// can be paged later through the REST endpoint or read as an MCP resource.
//
// The package does no I/O of its own: the Socrata client, the result server and
// the schema cache are passed in through Options.
package datasf
