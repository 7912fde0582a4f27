package datasf

import (
	"fmt"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// One parse per query_datasf call: the handler parses the model's text
// once, and correction, the local checks, the count, the sample (a
// portal.Query carries the tree), the hints and the stored query all read
// that tree. Correction is the step that used to read the text a second
// time (fuzzymatch.Correct); it now decides from the names the tree holds.
// It must therefore allocate less than one parse of the query does: a
// correction that parsed the query again would allocate at least that much
// more. Allocation counts are exact, so the bound does not depend on load.
// (Not parallel: testing.AllocsPerRun counts every goroutine's mallocs.)
func TestCorrectionDoesNotParseAgain(t *testing.T) {
	sc := &socrata.Schema{Columns: []socrata.Column{
		{Name: "N", FieldName: "n", DataType: "number"},
		{Name: "Label", FieldName: "label", DataType: "text"},
		{Name: "Category", FieldName: "incident_category", DataType: "text"},
	}}
	// A long query (what makes a parse dear) with two misspelt names and a
	// display name.
	conds := make([]string, 60)
	for i := range conds {
		conds[i] = fmt.Sprintf("(n > %d AND label != 'row %03d')", i, i)
	}
	text := "SELECT lable, Category, count(*) AS c WHERE incident_categroy IS NOT NULL AND (" +
		strings.Join(conds, " OR ") + ") GROUP BY lable, Category ORDER BY c DESC"
	tree, err := soql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}

	got := correctNames(tree.Clone(), text, sc)
	want := strings.NewReplacer("lable", "label", "Category", "incident_category", "incident_categroy", "incident_category").Replace(text)
	if got.Query != want || len(got.Corrections) != 3 {
		t.Fatalf("correctNames(%.60q…) = %.80q… with %d corrections; want %.80q… with 3", text, got.Query, len(got.Corrections), want)
	}

	parse := testing.AllocsPerRun(20, func() { _, _ = soql.Parse(text) })
	clone := testing.AllocsPerRun(20, func() { _ = tree.Clone() })
	correct := testing.AllocsPerRun(20, func() { _ = correctNames(tree.Clone(), text, sc) }) - clone
	t.Logf("allocations: one parse %.0f, correction %.0f", parse, correct)
	if correct >= parse {
		t.Errorf("correcting the names of a parsed query allocates %.0f times; one parse of it allocates %.0f: correction must read the tree, not parse the text again", correct, parse)
	}
}
