package soql

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
)

func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

type refCase struct {
	Kind          string `json:"kind"`
	Valid         bool   `json:"valid"`
	SoQL          string `json:"soql"`
	ExpectedError string `json:"expected_error"`
	File          string `json:"file"`
	Line          int    `json:"line"`
}

// refOutOfScope lists the "valid" soql-reference cases this package does not
// parse, keyed by kind and text, with the reason. Every entry must be in the
// corpus and must be rejected by our parser (so a stale entry fails the test).
var refOutOfScope = map[[2]string]string{
	// Mislabelled in the fixture: ParserTest lines 197 and 201 assert BadParse;
	// the corpus also carries the same two texts with valid=false.
	{"select", "select * order by x search 'weather' order by x"}:       "mislabelled: ParserTest asserts BadParse (duplicate ORDER BY around SEARCH)",
	{"select", "select * search 'weather' order by x search 'weather'"}: "mislabelled: ParserTest asserts BadParse (duplicate SEARCH around ORDER BY)",
	// Socrata-internal / newer SoQL features not offered by the SODA endpoints the server targets.
	{"select", "select count(*) over (partition by column)"}:                                                                            "window functions (OVER) are Socrata-internal SoQL",
	{"select", "select count(column_a) over (partition by column_b)"}:                                                                   "window functions (OVER) are Socrata-internal SoQL",
	{"select", "select row_number() over(partition by x, y order by m, n)"}:                                                             "window functions (OVER) are Socrata-internal SoQL",
	{"select", "select row_number() over(partition by x, y order by m desc null last, n)"}:                                              "window functions (OVER) are Socrata-internal SoQL",
	{"select", "select avg(x) over(partition by x, y)"}:                                                                                 "window functions (OVER) are Socrata-internal SoQL",
	{"select", "select avg(x) over(order by m, n)"}:                                                                                     "window functions (OVER) are Socrata-internal SoQL",
	{"select", "select avg(x) over()"}:                                                                                                  "window functions (OVER) are Socrata-internal SoQL",
	{"select", "select avg(x) over(order by m range 123 PRECEDING)"}:                                                                    "window functions (OVER) are Socrata-internal SoQL",
	{"select", "SELECT 1 |> (SELECT 2 UNION SELECT 3 FROM @t2 )"}:                                                                       "mislabelled: the test asserts rejection (ExpectedLeafQuery); UNION and FROM @table are Socrata-internal",
	{"select", "select c1 join (select c11 from @t1) as j1 on true join lateral (select c21 from @t2 where c21=@j1.c11) as j2 on true"}: "JOIN / FROM @table are Socrata-internal SoQL",
	{"select", "select distinct on (col1, col2) col3, col4"}:                                                                            "DISTINCT ON is Socrata-internal SoQL",
	{"select", "select distinct on (col1, col2) col3, col4 order by col2, col1"}:                                                        "DISTINCT ON is Socrata-internal SoQL",
	{"select", "select *(except a)"}:                                                                                                    "star-except selection *(EXCEPT ...) is Socrata-internal SoQL",
	{"select", "select *(except a,b)"}:                                                                                                  "star-except selection *(EXCEPT ...) is Socrata-internal SoQL",
	{"select", "select :*(except a)"}:                                                                                                   "star-except selection *(EXCEPT ...) is Socrata-internal SoQL",
	{"select", "select :*(except :a)"}:                                                                                                  "star-except selection *(EXCEPT ...) is Socrata-internal SoQL",
	{"select", "select *(except :a)"}:                                                                                                   "star-except selection *(EXCEPT ...) is Socrata-internal SoQL",
	{"expression-roundtrip", "SELECT @aaaa-aaaa.`name_last` JOIN @aaaa-aaaa ON `name_last` = @aaaa-aaaa.`name_last`"}:                   "JOIN and @table references are Socrata-internal SoQL",
	{"expression-roundtrip", "SELECT `:id`, @a.`name_last` JOIN @aaaa-aaaa AS @a ON `name_last` = @a.`name_last`"}:                      "JOIN and @table references are Socrata-internal SoQL",
	{"expression-roundtrip", "SELECT HINT( materialized, no_rollup ) `balance` ORDER BY `balance` ASC NULL LAST"}:                       "HINT(...) is Socrata-internal SoQL",
	{"expression-roundtrip", ""}:                                                                                                        "extraction artefact: ToStringTest line 35 is a multi-line stripMargin string the fixture lost; the empty string is not an expression",
	// Lines 354-422 of ParserTest are commented-out exploratory show(...) calls, not
	// assertions; these texts are not valid SoQL and Socrata's parser rejects them.
	{"expression", "x between a is null and a between 5 and 6 or f(x x"}: "commented-out show() probe, not an assertion: unclosed call, two expressions in a row",
	{"expression", "x x"}:                     "commented-out show() probe, not an assertion: line 60 asserts that 'x y' is rejected",
	{"expression", "* 8"}:                     "commented-out show() probe, not an assertion: '*' cannot start an expression",
	{"select", "x"}:                           "commented-out show() probe, not an assertion: a bare expression is not a query",
	{"select", "select a, b where"}:           "commented-out show() probe, not an assertion: WHERE without an expression",
	{"select", "select a, b group"}:           "commented-out show() probe, not an assertion: GROUP without BY",
	{"select", "select a, b order"}:           "commented-out show() probe, not an assertion: ORDER without BY",
	{"select", "select a, b having"}:          "commented-out show() probe, not an assertion: HAVING without an expression",
	{"select", "select *("}:                   "commented-out show() probe, not an assertion: incomplete *(EXCEPT",
	{"select", "select *(except"}:             "commented-out show() probe, not an assertion: incomplete *(EXCEPT",
	{"select", "select *(except a"}:           "commented-out show() probe, not an assertion: incomplete *(EXCEPT",
	{"select", "select *(except a,"}:          "commented-out show() probe, not an assertion: incomplete *(EXCEPT",
	{"select", "select * order by x, y gnu,"}: "commented-out show() probe, not an assertion: stray identifier and trailing comma",
	{"select", "select :*,"}:                  "commented-out show() probe, not an assertion: trailing comma",
	{"select", "select *,"}:                   "commented-out show() probe, not an assertion: trailing comma",
	{"select", "select :*,*,"}:                "commented-out show() probe, not an assertion: trailing comma",
}

