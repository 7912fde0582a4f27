package mcpgo_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo"
)

// readmeClient is the README's "Go client in ten lines", compiled. The test
// below checks that the README shows exactly this body.
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
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	body := regexp.MustCompile(`(?s)func readmeClient\(.*?\) error \{\n(.*?)\treturn nil\n\}`).FindSubmatch(src)
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if norm(string(m[1])) != norm(string(body[1])) {
		t.Errorf("README snippet and readmeClient differ:\nREADME:\n%s\ncode:\n%s", m[1], body[1])
	}

	// And it runs: every row of a result, in order.
	results := newResults(t, 25)
	resp, err := results.CreateResponse(t.Context(), dualresp.Spec{Query: dualresp.Query{Kind: "letters"}, SampleSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := readmeClient(t.Context(), mcpgo.CallToolResult(resp)); err != nil {
		t.Fatalf("readmeClient: %v", err)
	}
}
