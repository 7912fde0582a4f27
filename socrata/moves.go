package socrata

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// DefaultDomain is the portal a Client talks to when Options.Domain is
// empty: San Francisco's, DataSF.
const DefaultDomain = "data.sf.gov"

// knownMoves is the one table of portals that moved to another host name,
// old name to new. Each entry cites the evidence in
// testdata/evidence/live-portals-2026.jsonl (the claim's words, then its id).
// Dataset ids do not change with a move, so a query for the old name runs
// on the new one as it is.
var knownMoves = map[string]string{
	// "data.sfgov.org answers HTTP 301 (not 302) to data.sf.gov for queries
	// without $select" (evidence moves-301); "data.sfgov.org answers 403 to
	// any request whose query contains $select=" (evidence moves-select-403);
	// "Dataset 4x4 ids did not change with the host move" (evidence
	// moves-ids-unchanged); five or more sources, 2026-09..10 (evidence
	// moves-ordered-count-403, moves-all-301, moves-nginx-403,
	// moves-metadata-301-permits).
	"data.sfgov.org": "data.sf.gov",
}

// MaxMoves bounds a chain of moves a caller follows for one name (package
// portal's registry does): a portal that redirects further than this, or
// in a loop, is an error.
const MaxMoves = 4

// KnownMove returns the host name a portal moved to when domain (a checked
// name, see CheckDomain) is the old name of a portal in the table of known
// moves, and "" otherwise.
func KnownMove(domain string) string {
	return knownMoves[strings.ToLower(strings.TrimSpace(domain))]
}

// KnownOldName returns the old name of a portal that moved to domain, ""
// when none did: the name an earlier version of this program, or a
// user, may still use for it.
func KnownOldName(domain string) string {
	domain = strings.ToLower(strings.TrimSpace(domain))
	for old, now := range knownMoves {
		if now == domain {
			return old
		}
	}
	return ""
}

// MovedError is a portal's answer that it moved: a 301, 302, 307 or 308
// whose Location is the same API on another host, or the refusal the old
// host of a known move gives to queries (an HTML 403). Nothing was read
// from the new host: a Client never follows a move; its caller may (see
// the package doc).
type MovedError struct {
	Endpoint string
	Domain   string // the host that answered
	To       string // the host it points to
	// StatusCode is the status of the answer: a redirect, or 403 for the
	// refusal of a query by a known old name.
	StatusCode int
	// Refused is why the caller that tried to follow the move did not
	// (the new host is not allowed, not public, ...); nil when none tried.
	Refused error
}

// Unwrap returns Refused.
func (e *MovedError) Unwrap() error { return e.Refused }

func (e *MovedError) Error() string {
	if e.Refused != nil {
		return fmt.Sprintf("socrata: %s has moved to %s, which is refused: %v", e.Domain, e.To, e.Refused)
	}
	if e.StatusCode == http.StatusForbidden {
		return fmt.Sprintf("socrata: the old address of this portal (%s) refused the query (HTTP 403, an HTML page); the portal has moved to %s: use the domain %s",
			e.Domain, e.To, e.To)
	}
	return fmt.Sprintf("socrata: %s has moved to %s (HTTP %d); use the domain %s", e.Domain, e.To, e.StatusCode, e.To)
}

// movedTo reads a redirect answer: the host name its Location points to,
// when that is another host than domain and the same API (the path kept,
// as the evidence says of data.sfgov.org: "the Location keeps path and
// query string", evidence moves-301). ok is false for anything
// else (a redirect within the host, to another path, or no Location).
func movedTo(domain string, req *url.URL, status int, h http.Header) (to string, ok bool) {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return "", false
	}
	loc, err := req.Parse(h.Get("Location"))
	if err != nil || loc.Hostname() == "" {
		return "", false
	}
	to = strings.ToLower(loc.Hostname())
	if to == domain || to == strings.ToLower(req.Hostname()) || loc.Path != req.Path {
		return "", false
	}
	return to, true
}
