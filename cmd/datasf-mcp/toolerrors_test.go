package main

import (
	"bytes"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// A tool's error reaches the person at the terminal as its reason and a
// next step in commands and flags, never in the words written for a model
// (tool and argument names), in this process and through --server.
func TestToolErrorsSpeakToAPerson(t *testing.T) {
	t.Parallel()
	cli := newPersonCLI(t, socratatest.Schema{ID: "abcd-1234", Name: "Errors", Columns: []socratatest.Column{
		{Name: "N", FieldName: "n", DataType: "number"},
		{Name: "Label", FieldName: "label", DataType: "text"},
	}}, func(i int) map[string]any { return map[string]any{"n": i, "label": "x"} })

	modelWords := []string{"search_datasf", "get_schema", "query_datasf", "list_datasf", "call again", "Call again", "tell the user"}
	tests := []struct {
		args []string
		want []string // the reason and the command line's next step
	}{
		{[]string{"schema", "zzzz-9999"}, []string{"dataset zzzz-9999 was not found on the portal.", "hint: run `datasf-mcp search WORDS` to find the dataset's id"}},
		{[]string{"query", "abcd-1234", "SELECT nope WHERE n > 1"}, []string{`No such column "nope"`, "hint: run `datasf-mcp schema abcd-1234` for the dataset's columns"}},
		{[]string{"query", "abcd-1234", "SELECT n FROM errors"}, []string{"SoQL has no FROM", "hint: fix the SoQL and run the command again"}},
		{[]string{"query", "abcd-1234", "SELECT n WHERE label = Mission"}, []string{"a text value needs quotes.", "hint: quote the value (= 'Mission')"}},
	}
	for _, via := range []string{"in process", "--server"} {
		for _, tt := range tests {
			_, _, err := cli.run(t, via, tt.args...)
			if err == nil {
				t.Errorf("%s: datasf-mcp %q succeeded; want a tool error", via, tt.args)
				continue
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s: datasf-mcp %q: error %q; want it to say %q", via, tt.args, msg, w)
				}
			}
			for _, w := range modelWords {
				if strings.Contains(msg, w) {
					t.Errorf("%s: datasf-mcp %q: error %q speaks to a model (%q)", via, tt.args, msg, w)
				}
			}
		}
	}
}

// personCLI runs the command line as a person does, against a fake portal
// holding one generated dataset: in this process, or through --server at a
// datasf-mcp serving over HTTP.
type personCLI struct {
	portalURL, serverURL string
}

func newPersonCLI(t *testing.T, schema socratatest.Schema, row func(int) map[string]any) personCLI {
	t.Helper()
	fake := socratatest.NewServer(t)
	if err := fake.AddGenerated(t.Context(), schema, 3, row); err != nil {
		t.Fatal(err)
	}
	svc, err := datasf.New(t.Context(), datasf.Config{CleanupInterval: -1, Socrata: socrata.Options{BaseURL: fake.URL(), DiscoveryURL: fake.URL(), MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	handler, shutdown := svc.HTTPHandler()
	srv := httptest.NewServer(handler)
	t.Cleanup(func() { srv.Close(); _ = shutdown(t.Context()) })
	return personCLI{portalURL: fake.URL(), serverURL: srv.URL}
}

// run runs `datasf-mcp ARGS` via "in process" or "--server", and returns
// what it printed and its error.
func (c personCLI) run(t *testing.T, via string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	flags := []string{"--base-url", c.portalURL, "--discovery-url", c.portalURL, "--log-level", "error"}
	if via == "--server" {
		flags = []string{"--server", c.serverURL, "--log-level", "error"}
	}
	args = append(slices.Clip(args), flags...)
	cfg, err := parseConfig(args, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatalf("parseConfig(%q) = %v", args, err)
	}
	var out, errOut bytes.Buffer
	cfg.Stdout, cfg.Stderr = &out, &errOut
	err = run(t.Context(), cfg)
	return out.String(), errOut.String(), err
}
