package sqlitestore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/sqlitestore"
)

// A record saved before a restart is still there after it.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sqlitestore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "results.db")

	store, err := sqlitestore.Open(ctx, path, sqlitestore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	err = store.Save(ctx, &dualresp.Record{
		ID:         "9f3c0d2e4b5a69788796a5b4c3d2e1f0",
		Name:       "Food trucks by status",
		Query:      dualresp.Query{Kind: "soql", Text: "SELECT status, count(*) GROUP BY status"},
		Columns:    []dualresp.Column{{Name: "status"}, {Name: "count", Type: "number"}},
		TotalCount: 4,
		CreatedAt:  now,
		ExpiresAt:  now.Add(15 * time.Minute),
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := store.Pin(ctx, "9f3c0d2e4b5a69788796a5b4c3d2e1f0"); err != nil {
		log.Fatal(err)
	}
	store.Close() // the process stops here

	store, err = sqlitestore.Open(ctx, path, sqlitestore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	r, err := store.Get(ctx, "9f3c0d2e4b5a69788796a5b4c3d2e1f0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %q, %d rows, pinned=%v\n", r.Name, r.Query.Text, r.TotalCount, r.Pinned)
	// Output: Food trucks by status: "SELECT status, count(*) GROUP BY status", 4 rows, pinned=true
}
