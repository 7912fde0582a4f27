package localportal_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
)

// With a Secret, the listener answers only requests that carry it (the
// portal's Client sends it), and only under a loopback or served Host.
func TestSecretAndHost(t *testing.T) {
	t.Parallel()
	p, err := localportal.New(localportal.Options{Secret: "s3cret-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		client *http.Client
		host   string
		want   int
	}{
		{"no secret", http.DefaultClient, "", http.StatusForbidden},
		{"no secret, portal host", http.DefaultClient, "data.sf.gov", http.StatusForbidden},
		{"secret, loopback host", p.Client(), "", http.StatusOK},
		{"secret, portal host", p.Client(), "data.sf.gov", http.StatusOK},
		{"secret, other host", p.Client(), "evil.example", http.StatusForbidden},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, p.URL()+"/api/catalog/v1", nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := tc.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: GET /api/catalog/v1 = %d %.120s; want %d", tc.name, resp.StatusCode, body, tc.want)
		}
	}
}
