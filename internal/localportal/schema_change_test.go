package localportal

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// TestQueriesWhileTablesChange: queries keep answering while other datasets
// are loaded and replaced (CREATE and DROP TABLE on other connections), as
// they do when a shared fake creates catalog tables on first use. SQLite
// fails a statement whose schema changed under it unless the two are kept
// apart.
func TestQueriesWhileTablesChange(t *testing.T) {
	t.Parallel()
	srv := newPortal(t)
	schema := func(id string) Schema {
		return Schema{ID: id, Name: id, Columns: []socrata.Column{
			{Name: "N", FieldName: "n", DataType: "number"},
			{Name: "Label", FieldName: "label", DataType: "text"},
		}}
	}
	row := func(i int) map[string]any { return map[string]any{"n": i, "label": fmt.Sprint("row ", i%7)} }
	if err := srv.AddGenerated(t.Context(), schema("qury-0000"), 2000, row); err != nil {
		t.Fatal(err)
	}
	const loads, queriers, queries = 200, 4, 40
	var wg sync.WaitGroup
	loadErrs := make(chan error, loads)
	wg.Go(func() {
		for i := range loads {
			// Half new tables, half replacements (a DROP of the old one).
			loadErrs <- srv.AddGenerated(t.Context(), schema(fmt.Sprintf("chng-%04d", i%(loads/2))), 50, row)
		}
	})
	failures := make(chan string, queriers)
	for range queriers {
		wg.Go(func() {
			for i := range queries {
				resp := get(t, srv, "/resource/qury-0000.json", url.Values{"$query": {"SELECT label, count(*) AS n GROUP BY label ORDER BY label"}})
				if resp.status != http.StatusOK {
					failures <- fmt.Sprintf("query %d while tables change: status %d: %s", i, resp.status, resp.body)
					return
				}
				if rows := decodeRows(t, resp.body); len(rows) != 7 {
					failures <- fmt.Sprintf("query %d while tables change: %d groups, want 7", i, len(rows))
					return
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	close(loadErrs)
	for err := range loadErrs {
		if err != nil {
			t.Errorf("AddGenerated while queries run: %v", err)
		}
	}
}
