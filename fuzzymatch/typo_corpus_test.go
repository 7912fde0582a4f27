package fuzzymatch_test

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/fuzzymatch"
	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// corpusQuery is one query of testdata/soql/datasf-queries.jsonl with its dataset's
// real field names from the catalog.
type corpusQuery struct {
	dataset, soql string
	columns       []string
}

var placeholder = regexp.MustCompile(`([<>=]=?\s*)start_date\b`)

func loadCorpus(t *testing.T) []corpusQuery {
	t.Helper()
	schemas := map[string][]string{}
	cf, err := os.Open(fixtures.Path(t, "catalog", "datasf-catalog-630-with-signals.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	sc := bufio.NewScanner(cf)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var line struct {
			Endpoint string `json:"endpoint"`
			Columns  []struct {
				FieldName string `json:"fieldName"`
			} `json:"columns"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		for _, c := range line.Columns {
			if !strings.HasPrefix(c.FieldName, ":") {
				schemas[line.Endpoint] = append(schemas[line.Endpoint], c.FieldName)
			}
		}
	}
	qf, err := os.Open(fixtures.Path(t, "soql", "datasf-queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer qf.Close()
	var out []corpusQuery
	sc = bufio.NewScanner(qf)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var line struct {
			Dataset string `json:"dataset"`
			SoQL    string `json:"soql"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		q := placeholder.ReplaceAllString(line.SoQL, "${1}'2024-01-01T00:00:00'")
		out = append(out, corpusQuery{line.Dataset, q, schemas[line.Dataset]})
	}
	return out
}

// refsKnown reports whether every column reference of q names a column.
func refsKnown(q *soql.Query, columns []string) bool {
	known := map[string]bool{}
	for _, c := range columns {
		known[strings.ReplaceAll(strings.ToLower(c), "-", "_")] = true
	}
	for _, r := range q.ColumnRefs() {
		if !known[strings.ReplaceAll(strings.ToLower(r.Name), "-", "_")] {
			return false
		}
	}
	return true
}

// Valid queries are never changed: every query of the corpus whose column
// references all exist in its dataset's catalog schema comes back
// byte-identical.
func TestCorpusValidQueriesUnchanged(t *testing.T) {
	t.Parallel()
	valid, unknownRefs, changedUnknown := 0, 0, 0
	for _, cq := range loadCorpus(t) {
		q, err := soql.Parse(cq.soql)
		if err != nil {
			t.Fatalf("corpus query does not parse: %v\n%s", err, cq.soql)
		}
		res, err := fuzzymatch.Correct(cq.soql, cq.columns, fuzzymatch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !refsKnown(q, cq.columns) {
			unknownRefs++
			if res.Query != cq.soql {
				changedUnknown++
			}
			continue
		}
		valid++
		if res.Query != cq.soql || len(res.Corrections) != 0 {
			t.Errorf("Correct changed a valid query of %s:\n got %s\nwant %s", cq.dataset, res.Query, cq.soql)
		}
	}
	t.Logf("fuzzymatch corpus: %d/%d valid queries unchanged; %d reference columns missing from the catalog schema (%d of those changed)",
		valid, valid, unknownRefs, changedUnknown)
}
