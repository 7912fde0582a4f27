package dualresp_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// A REST answer about a failed query says what failed in words a caller
// can use, without the Go package paths and HTTP-client internals of the
// error (issue 34: `dualresp: export query failed: socrata: … Client.Timeout
// exceeded while awaiting headers` reached callers).
func TestRESTErrorsInOurWords(t *testing.T) {
	t.Parallel()
	exec := &genExecutor{Total: 50}
	srv, _, ts := startServer(t, exec, dualresp.Options{}, nil)
	resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "gen", Text: "all"}, Columns: genColumns})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{"timeout", "did not answer in time", fmt.Errorf("socrata: resource API did not answer in time: %w",
			errors.New(`Get "https://data.sfgov.org/resource/x.json": net/http: request canceled (Client.Timeout exceeded while awaiting headers)`))},
		{"portal refusal", "the portal refused the query", errors.New("socrata: the portal refused the query")},
	} {
		exec.PageErr = tc.err
		for _, path := range []string{"?offset=0&limit=10", "/export?format=csv"} {
			r, err := http.Get(ts.URL + "/resources/" + resp.ID() + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if path != "/export?format=csv" && r.StatusCode != http.StatusBadGateway {
				t.Errorf("%s: GET %s = %d; want 502", tc.name, path, r.StatusCode)
			}
			for _, leak := range []string{"dualresp:", "socrata:", "net/http", "Client.Timeout"} {
				if strings.Contains(string(body), leak) {
					t.Errorf("%s: GET %s = %s; want no %q in it", tc.name, path, body, leak)
				}
			}
			if r.StatusCode == http.StatusBadGateway && !strings.Contains(string(body), tc.want) {
				t.Errorf("%s: GET %s = %s; want it to say %q", tc.name, path, body, tc.want)
			}
		}
	}
}
