package dualresp

import (
	"crypto/subtle"
	"net/http"
	pathpkg "path"
	"strings"
)

// CheckLink reports whether path (a request's URL path) is at a link made
// with linkKey, the function of Options.LinkKey: /k/KEY/resources/ID, or a
// path below it such as /k/KEY/resources/ID/export, whose KEY is
// linkKey(ID) (compared in constant time). It returns the path without
// /k/KEY, the one Handler serves. A server that hands out keyed links
// calls it (or uses Server.LinkHandler) before passing a request on to
// Handler; a request that fails the check should get what an unknown id
// gets, so that a refusal tells nothing.
func CheckLink(path string, linkKey func(id string) string) (rest string, ok bool) {
	after, found := strings.CutPrefix(path, "/k/")
	// A path with "." or ".." segments (or doubled slashes) is no link we
	// made: refused, so that what passes on names the id it was checked for.
	if !found || linkKey == nil || pathpkg.Clean(path) != path {
		return "", false
	}
	key, tail, _ := strings.Cut(after, "/")
	rest = "/" + tail
	id, found := strings.CutPrefix(rest, "/resources/")
	id, _, _ = strings.Cut(id, "/")
	if !found || id == "" || key == "" {
		return "", false
	}
	if subtle.ConstantTimeCompare([]byte(key), []byte(linkKey(id))) != 1 {
		return "", false
	}
	return rest, true
}

// LinkHandler serves next (Handler, or a handler wrapping it) at the links
// of Options.LinkKey: a request whose path passes CheckLink goes to next
// with /k/KEY cut from its path; any other request gets the 404 of an
// unknown id. Mount it at "/k/" beside whatever serves "/resources/" to
// the callers allowed to read by id alone (nobody, or the holders of a
// secret). Without Options.LinkKey it answers 404 to everything.
func (s *Server) LinkHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := CheckLink(r.URL.Path, s.linkKey)
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "message": "no resource with this id (it may have expired and been removed)"})
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = rest, ""
		next.ServeHTTP(w, r2)
	})
}
