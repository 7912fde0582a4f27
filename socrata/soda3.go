package socrata

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
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
// SODA 2.1 Resource API. A SODA3 request asks for at most SODA3PageSize
// rows (5,000 by default: the live portal answers a larger page HTTP 200
// with a message object instead of rows), so a query with a larger LIMIT
// is read as pages 1, 2, … of the same query, one request each, in one
// RowStream. Rows keyed by the columns' display names (POST_ID), as some
// older datasets answer on SODA3, are keyed by their field names again,
// from the dataset's columns (the Views API). A portal that answers a SODA3 query 404 or 405 gets
// that query again on SODA 2.1, and the client remembers for its lifetime
// that the portal has no SODA3 (on 405 at once; on 404 once SODA 2.1 has
// served the query, since a 404 can also mean the dataset does not exist).
//
// A portal whose SODA 2.1 answers that it is gone (410, or an error that
// names its deprecation) gets a token client's queries on SODA3 from then
// on, said once in the log; a client without a token gets a
// *TokenRequiredError, which says where to get one.

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

// DefaultSODA3PageSize is the most rows a SODA3 request asks for by
// default: a production caller of data.sf.gov's SODA3 (2026-09) reports
// that an oversized page is answered HTTP 200 with a message object
// instead of rows, and settled on 5,000-row pages.
const DefaultSODA3PageSize = 5000

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
// given, page number of size rows, and no synthetic columns (as the
// Resource API, which returns system fields only when the SoQL selects
// them).
func soda3Body(soql string, number, size int64) []byte {
	b, _ := json.Marshal(soda3Request{Query: soql, Page: soda3Page{PageNumber: number, PageSize: size}})
	return b
}

// soda3Paging is where a SODA3 query's RowStream is in its pages: the
// query's rows (its LIMIT, or SODA 2.1's default) come as pages of size
// rows, the last one short or at want rows in all.
type soda3Paging struct {
	datasetID, soql string
	size, want      int64 // rows a page, rows in all
	number          int64 // the page being read, from 1
	inPage, read    int64 // rows read of this page, of all
	// keys maps the display-name keys of the rows to field names; nil
	// when the rows are keyed by field names. checked: the first row's
	// keys were looked at.
	keys    map[string]string
	checked bool
}

// more reports whether the page just read was full and the query wants
// rows beyond it.
func (p *soda3Paging) more() bool { return p.inPage == p.size && p.read < p.want }

func (c *Client) soda3URL(datasetID string) string {
	return c.base + "/api/v3/views/" + url.PathEscape(datasetID) + "/query.json"
}

// UsesSODA3 reports whether the client sends its next query to SODA3: it
// has an app token and the portal has not shown that it lacks SODA3.
func (c *Client) UsesSODA3() bool {
	return c.token != "" && !c.soda3Off.Load()
}

// gone reports whether err is SODA 2.1 saying that it is gone: HTTP 410,
// or an error that names its deprecation. Tyler deprecated SODA1 on
// 2026-10-01 and will deprecate SODA 2.1 at a date to be announced.
func soda2Gone(err error) bool {
	var api *APIError
	if !errors.As(err, &api) || api.StatusCode < 400 {
		return false
	}
	return api.StatusCode == http.StatusGone ||
		strings.Contains(strings.ToLower(api.Code+" "+api.Message), "deprecat")
}

// TokenRequiredError is a portal that no longer serves SODA 2.1 queries,
// asked by a client without an app token: its queries need SODA3, and
// SODA3 needs a token. Err is the portal's answer.
type TokenRequiredError struct {
	Domain string
	Err    *APIError
}

func (e *TokenRequiredError) Error() string {
	return "socrata: " + e.Domain + " no longer serves queries without an app token (" + e.Err.Error() +
		"); its SODA3 API needs one: create one at " + AppTokenURL(e.Domain) + " and set it as the client's AppToken"
}

// Unwrap returns the portal's answer.
func (e *TokenRequiredError) Unwrap() error { return e.Err }

// AppTokenURL is the page of a Socrata portal where a signed-in user
// creates app tokens (dev.socrata.com, "Application Tokens": "sign up for
// an app token" in the developer settings of the portal's profile).
func AppTokenURL(domain string) string {
	return "https://" + domain + "/profile/edit/developer_settings"
}

// useSODA3Again notes that SODA 2.1 is gone on the portal: a client with a
// token sends every later query to SODA3, even after SODA3 once answered
// 404 or 405. The first time is logged.
func (c *Client) useSODA3Again(ctx context.Context, status int) {
	c.soda3Off.Store(false)
	if c.soda2Gone.CompareAndSwap(false, true) {
		c.log.InfoContext(ctx, "socrata: the portal answered that SODA 2.1 is gone; using SODA3 from now on",
			"domain", c.domain, "status", status)
	}
}

// noSODA3 notes that the portal has no SODA3 query API (it answered
// status to a SODA3 query that SODA 2.1 then took): later queries use SODA
// 2.1.
func (c *Client) noSODA3(ctx context.Context, status int) {
	if c.soda2Gone.Load() {
		return // SODA 2.1 is gone: SODA3 it is
	}
	if c.soda3Off.CompareAndSwap(false, true) {
		c.log.InfoContext(ctx, "socrata: the portal has no SODA3 query API; using SODA 2.1 from now on",
			"domain", c.domain, "status", status)
	}
}
