package datasf_test

import (
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readmeToolRows returns the rows of the README's tool table ("| tool |
// arguments | returns |"), keyed by tool name, in order.
func readmeToolRows(t *testing.T) (names []string, rows map[string]string) {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| tool | arguments | returns |\n")
	if !ok {
		t.Fatal(`README.md has no "| tool | arguments | returns |" table`)
	}
	rows = map[string]string{}
	for line := range strings.SplitSeq(table, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		m := regexp.MustCompile("^\\| `([a-z_]+)` \\|").FindStringSubmatch(line)
		if m == nil {
			continue // the |---| line
		}
		names = append(names, m[1])
		rows[m[1]] = line
	}
	return names, rows
}

// TestREADMEToolTable checks that the README's tool table names exactly the
// registered tools the model sees (not the result viewer app's own tool), each with its arguments (marked ? when optional, format
// aside: the README says every tool takes it) and the limits and defaults
// of its input schema.
func TestREADMEToolTable(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	names, rows := readmeToolRows(t)
	if diff := cmp.Diff(modelToolNames(t, h), names); diff != "" {
		t.Errorf("README tool table vs the registered tools (-registered +README):\n%s", diff)
	}
	for _, tool := range h.srv.Tools() {
		row, ok := rows[tool.Tool.Name]
		if !ok {
			continue
		}
		argsCell := strings.Split(row, " | ")[1]
		var schema struct {
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		}
		if err := json.Unmarshal(tool.Tool.RawInputSchema, &schema); err != nil {
			t.Fatalf("%s: %v", tool.Tool.Name, err)
		}
		n := 0
		for name, p := range schema.Properties {
			if name == "format" {
				continue
			}
			n++
			mark := "`" + name + "?`"
			if slices.Contains(schema.Required, name) {
				mark = "`" + name + "`"
			}
			i := strings.Index(argsCell, mark)
			if i < 0 {
				t.Errorf("README row of %s does not name argument %s as %s: %s", tool.Tool.Name, name, mark, argsCell)
				continue
			}
			// The argument's notes run up to the next argument.
			notes := argsCell[i+len(mark):]
			if j := strings.Index(notes, "`, `"); j >= 0 {
				notes = notes[:j]
			}
			if j := regexp.MustCompile("\\), `").FindStringIndex(notes); j != nil {
				notes = notes[:j[0]+1]
			}
			for _, want := range limitNotes(p) {
				if !strings.Contains(notes, want) {
					t.Errorf("README row of %s: argument %s says %q; want it to say %q (from the input schema)", tool.Tool.Name, name, strings.TrimSpace(notes), want)
				}
			}
		}
		if n == 0 && !strings.Contains(argsCell, "none") {
			t.Errorf("README row of %s: %q; want \"none\" (it takes only format)", tool.Tool.Name, argsCell)
		}
	}
}

// limitNotes are the words the README must use for an argument's limits:
// "LO-HI" for both bounds, "at most HI" for an upper bound only, and
// "default D".
func limitNotes(p map[string]any) []string {
	var out []string
	for _, kw := range [][2]string{{"minLength", "maxLength"}, {"minimum", "maximum"}, {"minProperties", "maxProperties"}} {
		lo, hasLo := p[kw[0]]
		hi, hasHi := p[kw[1]]
		switch {
		case hasLo && hasHi:
			out = append(out, fmt.Sprintf("%v-%v", lo, hi))
		case hasHi:
			out = append(out, fmt.Sprintf("at most %v", hi))
		}
	}
	if d, ok := p["default"]; ok {
		out = append(out, fmt.Sprintf("default %v", d))
	}
	return out
}

// TestDocToolList checks that the package comment (doc.go) lists exactly
// the registered tools the model sees.
func TestDocToolList(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("doc.go has no package comment")
	}
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^\s*- ([a-z_]+): `).FindAllStringSubmatch(f.Doc.Text(), -1) {
		listed = append(listed, m[1])
	}
	if diff := cmp.Diff(modelToolNames(t, h), listed); diff != "" {
		t.Errorf("the tools listed in doc.go vs the registered tools (-registered +doc.go):\n%s", diff)
	}
}
