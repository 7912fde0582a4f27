// Package soqlsqlite compiles SoQL, Socrata's query language, into SQLite:
// a query parsed by package soql becomes one SELECT statement over a
// dataset's table, with the name, kind and X-SODA2-Types name of each result
// column. Each |> stage is a subquery read by the next.
//
// The compiler answers as Socrata's query coordinator does: a query Socrata
// refuses is an [*Error] holding the portal's status and error envelope,
// word for word (query.soql.no-such-column, type-mismatch, ...), after the
// same name and type checks (soql's Check). What Socrata runs but this
// package does not translate is an [*Error] with code query.soql.unsupported.
//
// The statement relies on the storage forms of [Kind] (fixed-width
// timestamp text, GeoJSON points, 0/1 checkboxes, ...) and on Go functions
// installed in the modernc.org/sqlite driver by [Register]; [Conn] holds a
// connection with the bounds a client's query runs under (1 MiB a value,
// LIKE patterns of 256 characters), and [LimitReason] puts a bound's error
// in the portal's words. SQLite, through the pure-Go modernc.org/sqlite
// driver, is the engine because it runs in process without cgo and has
// the JSON, GLOB and aggregate machinery SoQL needs.
//
// Package localportal, the emulated Socrata portal, imports it: it loads
// datasets into tables in these storage forms, compiles each request's
// query and encodes the rows. Its tests are cases in testdata/cases, one
// folder each (see cases_test.go).
package soqlsqlite
