package datasf

import (
	"strings"
	"time"
)

// Provenance: every query answer says how fresh the data is (the dataset's
// rowsUpdatedAt, metadata.as_of) and where a person can check it (the
// Resource API URL that runs the same query on the portal,
// metadata.portal_url), in the structured content and in one short
// sentence of the text.

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
// 2025-01-01T17:46:42Z. Portal: URL" (without the time when the portal
// gives none). The structured content has both in metadata.
func provenanceLine(asOf time.Time, url string) string {
	if asOf.IsZero() {
		return "Portal: " + url
	}
	return "Data as of " + asOf.UTC().Format(time.RFC3339) + ". Portal: " + url
}
