package datasf_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

// TestLandingPage: GET / says what the server is and where MCP, REST,
// the metrics and the health check are: HTML to a browser, JSON to
// anything else.
func TestLandingPage(t *testing.T) {
	t.Parallel()
	env, ts := httpEnv(t, datasf.Config{})
	_ = env
	get := func(accept string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+"/", nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, page := get("text/html,application/xhtml+xml")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / from a browser = %d %s; want 200 text/html", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{"/mcp", "/resources/", "/metrics", "/healthz", "datasf-mcp"} {
		if !strings.Contains(page, want) {
			t.Errorf("the landing page does not name %s:\n%s", want, page)
		}
	}
	resp, body := get("application/json")
	var info struct {
		Links map[string]string `json:"links"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &info) != nil || info.Links["rest"] == "" || info.Links["metrics"] == "" {
		t.Errorf("GET / as JSON = %d %s; want the links", resp.StatusCode, body)
	}
}
