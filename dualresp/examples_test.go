package dualresp_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"
)

// TestEntryPointsHaveExamples: each public entry point a library user
// starts from has a runnable example with checked output, so go doc shows
// it next to the function: New with a custom Executor, the mcp-go and
// go-sdk adapters, and the client's FetchAll and Rows.
func TestEntryPointsHaveExamples(t *testing.T) {
	t.Parallel()
	for dir, want := range map[string][]string{
		".":     {"New", "Parsed_FetchAll", "Parsed_Rows", "_client"},
		"mcpgo": {"CallToolResult", "Parse", ""},
		"gosdk": {"Result", "Parse", ""},
	} {
		got := map[string]*doc.Example{}
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		var parsed []*ast.File
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			af, err := parser.ParseFile(fset, f, src, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			parsed = append(parsed, af)
		}
		for _, ex := range doc.Examples(parsed...) {
			got[ex.Name] = ex
		}
		for _, name := range want {
			ex := got[name]
			fn := "Example" + name
			switch {
			case ex == nil:
				t.Errorf("dualresp/%s has no %s", dir, fn)
			case ex.Output == "" || ex.EmptyOutput:
				t.Errorf("dualresp/%s %s has no // Output: to check", dir, fn)
			}
		}
	}
}
