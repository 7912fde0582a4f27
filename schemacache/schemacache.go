// Package schemacache is a read-through cache of dataset schemas: a bounded
// LRU whose entries expire after a TTL (github.com/hashicorp/golang-lru/v2's
// LRU, with no goroutine of its own), in front of a Fetcher such as
// *socrata.Client.
//
// Concurrent misses for one dataset collapse into one upstream call
// (golang.org/x/sync/singleflight). Errors are never cached. Each answer
// says whether it came from the cache, and Stats counts hits and misses.
//
// A library for any client of a Socrata portal (the Fetcher is usually a
// *socrata.Client); package datasf's portals and the benchmarks use it.
package schemacache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/datasf-mcp/datasf-mcp/internal/expiring"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Fetcher fetches a schema from upstream; *socrata.Client is one.
type Fetcher interface {
	Schema(ctx context.Context, datasetID string) (*socrata.Schema, error)
}

// Default option values.
const (
	DefaultTTL  = 5 * time.Minute
	DefaultSize = 256
)

// Options configures a Cache. The zero value gives the defaults.
type Options struct {
	// TTL is how long a schema is served from the cache (default DefaultTTL).
	TTL time.Duration
	// Size bounds the number of cached schemas (default DefaultSize); the
	// least recently used is dropped first.
	Size int
}

// Stats counts the cache's answers.
type Stats struct {
	Hits    int64 // calls answered from the cache
	Misses  int64 // calls not answered from the cache (they waited for an upstream call)
	Fetches int64 // upstream calls made (concurrent misses for one dataset share one)
	Entries int64 // schemas in the cache now (expired ones linger until read or pushed out)
}

// Cache is a read-through schema cache, safe for concurrent use.
type Cache struct {
	fetch   Fetcher
	lru     *expiring.LRU[string, *socrata.Schema]
	group   singleflight.Group
	mu      sync.Mutex    // makes a fetch's check of gen and its store one step against Invalidate
	gen     atomic.Uint64 // bumped by Invalidate, so a fetch begun before it is not stored
	hits    atomic.Int64
	misses  atomic.Int64
	fetches atomic.Int64
}

// New returns a cache in front of f.
func New(f Fetcher, opts Options) *Cache {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Size <= 0 {
		opts.Size = DefaultSize
	}
	return &Cache{fetch: f, lru: expiring.New[string, *socrata.Schema](opts.Size, opts.TTL)}
}

// Schema returns the dataset's schema and whether it came from the cache.
// On a miss it calls the Fetcher once however many callers miss at the same
// time; a caller whose ctx ends stops waiting (the shared call goes on for
// the others). Errors are returned, not cached. The returned schema is a copy
// the caller may modify.
func (c *Cache) Schema(ctx context.Context, datasetID string) (s *socrata.Schema, cached bool, err error) {
	if s, ok := c.lru.Get(datasetID); ok {
		c.hits.Add(1)
		return clone(s), true, nil
	}
	c.misses.Add(1)
	ch := c.group.DoChan(datasetID, func() (any, error) {
		// Another call may have filled the entry just before this one began.
		if s, ok := c.lru.Peek(datasetID); ok {
			return s, nil
		}
		gen := c.gen.Load()
		c.fetches.Add(1)
		// The shared call must not end because the first caller gave up; the
		// Fetcher bounds its own time (the socrata client has a timeout).
		s, err := c.fetch.Schema(context.WithoutCancel(ctx), datasetID)
		if err != nil {
			return nil, err
		}
		if s == nil {
			return nil, fmt.Errorf("schemacache: the fetcher returned no schema and no error for %q", datasetID)
		}
		c.mu.Lock()
		if c.gen.Load() == gen {
			c.lru.Add(datasetID, s)
		}
		c.mu.Unlock()
		return s, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, false, r.Err
		}
		return clone(r.Val.(*socrata.Schema)), false, nil
	case <-ctx.Done():
		return nil, false, fmt.Errorf("schemacache: waiting for the schema of %s: %w", datasetID, context.Cause(ctx))
	}
}

// Invalidate drops a dataset's schema from the cache; a fetch already under
// way for it will not store its answer.
func (c *Cache) Invalidate(datasetID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen.Add(1)
	c.group.Forget(datasetID)
	c.lru.Remove(datasetID)
}

// Stats returns the counters and the number of entries.
func (c *Cache) Stats() Stats {
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Fetches: c.fetches.Load(), Entries: int64(c.lru.Len())}
}

func clone(s *socrata.Schema) *socrata.Schema {
	c := *s
	c.Columns = append([]socrata.Column(nil), s.Columns...)
	return &c
}
