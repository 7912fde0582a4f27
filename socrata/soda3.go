package socrata

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
)

// SODA3 is Socrata's current query API (dev.socrata.com, "Queries using
// SODA3"): POST /api/v3/views/{id}/query.json with a JSON body. It must
// carry an app token (or credentials), and it takes the SoQL in the body, so
// a query has no URL-length limit. The answer to /query.json is the same
// JSON array of rows as the Resource API's, with the same X-SODA2-Fields and
// X-SODA2-Types headers. docs/soda3.md records what the client sends and
// expects, and why.
//
// A Client with an app token sends every query (Query, QueryStream, and so
// the counts and result pages built on them) to SODA3; without one, to the
// SODA 2.1 Resource API. A portal that answers a SODA3 query 404 or 405 gets
// that query again on SODA 2.1, and the client remembers for its lifetime
// that the portal has no SODA3 (on 405 at once; on 404 once SODA 2.1 has
// served the query, since a 404 can also mean the dataset does not exist).

// soda3Request is the body of a SODA3 query.
type soda3Request struct {
	Query            string    `json:"query"`
	Page             soda3Page `json:"page"`
	IncludeSynthetic bool      `json:"includeSynthetic"`
}

// soda3Page is the page option: pageNumber counts from 1.
type soda3Page struct {
	PageNumber int64 `json:"pageNumber"`
	PageSize   int64 `json:"pageSize"`
}

// soda2DefaultLimit is the number of rows SODA 2.1 returns for a query
// without a LIMIT; SODA3 queries without one ask for a page of that size, so
// a query returns the same rows on both APIs.
const soda2DefaultLimit = 1000

// trailingLimit finds the LIMIT of a query's last stage: the client keeps
// LIMIT and OFFSET inside the SoQL, and asks SODA3 for one page at least as
// large as that LIMIT. A LIMIT can only end a stage, after ORDER BY and
// SEARCH, and a literal or quoted name ends with a quote, so the pattern
// cannot match inside either.
var trailingLimit = regexp.MustCompile(`(?i)\bLIMIT\s+(\d+)(?:\s+OFFSET\s+\d+)?\s*$|\bOFFSET\s+\d+\s+LIMIT\s+(\d+)\s*$`)

// soda3PageSize returns the page size of a SODA3 request for soql: its last
// stage's LIMIT (at least 1), or SODA 2.1's default when it has none.
func soda3PageSize(soql string) int64 {
	m := trailingLimit.FindStringSubmatch(soql)
	if m == nil {
		return soda2DefaultLimit
	}
	digits := m[1]
	if digits == "" {
		digits = m[2]
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil { // more digits than an int64 holds
		return 1<<63 - 1
	}
	return max(n, 1)
}

// soda3Body is the JSON body of the SODA3 query for soql: the SoQL as
// given, page 1 of soda3PageSize rows, and no synthetic columns (as the
// Resource API, which returns system fields only when the SoQL selects
// them).
func soda3Body(soql string) []byte {
	b, _ := json.Marshal(soda3Request{Query: soql, Page: soda3Page{PageNumber: 1, PageSize: soda3PageSize(soql)}})
	return b
}

func (c *Client) soda3URL(datasetID string) string {
	return c.base + "/api/v3/views/" + url.PathEscape(datasetID) + "/query.json"
}

// UsesSODA3 reports whether the client sends its next query to SODA3: it
// has an app token and the portal has not shown that it lacks SODA3.
func (c *Client) UsesSODA3() bool {
	c = c.target()
	return c.token != "" && !c.soda3Off.Load()
}

// noSODA3 notes that the portal has no SODA3 query API (it answered
// status to a SODA3 query that SODA 2.1 then took): later queries use SODA
// 2.1.
func (c *Client) noSODA3(ctx context.Context, status int) {
	if c.soda3Off.CompareAndSwap(false, true) {
		c.log.InfoContext(ctx, "socrata: the portal has no SODA3 query API; using SODA 2.1 from now on",
			"domain", c.domain, "status", status)
	}
}