// refKnownDifferentGot lists invalid cases where our error names a different
// offending token than Socrata's, with the reason.
var refKnownDifferentGot = map[string]string{
	"avg(x) over(order by m row 123 PRECEDING)": "window functions are out of scope: we stop at `over', Socrata at `row'",
}

var socrataGot = regexp.MustCompile(`but got (.*)$`)

// corpusParsed collects what the corpus tests parsed, for the round-trip and
// position tests.
type corpusItem struct {
	name string
	src  string
	q    *Query
	e    Expr
}

func parseRefCase(c refCase) (*Query, Expr, error) {
	if c.Kind == "select" || (c.Kind == "expression-roundtrip" && strings.HasPrefix(strings.ToUpper(c.SoQL), "SELECT")) {
		q, err := Parse(c.SoQL)
		return q, nil, err
	}
	e, err := ParseExpr(c.SoQL)
	return nil, e, err
}

func loadReference(t *testing.T, logCounts bool) (items []corpusItem) {
	t.Helper()
	cases := readJSONL[refCase](t, fixtures.Path(t, "soql", "soql-reference-parser-tests.jsonl"))
	if len(cases) != 120 {
		t.Errorf("soql-reference corpus has %d cases; want 120", len(cases))
	}
	var valid, parsed, outOfScope, invalid, rejected, gotAgrees int
	seen := map[[2]string]bool{}
	for _, c := range cases {
		q, e, err := parseRefCase(c)
		name := c.Kind + " " + strings.TrimPrefix(c.File[strings.LastIndex(c.File, "/")+1:], "") + ":" + itoa(c.Line)
		if !c.Valid {
			invalid++
			if err == nil {
				t.Errorf("%s: %q parsed; Socrata rejects it (%s)", name, c.SoQL, c.ExpectedError)
				continue
			}
			rejected++
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("%s: error %v is not a *SyntaxError", name, err)
				continue
			}
			if m := socrataGot.FindStringSubmatch(c.ExpectedError); m != nil {
				want := strings.TrimSuffix(strings.TrimPrefix(m[1], "`"), "'")
				if strings.EqualFold(se.Got, want) {
					gotAgrees++
				} else if _, known := refKnownDifferentGot[c.SoQL]; !known {
					t.Errorf("%s: %q: error %q names %q; Socrata's %q names %q", name, c.SoQL, err, se.Got, c.ExpectedError, want)
				}
			}
			continue
		}
		valid++
		key := [2]string{c.Kind, c.SoQL}
		if reason, ok := refOutOfScope[key]; ok {
			seen[key] = true
			outOfScope++
			if err == nil {
				t.Errorf("%s: %q is listed as out of scope (%s) but parses; remove it from the table", name, c.SoQL, reason)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %q: %v", name, c.SoQL, err)
			continue
		}
		parsed++
		items = append(items, corpusItem{name: name, src: c.SoQL, q: q, e: e})
	}
	for k := range refOutOfScope {
		if !seen[k] {
			t.Errorf("out-of-scope entry %q is not a valid case of the corpus", k)
		}
	}
	if logCounts {
		t.Logf("soql-reference: %d/%d valid parsed, %d out of scope, %d/%d invalid rejected (offending token agrees with Socrata's message for %d)",
			parsed, valid-outOfScope, outOfScope, rejected, invalid, gotAgrees)
	}
	return items
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	if n == 0 {
		return "0"
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

type paramsCase struct {
	Domain string      `json:"domain"`
	Path   string      `json:"path"`
	Params [][2]string `json:"params"`
}

func loadParams(t *testing.T, logCounts bool) (items []corpusItem) {
	t.Helper()
	cases := readJSONL[paramsCase](t, fixtures.Path(t, "soql", "soda-params.jsonl"))
	total := map[string]int{}
	ok := map[string]int{}
	for i, c := range cases {
		for _, kv := range c.Params {
			k, v := kv[0], kv[1]
			var q *Query
			var e Expr
			var err error
			src := v
			switch k {
			case "$where", "$having":
				e, err = ParseExpr(v)
			case "$select":
				src = "SELECT " + v
				q, err = Parse(src)
			case "$order":
				src = "ORDER BY " + v
				q, err = Parse(src)
			case "$group":
				src = "GROUP BY " + v
				q, err = Parse(src)
			case "$query":
				q, err = Parse(v)
			default:
				continue
			}
			total[k]++
			name := "params " + itoa(i+1) + " " + k
			if err != nil {
				t.Errorf("%s (%s%s): %q: %v", name, c.Domain, c.Path, src, err)
				continue
			}
			ok[k]++
			items = append(items, corpusItem{name: name, src: src, q: q, e: e})
		}
	}
	var parts []string
	all, allOK := 0, 0
	for _, k := range []string{"$query", "$select", "$where", "$order", "$group", "$having"} {
		parts = append(parts, k+" "+itoa(ok[k])+"/"+itoa(total[k]))
		all += total[k]
		allOK += ok[k]
	}
	if logCounts {
		t.Logf("soda-params: %d/%d parameter values parsed (%s)", allOK, all, strings.Join(parts, ", "))
	}
	return items
}

type datasfCase struct {
	Dataset string `json:"dataset"`
	Name    string `json:"name"`
	SoQL    string `json:"soql"`
}

func loadDataSF(t *testing.T, logCounts bool) (items []corpusItem) {
	t.Helper()
	cases := readJSONL[datasfCase](t, fixtures.Path(t, "soql", "datasf-queries.jsonl"))
	ok := 0
	for i, c := range cases {
		src := c.SoQL
		q, err := Parse(src)
		name := "datasf " + itoa(i+1) + " " + c.Dataset + " " + c.Name
		if err != nil {
			t.Errorf("%s: %q: %v", name, src, err)
			continue
		}
		ok++
		items = append(items, corpusItem{name: name, src: src, q: q})
	}
	if logCounts {
		t.Logf("datasf: %d/%d queries parsed", ok, len(cases))
	}
	return items
}

func TestCorpusReference(t *testing.T) {
	t.Parallel()
	loadReference(t, true)
}

func TestCorpusSODAParams(t *testing.T) {
	t.Parallel()
	loadParams(t, true)
}

func TestCorpusDataSF(t *testing.T) {
	t.Parallel()
	loadDataSF(t, true)
}

func allCorpus(t *testing.T) []corpusItem {
	t.Helper()
	var items []corpusItem
	items = append(items, loadReference(t, false)...)
	items = append(items, loadParams(t, false)...)
	items = append(items, loadDataSF(t, false)...)
	return items
}

func TestCorpusRoundTrip(t *testing.T) {
	t.Parallel()
	items := allCorpus(t)
	ok := 0
	for _, it := range items {
		if it.q != nil && checkQueryRoundTrip(t, it.src, it.q) {
			ok++
		}
		if it.e != nil && checkExprRoundTrip(t, it.src, it.e) {
			ok++
		}
	}
	t.Logf("round trip: %d/%d corpus texts re-parse to an equal AST with idempotent printing", ok, len(items))
}

func TestCorpusPositions(t *testing.T) {
	t.Parallel()
	items := allCorpus(t)
	n := 0
	for _, it := range items {
		var ids []*Ident
		if it.q != nil {
			ids = queryIdents(it.q)
		} else {
			ids = allIdents(it.e)
		}
		n += len(ids)
		checkPositions(t, it.src, ids)
	}
	if n == 0 {
		t.Fatal("no identifiers checked")
	}
	t.Logf("positions: %d identifiers checked", n)
}
