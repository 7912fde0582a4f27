package dualresp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// refusal is an Executor's error that has words for the caller.
type refusal struct{ why string }

func (e *refusal) Error() string { return "executor: the data source refused: " + e.why }

// A REST answer about a failed query says what failed in words a caller
// can use: the Executor's, from its error's type (Options.ErrorText), or
// that the data source did not answer in time; never the text of an error
// that has no words for the caller (Go package names, HTTP-client
// internals).
func TestRESTErrorsInOurWords(t *testing.T) {
	t.Parallel()
	exec := &genExecutor{Total: 50}
	errorText := func(err error) string {
		var r *refusal // errors.As, not AsType: the module's go line is 1.25
		if errors.As(err, &r) {
			return "the data source refused the query: " + r.why
		}
		return ""
	}
	srv, _, ts := startServer(t, exec, dualresp.Options{ErrorText: errorText}, nil)
	resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "gen", Text: "all"}, Columns: genColumns})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{"timeout", "the query behind this result failed: the data source did not answer in time", fmt.Errorf("socrata: resource API did not answer in time: %w",
			&url.Error{Op: "Get", URL: "https://data.sfgov.org/resource/x.json", Err: timeoutError{}})},
		{"deadline", "the query behind this result failed: the data source did not answer in time", fmt.Errorf("executor: %w", context.DeadlineExceeded)},
		{"refusal", "the query behind this result failed: the data source refused the query: bad column", fmt.Errorf("executor: page 2: %w", &refusal{"bad column"})},
		{"untyped", `the query behind this result failed"`, errors.New("socrata: the portal refused the query")},
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
			for _, leak := range []string{"dualresp:", "socrata:", "executor:", "net/http", "Client.Timeout"} {
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

// timeoutError is a network timeout, as net/http's client reports one.
type timeoutError struct{}

func (timeoutError) Error() string {
	return "net/http: request canceled (Client.Timeout exceeded while awaiting headers)"
}
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
