package schemacache_test

import (
	"context"
	"fmt"

	"github.com/datasf-mcp/datasf-mcp/schemacache"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// staticFetcher stands in for a *socrata.Client.
type staticFetcher struct{}

func (staticFetcher) Schema(_ context.Context, id string) (*socrata.Schema, error) {
	return &socrata.Schema{ID: id, RowCount: 487}, nil
}

func Example() {
	cache := schemacache.New(staticFetcher{}, schemacache.Options{}) // 5 minute TTL, 256 entries
	ctx := context.Background()
	for range 2 {
		s, cached, err := cache.Schema(ctx, "rqzj-sfat")
		fmt.Println(s.RowCount, cached, err)
	}
	fmt.Printf("%+v\n", cache.Stats())
	// Output:
	// 487 false <nil>
	// 487 true <nil>
	// {Hits:1 Misses:1 Fetches:1 Entries:1}
}
