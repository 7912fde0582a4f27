package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo"
)

// readmeClient is the README's "Go client in ten lines", compiled. The test
// below checks that the README shows exactly this body. It is here, in the
// module of the README, and not in dualresp/mcpgo's: a module's tests read
// only the module's files, which are all a user of the module (or its copy
// in the module cache) has.
func readmeClient(ctx context.Context, toolResult *mcp.CallToolResult) error {
	client, err := dualresp.NewClient(dualresp.ClientOptions{})
	if err != nil {
		return err
	}
	parsed := client.Parse(toolResult) // an *mcp.CallToolResult, its JSON, or structuredContent
	if parsed == nil {
		return errors.New("not a dual response")
	}
	fmt.Println(len(parsed.Sample), "of", parsed.TotalCount)
	for row, err := range parsed.Rows(ctx) { // lazy pages; resumes after transient failures
		if err != nil {
			return err
		}
		fmt.Println(row) // the row's JSON, as the server sent it
	}
	return nil
}

func TestREADMEGoClientSnippetIsCompiledCode(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## The Go client in ten lines\n\n```go\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README has no Go client snippet")
	}
	src, err := os.ReadFile("readme_goclient_test.go")
	if err != nil {
		t.Fatal(err)
	}
	body := regexp.MustCompile(`(?s)func readmeClient\(.*?\) error \{\n(.*?)\treturn nil\n\}`).FindSubmatch(src)
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if norm(string(m[1])) != norm(string(body[1])) {
		t.Errorf("README snippet and readmeClient differ:\nREADME:\n%s\ncode:\n%s", m[1], body[1])
	}

	// And it runs: every row of a result, in order.
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	results, err := dualresp.New(dualresp.Options{BaseURL: ts.URL, CleanupInterval: -1,
		Executors: map[string]dualresp.Executor{"letters": letters(5)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = results.Close() })
	mux.Handle("/resources/", results.Handler())
	resp, err := results.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "letters"}, SampleSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := readmeClient(t.Context(), mcpgo.CallToolResult(resp)); err != nil {
		t.Fatalf("readmeClient: %v", err)
	}
}

// letters is an Executor of n rows {"i": 0, "letter": "a"}, …, whatever
// the query.
type letters int64

func (n letters) Prepare(context.Context, dualresp.Query) (dualresp.Plan, error) { return n, nil }

func (n letters) Count(context.Context) (int64, error) { return int64(n), nil }

func (n letters) Page(_ context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	var res dualresp.PageResult
	for i := req.Offset; i < min(req.Offset+req.Limit, int64(n)); i++ {
		res.Rows = append(res.Rows, json.RawMessage(fmt.Sprintf(`{"i":%d,"letter":"%c"}`, i, 'a'+i%26)))
	}
	return res, nil
}
