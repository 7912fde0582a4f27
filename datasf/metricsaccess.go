package datasf

import (
	"encoding/json"
	"net/http"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// metricsAccess serves h to the operator: to callers with one of tokens
// when there are any; to no one when the server has tenants (tenants: its
// REST tokens) but no operator token, as the metrics describe every
// tenant's use; to anyone otherwise.
func metricsAccess(tokens []string, tenants bool, h http.Handler) http.Handler {
	refuse := func(w http.ResponseWriter, msg string) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="datasf-mcp metrics"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "unauthorized", "message": msg})
	}
	switch {
	case len(tokens) > 0:
		auth := dualresp.BearerTokens(tokens...)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := auth(r); err != nil {
				refuse(w, "send Authorization: Bearer <token> with the operator's metrics token (DATASF_METRICS_TOKEN)")
				return
			}
			h.ServeHTTP(w, r)
		})
	case tenants:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			refuse(w, "/metrics is closed on a server with DATASF_REST_TOKEN: the operator sets DATASF_METRICS_TOKEN and scrapes with it")
		})
	}
	return h
}
