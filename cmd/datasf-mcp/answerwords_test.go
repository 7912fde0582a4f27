package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// A tool's answer reaches the person at the terminal with what it found and
// a hint in commands and flags, never with the next step written for a
// model (tool and argument names), in this process and through --server;
// JSON on stdout stays JSON, with the hint on stderr.
func TestAnswersSpeakToAPerson(t *testing.T) {
	t.Parallel()
	cli := newPersonCLI(t, socratatest.Schema{ID: "abcd-1234", Name: "Street Trees", Category: "Environment", Description: "Trees on city streets", Columns: []socratatest.Column{
		{Name: "Species", FieldName: "species", DataType: "text"},
		{Name: "Planted", FieldName: "planted", DataType: "number"},
	}}, func(i int) map[string]any { return map[string]any{"species": "oak", "planted": 2000 + i} })

	modelWords := []string{"search_datasf", "get_schema", "query_datasf", "list_datasf", "Call get_schema", "fieldName values in"}
	tests := []struct {
		args []string
		want []string // what the answer found, and the hint
	}{
		{[]string{"search", "trees"}, []string{`1 dataset matches "trees".`, "hint: run `datasf-mcp schema ID` with a dataset's id to see its columns"}},
		{[]string{"search", "qqxzq"}, []string{`No dataset matches "qqxzq".`, "| Environment | 1 |",
			"hint: try other or fewer words, or run `datasf-mcp list --category NAME` with one of the categories above to see its datasets"}},
		{[]string{"schema", "abcd-1234"}, []string{"“Street Trees” (abcd-1234): 2 columns, 3 rows.", "hint: run `datasf-mcp query abcd-1234 'SELECT ...'` using the fieldName column above"}},
		{[]string{"list", "--category", "Nope"}, []string{`No dataset is in category "Nope".`, "hint: run `datasf-mcp list --category NAME` with one of the categories above"}},
	}
	for _, via := range []string{"in process", "--server"} {
		for _, tt := range tests {
			for _, format := range []string{"markdown", "json"} {
				args := append(slices.Clip(tt.args), "--format", format)
				stdout, stderr, err := cli.run(t, via, args...)
				if err != nil {
					t.Errorf("%s: datasf-mcp %q: %v", via, args, err)
					continue
				}
				shown := stdout + stderr
				if format == "json" {
					var v map[string]any
					if err := json.Unmarshal([]byte(stdout), &v); err != nil {
						t.Errorf("%s: datasf-mcp %q: stdout is not JSON (%v): %q", via, args, err, stdout)
					}
					if hint := tt.want[len(tt.want)-1]; !strings.Contains("\n"+stderr, "\n"+hint) {
						t.Errorf("%s: datasf-mcp %q: stderr %q; want a line starting %q", via, args, stderr, hint)
					}
				} else {
					for _, w := range tt.want {
						if !strings.Contains(stdout, w) {
							t.Errorf("%s: datasf-mcp %q: stdout %q; want it to say %q", via, args, stdout, w)
						}
					}
				}
				for _, w := range modelWords {
					if strings.Contains(shown, w) {
						t.Errorf("%s: datasf-mcp %q: %q speaks to a model (%q)", via, args, shown, w)
					}
				}
			}
		}
	}
}

// Every next step an answer may leave out has a hint of the command line:
// the codes are read from package datasf's source, every constant of type
// NextStep in any of its files.
func TestEveryAnswerStepHasAHint(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "datasf", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var codes []datasf.NextStep
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			if typ, ok := vs.Type.(*ast.Ident); !ok || typ.Name != "NextStep" {
				return true
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok {
					t.Errorf("%s: a NextStep constant that is not a string literal: %T", fset.Position(v.Pos()), v)
					continue
				}
				code, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				codes = append(codes, datasf.NextStep(code))
			}
			return true
		})
	}
	if len(codes) < 9 {
		t.Fatalf("found %d NextStep constants in datasf; want the nine or more it has", len(codes))
	}
	for _, code := range codes {
		for _, tool := range []string{"search_datasf", "list_datasf", "get_schema", "list_results"} {
			res := &mcp.CallToolResult{Result: mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{datasf.MetaNextStep: string(code)}}}}
			if got := answerStep(config{Tool: tool}, res); got == "" {
				t.Errorf("answerStep(%s, code %q) = \"\"; want a hint", tool, code)
			}
		}
	}
}

// An answer too large for a model's context (here get_schema of 400
// described columns, about 60 KB) reaches the person whole, in this
// process and through --server: not 5 columns, a model's note and a link
// that ends with the process.
func TestLargeAnswersWhole(t *testing.T) {
	t.Parallel()
	const width = 400
	schema := socratatest.Schema{ID: "wide-0001", Name: "Wide Survey"}
	for i := range width {
		schema.Columns = append(schema.Columns, socratatest.Column{Name: fmt.Sprintf("Answer %d", i), FieldName: fmt.Sprintf("answer_%03d", i),
			DataType: "text", Description: fmt.Sprintf("The respondent's answer to question %d of the survey, as written on the form", i)})
	}
	cli := newPersonCLI(t, schema, func(i int) map[string]any { return map[string]any{"answer_000": "yes"} })
	for _, via := range []string{"in process", "--server"} {
		stdout, _, err := cli.run(t, via, "schema", "wide-0001", "--format", "json")
		if err != nil {
			t.Fatalf("%s: datasf-mcp schema wide-0001: %v", via, err)
		}
		var out struct {
			Columns    []map[string]any `json:"columns"`
			FullResult any              `json:"full_result"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("%s: schema --format json printed no JSON object (%v):\n%.300s", via, err, stdout)
		}
		if len(out.Columns) != width || out.FullResult != nil || strings.Contains(stdout, "too large to show") {
			t.Errorf("%s: schema of %d columns (%d bytes) printed %d columns, full_result %v; want all of them, whole",
				via, width, len(stdout), len(out.Columns), out.FullResult != nil)
		}
	}
}
