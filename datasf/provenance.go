package datasf

import (
	"fmt"
	"strings"
	"time"
)

// Provenance: every query answer says how fresh the data is (the dataset's
// rowsUpdatedAt, metadata.as_of) and where a person can check it (the
// Resource API URL that runs the same query on the portal, on its current
// host, metadata.portal_url), in the structured content, and the first in
// one short sentence of the text (the URL, which repeats the whole query
// URL-encoded, is said once: in the structured content). A portal that moved is said in one line, and a
// replica that says its data is out of date (X-SODA2-Data-Out-Of-Date) in
// a hint. Offline, the answers say they come from the local portal (the
// built-in generated snapshot, or the user's files) and give no live URL:
// its numbers are not the live portal's.

// offlineSource is the sentence offline answers carry in place of the
// live portal's URL: where the data comes from. files are the user's
// --data and --data-dir arguments.
func offlineSource(domain string, files []string) string {
	if len(files) == 0 {
		// Short: every offline answer carries it, in both views (16
		// tokens; 22 as "made-up rows of the built-in generated snapshot").
		return "Offline snapshot: made-up rows, not " + domain + "'s."
	}
	return "Offline: this comes from local files (" + strings.Join(clipNames(files, 5), ", ") +
		") and, for the other datasets, the built-in generated snapshot (made-up rows), not from the live portal " + domain + "."
}

// clipNames keeps the first n names, saying how many more.
func clipNames(names []string, n int) []string {
	if len(names) <= n {
		return names
	}
	return append(names[:n:n], fmt.Sprintf("and %d more", len(names)-n))
}

// staleHint is what an answer says when the portal's replica flagged its
// data as out of date.
type staleHint struct {
	Kind    string `json:"kind"` // "stale_data"
	Message string `json:"message"`
}

func (h staleHint) HintMessage() string { return h.Message }

func newStaleHint(domain string) staleHint {
	return staleHint{Kind: "stale_data", Message: "The portal (" + domain + ") flagged this answer's data as out of date " +
		"(X-SODA2-Data-Out-Of-Date: true, a replica behind the latest update): the newest rows may be missing; asking again later may give newer numbers."}
}

// portalQueryURL is https://DOMAIN/resource/ID.json?$query=QUERY, the query
// escaped as a URL query value (queryEscape).
func portalQueryURL(domain, datasetID, query string) string {
	return "https://" + domain + "/resource/" + datasetID + ".json?$query=" + queryEscape(query)
}

// queryEscape escapes s as a query value, compactly: a space is '+', and
// the characters RFC 3986 allows in a query stay as they are except those
// a query string gives a meaning to (& = + # %), which are %-escaped with
// everything else (quotes and non-ASCII included). Socrata decodes it as
// url.QueryUnescape does.
func queryEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			b.WriteByte('+')
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			strings.IndexByte("-._~!$()*,;:@/?", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// provenanceLine is the text's last line: "Data as of
// 2025-01-01T17:46:42Z." ("" when the portal gives no time). The
// structured content has it in metadata.as_of, and the query run, once,
// URL-encoded in metadata.portal_url: the text does not repeat it.
func provenanceLine(asOf time.Time) string {
	if asOf.IsZero() {
		return ""
	}
	return "Data as of " + asOf.UTC().Format(time.RFC3339) + "."
}

// sourceNotes ends a catalog or schema answer's summary with the line
// saying the portal moved, when it did, and offline where the data comes
// from.
func (s *toolServer) sourceNotes(summary, moved string) string {
	for _, line := range []string{moved, s.offline} {
		if line != "" {
			summary += " " + line
		}
	}
	return summary
}

// offlineLinks drops the live portal's links from offline catalog
// answers: the local portal's data is not what they show.
func (s *toolServer) offlineLinks(items []datasetItem) {
	if s.offline == "" {
		return
	}
	for i := range items {
		items[i].Link = ""
	}
}
