package redisstore_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/redisstore"
)

// Several server instances share their resources through one Redis: a link
// created by one instance is served by any other.
func Example() {
	ctx := context.Background()
	store, err := redisstore.New(ctx, redisstore.Options{
		URL:    "redis://127.0.0.1:6379/0",
		Prefix: "datasf:", // the same on every instance
	})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := dualresp.New(dualresp.Options{
		BaseURL: "https://data.example.org",
		Store:   store,
		// Executors: map[string]dualresp.Executor{"soql": yourExecutor}, // re-execute stored queries for pages
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	defer store.Close() // after the server
	http.Handle("/resources/", srv.Handler())
}

// The store on its own: Redis deletes the record a minute (the default
// grace) after it expires, unless it is pinned.
func ExampleStore_Pin() {
	ctx := context.Background()
	store, err := redisstore.New(ctx, redisstore.Options{Addr: "127.0.0.1:6379"})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	now := time.Now()
	err = store.Save(ctx, &dualresp.Record{
		ID:        "9f3c0d2e4b5a69788796a5b4c3d2e1f0",
		Name:      "Food trucks by status",
		Query:     dualresp.Query{Kind: "soql", Text: "SELECT status, count(*) GROUP BY status"},
		CreatedAt: now,
		ExpiresAt: now.Add(15 * time.Minute),
	})
	if err != nil {
		log.Fatal(err)
	}
	// PERSIST: the key no longer expires.
	if _, err := store.Pin(ctx, "9f3c0d2e4b5a69788796a5b4c3d2e1f0"); err != nil {
		log.Fatal(err)
	}
}
