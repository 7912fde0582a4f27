package socrata

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestTokenCutByClipIsRedacted checks bodies whose token would straddle the
// point where an error text is clipped: no prefix of the token may remain.
func TestTokenCutByClipIsRedacted(t *testing.T) {
	t.Parallel()
	const tok = "TOKEN-abcdefghijklmnopqrstuvwxyz0123456789"
	tests := []struct {
		name   string
		status int
		ctype  string
		body   string
		stream bool // read through QueryStream rows rather than Schema
	}{
		{"plain text 500", 500, "text/plain", strings.Repeat("x", 290) + tok + strings.Repeat("y", 50), false},
		{"broken JSON 500", 500, "application/json", "{" + strings.Repeat("x", 290) + tok + strings.Repeat("y", 50), false},
		{"HTML title 503", 503, "text/html", "<html><title>" + strings.Repeat("t", 110) + tok + "</title></html>", false},
		{"row not an object", 200, "application/json", `["` + strings.Repeat("r", 40) + tok + `"]`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _, _ := newTestClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}), Options{AppToken: tok, MaxRetries: -1})
			var err error
			if tt.stream {
				var s *RowStream
				s, err = c.QueryStream(t.Context(), "abcd-1234", "SELECT *")
				if err == nil {
					_, err = s.Next()
					s.Close()
				}
			} else {
				_, err = c.Schema(t.Context(), "abcd-1234")
			}
			if err == nil {
				t.Fatal("got no error; want one")
			}
			var api *APIError
			if !errors.As(err, &api) {
				t.Fatalf("err = %T %v; want *APIError", err, err)
			}
			for _, text := range []string{err.Error(), api.Message} {
				if strings.Contains(text, tok[:8]) {
					t.Errorf("a prefix of the token is in the error text: %s", text)
				}
			}
		})
	}
}
