package localportal

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// An Emulator can play a portal that moved to another host name, as DataSF
// moved from data.sfgov.org to data.sf.gov in 2026-09
// (testdata/evidence/live-portals-2026.jsonl): [Emulator.SetMoved] makes
// requests whose Host is the old name answer as the old host does. The
// Discovery API (/api/catalog/v1) is api.us.socrata.com's, not the
// portal's, and is served as before.

// NginxForbidden is the page the old host of a moved portal answers to a
// query: a bare nginx 403, HTML, no Socrata JSON ("The legacy host served
// an nginx 403", evidence moves-nginx-403, moves-ordered-count-403).
const NginxForbidden = "<html>\r\n<head><title>403 Forbidden</title></head>\r\n<body>\r\n<center><h1>403 Forbidden</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"

// SetMoved makes the portal answer requests for the host old as the old
// host of a portal that moved to to: a query (any $select or $query
// parameter) gets NginxForbidden with status 403, anything else a 301 to
// https://to with the same path and query. An empty to forgets old's move.
//
// It follows the evidence: "data.sfgov.org answers HTTP 301 (not 302) to
// data.sf.gov for queries without $select ... the Location keeps path and
// query string" and "data.sfgov.org answers 403 to any request whose query
// contains $select=" (evidence moves-301, moves-select-403); "Ordered and
// count queries get 403 on the legacy host; metadata and limit-only
// queries get 301" (evidence moves-ordered-count-403). A SODA3 POST carries its query in the body; no
// source says how the old host answers it, and it gets the 301 of
// "every request to the old host is 301-redirected" (evidence moves-all-301).
func (s *Emulator) SetMoved(old, to string) error {
	old = strings.ToLower(strings.TrimSpace(old))
	to = strings.ToLower(strings.TrimSpace(to))
	if !looksLikeDomain(old) || (to != "" && !looksLikeDomain(to)) || old == to {
		return fmt.Errorf("localportal: SetMoved(%q, %q): want two different host names", old, to)
	}
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.moves == nil {
		s.moves = map[string]string{}
	}
	if to == "" {
		delete(s.moves, old)
	} else {
		s.moves[old] = to
	}
	return nil
}

// movedTo returns where the host of r moved to, "" when it did not.
func (s *Emulator) movedTo(r *http.Request) string {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if len(s.moves) == 0 {
		return ""
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return s.moves[strings.TrimSuffix(strings.ToLower(host), ".")]
}

// serveMoved answers r as the old host of a portal that moved to to.
func serveMoved(w http.ResponseWriter, r *http.Request, to string) {
	for k := range r.URL.Query() {
		if k = strings.ToLower(k); k == "$select" || k == "$query" {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Server", "nginx")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(NginxForbidden)) //nolint:errcheck // the client went away
			return
		}
	}
	w.Header().Set("Location", "https://"+to+r.URL.RequestURI())
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(http.StatusMovedPermanently)
	w.Write([]byte("<html>\r\n<head><title>301 Moved Permanently</title></head>\r\n<body>\r\n<center><h1>301 Moved Permanently</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")) //nolint:errcheck // the client went away
}
