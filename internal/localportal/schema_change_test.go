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
// they are when tests that share a fake load data of their own. SQLite
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
	// The loads go on while the queries run (at least minLoads, at most
	// maxLoads): the first of each name a new table, the next ones
	// replacements (a DROP of the old one).
	const minLoads, maxLoads, names, queriers, queries = 20, 200, 10, 4, 15
	var wg, querying sync.WaitGroup
	queriesDone := make(chan struct{})
	loadErrs := make(chan error, maxLoads)
	var loaded int
	wg.Go(func() {
		for i := range maxLoads {
			if i >= minLoads {
				select {
				case <-queriesDone:
					return
				default:
				}
			}
			loadErrs <- srv.AddGenerated(t.Context(), schema(fmt.Sprintf("chng-%04d", i%names)), 50, row)
			loaded++
		}
	})
	failures := make(chan string, queriers)
	for range queriers {
		querying.Add(1)
		wg.Go(func() {
			defer querying.Done()
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
	querying.Wait()
	close(queriesDone)
	wg.Wait()
	t.Logf("%d queries by %d queriers while %d tables were loaded", queriers*queries, queriers, loaded)
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
