// Package soql is a front end for SoQL, the Socrata Query Language: a lexer,
// a recursive-descent parser to an AST, a printer, and the rewrites the
// query path needs.
//
// Parse reads a full query (stages joined by |>, each with optional SELECT,
// WHERE, GROUP BY, HAVING, ORDER BY, SEARCH, LIMIT and OFFSET clauses);
// ParseExpr reads one expression such as a $where value. Every identifier
// keeps its byte position, so callers can rewrite exactly the source range
// of a column reference (see Query.ColumnRefs). Errors are *SyntaxError and
// read like "line 1, column 14: expected an expression, got end of input".
//
// Operator precedence follows Socrata's soql-reference parser, loosest first:
// OR; AND; NOT; comparisons with IS [NOT] NULL, [NOT] BETWEEN, [NOT] IN and
// [NOT] LIKE; ||; + and -; *, / and %; ^ (right-associative); unary + and -;
// the :: cast; and the . and [] dereferences.
//
// Query.String and Format print canonical SoQL (upper-case keywords,
// single-quoted strings, no comments, the user's parentheses kept) that
// parses back to an equal AST. The rewrites (WithStableOrder, WithPage,
// WithoutPaging, CountQuery) return new queries and never modify their
// receiver:
//
//	q, err := soql.Parse("SELECT a WHERE b > 1 LIMIT 50")
//	page := q.WithStableOrder().WithPage(0, 20) // ... ORDER BY :id LIMIT 20
//	count := q.CountQuery()                    // ... LIMIT 50 |> SELECT count(*) AS count
//
// Query.Check checks a query against a dataset's columns and their types
// before it is sent, and reports the first thing Socrata would refuse, as a
// *CheckError with Socrata's error code and wording: a name that is neither
// a column nor an alias, a duplicate alias, a column outside the aggregates
// and GROUP BY keys of a grouped stage, and what Socrata's type rules
// refuse: type-mismatch, no-such-function, non-boolean-where,
// non-boolean-having, unorderable-order-by, non-groupable-group-by. The
// rules are data read from Socrata's soql-reference: Signatures (every
// overload of a function, operator or cast, signatures.go) and the literal
// conversions (StringLiteralTypes, ParseTimestamp, ParseBoolean,
// ParseInterval; literals.go); the offline portal (package localportal)
// reads the same. It lets through whatever it cannot tell.
//
// Out of scope are the Socrata-internal extensions of newer SoQL: window
// functions (OVER), JOIN, UNION, FROM @table, DISTINCT ON, *(EXCEPT ...) and
// HINT(...).
//
// Imported by the product's packages (datasf, portal, hints, fuzzymatch,
// localportal) and the benchmarks only: internal, not a library API.
package soql
