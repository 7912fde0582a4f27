// Package adaptertest checks an SDK adapter of dualresp (such as
// dualresp/mcpgo and dualresp/gosdk): that what it gives a model stays
// within Response.ModelBytes, which dualresp keeps within the byte budget,
// and that its entry points have examples (HasExamples).
// It is the adapters' shared test, in the core module so that each
// adapter's module runs it against its own SDK.
package adaptertest

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// rows is an Executor over fixed rows.
type rows []json.RawMessage

// Prepare returns r itself: every query is the same result.
func (r rows) Prepare(context.Context, dualresp.Query) (dualresp.Plan, error) { return r, nil }

func (r rows) Count(context.Context) (int64, error) { return int64(len(r)), nil }

func (r rows) Page(_ context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	lo := min(req.Offset, int64(len(r)))
	hi := min(lo+req.Limit, int64(len(r)))
	return dualresp.PageResult{Rows: r[lo:hi]}, nil
}

// ContentWithinModelBytes checks, over generated rows, columns, names and
// budgets, that the content an adapter makes of a response (content: its
// text and resource_link, as the SDK named sdk marshals them) and the
// structured content together are at most Response.ModelBytes: the
// envelope the SDK adds around the text and the link is the one
// ModelBytes counts.
func ContentWithinModelBytes(t *testing.T, sdk string, content func(*dualresp.Response) any) {
	t.Helper()
	rapid.Check(t, func(rt *rapid.T) {
		budget := rapid.SampledFrom([]int{0, 2048, 4096}).Draw(rt, "budget")
		ncols := rapid.IntRange(1, 60).Draw(rt, "columns")
		nrows := rapid.IntRange(0, 30).Draw(rt, "rows")
		maxLen := rapid.SampledFrom([]int{0, 5, 100, 3000}).Draw(rt, "maxLen")
		char := rapid.SampledFrom([]string{"a", "é", "😀", `"`, "\n", "<"}).Draw(rt, "char")
		var cols []dualresp.Column
		for c := range ncols {
			cols = append(cols, dualresp.Column{Name: fmt.Sprintf("column_%d", c), Type: "text"})
		}
		var data rows
		for r := range nrows {
			m := map[string]any{}
			for c := range ncols {
				m[cols[c].Name] = strings.Repeat(char, (r*7+c*13)%(maxLen+1))
			}
			b, _ := json.Marshal(m)
			data = append(data, b)
		}
		name := rapid.SampledFrom([]string{"", "Letters", strings.Repeat(char, 300)}).Draw(rt, "name")
		srv, err := dualresp.New(dualresp.Options{BaseURL: "http://127.0.0.1:8765", ByteBudget: budget, CleanupInterval: -1,
			Executors: map[string]dualresp.Executor{"rows": data}})
		if err != nil {
			rt.Fatal(err)
		}
		defer srv.Close()
		resp, err := srv.CreateResponse(t.Context(), dualresp.Spec{Name: name, Columns: cols, SampleSize: max(nrows-rapid.IntRange(0, 1).Draw(rt, "partial"), 1),
			Query: dualresp.Query{Kind: "rows"}})
		if err != nil {
			rt.Fatal(err)
		}
		c, err := json.Marshal(content(resp))
		if err != nil {
			rt.Fatal(err)
		}
		structured, err := json.Marshal(resp.StructuredContent())
		if err != nil {
			rt.Fatal(err)
		}
		if n := len(c) + len(structured); n > resp.ModelBytes() {
			rt.Fatalf("%s content %d + structured content %d = %d bytes; ModelBytes %d", sdk, len(c), len(structured), n, resp.ModelBytes())
		}
	})
}

// HasExamples checks that the package in the working directory (a test's
// own package) has, among its *_test.go files, a runnable example with a
// // Output: to check for each of names: "New" for ExampleNew,
// "Parsed_Rows" for ExampleParsed_Rows, "" for the package's Example. It
// reads the files of the package's own directory only, so that the check
// holds for the module alone (a module's copy in the module cache has
// none of the others).
func HasExamples(t *testing.T, names ...string) {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
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
	got := map[string]*doc.Example{}
	for _, ex := range doc.Examples(parsed...) {
		got[ex.Name] = ex
	}
	for _, name := range names {
		switch ex := got[name]; {
		case ex == nil:
			t.Errorf("no Example%s in %d test files", name, len(files))
		case ex.Output == "" || ex.EmptyOutput:
			t.Errorf("Example%s has no // Output: to check", name)
		}
	}
}
