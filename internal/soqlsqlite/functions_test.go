package soqlsqlite

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// The function tables agree with soql on which functions are aggregates.
func TestFunctionTablesAgreeWithSoQL(t *testing.T) {
	t.Parallel()
	for name := range aggregateFunctions {
		if !soql.IsAggregate(name) {
			t.Errorf("aggregateFunctions has %q; soql.IsAggregate(%q) = false", name, name)
		}
	}
	for name := range scalarFunctions {
		if soql.IsAggregate(name) {
			t.Errorf("scalarFunctions has %q; soql.IsAggregate(%q) = true", name, name)
		}
	}
}

// TestFunctionTable checks docs/soql-functions.md against the code: every
// function marked supported by the local portal has cases in testdata/cases
// (fn-<name>, fn-<name>-2, ...; TestCases runs them), every one marked not
// supported is refused, and every one marked parsed parses.
func TestFunctionTable(t *testing.T) {
	t.Parallel()
	entries := readFunctionTable(t)
	dirs, err := filepath.Glob(filepath.Join("testdata", "cases", "fn-*"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]string{} // case folder name without its number -> query texts
	for _, dir := range dirs {
		name := strings.TrimPrefix(filepath.Base(dir), "fn-")
		if i := strings.LastIndex(name, "-"); i > 0 && strings.Trim(name[i+1:], "0123456789") == "" {
			name = name[:i]
		}
		cases[name] = append(cases[name], strings.TrimSpace(string(readCaseFile(t, dir, "query.soql"))))
	}
	table := caseTable(t, filepath.Join("testdata", "cases", "fn-avg"))
	tested := map[string]bool{}
	for _, e := range entries {
		queries, ok := cases[caseName(e.name)]
		switch {
		case e.portal && !ok:
			t.Errorf("%s is marked supported by the portal in docs/soql-functions.md but has no case testdata/cases/fn-%s", e.name, caseName(e.name))
		case !e.portal && ok:
			t.Errorf("%s has cases but docs/soql-functions.md marks it not supported by the portal", e.name)
		}
		if e.portal {
			tested[caseName(e.name)] = true
		}
		for _, src := range queries {
			if _, err := soql.Parse(src); err != nil && e.parser {
				t.Errorf("%s: marked parsed, soql.Parse(%q): %v", e.name, src, err)
			}
		}
		if !e.portal && e.call != "" {
			src := "SELECT " + e.call + " AS x"
			if q, err := soql.Parse(src); err == nil {
				if _, err := Compile(table, src, q, Options{}); err == nil {
					t.Errorf("%s is marked not supported, but Compile(%s) succeeded", e.name, src)
				}
			}
		}
		if e.parser && e.call != "" {
			if _, err := soql.Parse("SELECT " + e.call); err != nil {
				t.Errorf("%s is marked parsed, but soql.Parse(SELECT %s): %v", e.name, e.call, err)
			}
		}
	}
	for name := range cases {
		if !tested[name] {
			t.Errorf("cases fn-%s, for a function docs/soql-functions.md does not list as supported", name)
		}
	}
}

// operatorCaseNames name the case folders of operators and clauses.
var operatorCaseNames = map[string]string{"+": "plus", "-": "minus", "*": "times", "/": "divide", "%": "modulo",
	"^": "power", "||": "concat", "=": "eq", "==": "eqeq", "!=": "ne", "<>": "ltgt", "<": "lt", "<=": "le",
	">": "gt", ">=": "ge", "|>": "pipe", "::cast": "cast"}

// caseName is the name of the case folders of a function of
// docs/soql-functions.md, after "fn-": its name, or its words joined by
// hyphens ("order by ... nulls": order-by-nulls), or an operator's name.
func caseName(name string) string {
	if s, ok := operatorCaseNames[name]; ok {
		return s
	}
	return strings.Join(strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	}), "-")
}

type tableEntry struct {
	name           string
	call           string // an example call for unsupported functions, from the table's last column
	portal, parser bool
}

// readFunctionTable reads the rows "| name | group | portal | parser | notes |"
// of docs/soql-functions.md; a notes cell starting with "`call`" gives an
// example call.
func readFunctionTable(t *testing.T) []tableEntry {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "soql-functions.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []tableEntry
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.ReplaceAll(line, `\|`, "\x00"), "|"), "|")
		for i := range cells {
			cells[i] = strings.ReplaceAll(cells[i], "\x00", "|")
		}
		if len(cells) < 5 {
			t.Fatalf("docs/soql-functions.md: row %q has %d cells; want 5", line, len(cells))
		}
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		name = strings.TrimSuffix(name, "(...)")
		mark := func(s string) bool {
			s = strings.TrimSpace(s)
			if s != "yes" && s != "no" {
				t.Fatalf("docs/soql-functions.md: %s: support cell %q; want yes or no", name, s)
			}
			return s == "yes"
		}
		e := tableEntry{name: name, portal: mark(cells[2]), parser: mark(cells[3])}
		if notes := strings.TrimSpace(cells[4]); !e.portal && strings.HasPrefix(notes, "`") {
			e.call = strings.SplitN(notes[1:], "`", 2)[0]
		}
		if seen[name] {
			continue // listed in two groups (query function and data transform)
		}
		seen[name] = true
		out = append(out, e)
	}
	if len(out) < 50 {
		t.Fatalf("docs/soql-functions.md: only %d rows read", len(out))
	}
	return out
}
