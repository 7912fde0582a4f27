// Package schemacache is a read-through cache of dataset schemas: a bounded
// LRU whose entries expire after a TTL (github.com/hashicorp/golang-lru/v2's
// expirable LRU), in front of a Fetcher. Concurrent misses for one dataset
// collapse into one upstream call (golang.org/x/sync/singleflight). Errors
// are never cached.
package schemacache

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/sync/singleflight"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Fetcher fetches a schema from upstream; *socrata.Client is one.
type Fetcher interface {
	Schema(ctx context.Context, datasetID string) (*socrata.Schema, error)
}

// Options configures a Cache. The zero value gives the defaults.
type Options struct {
	// TTL is how long a schema is served from the cache (default 5 minutes).
	TTL time.Duration
	// Size bounds the number of cached schemas (default 256).
	Size int
}

// Stats counts the cache's answers.
type Stats struct {
	Hits, Misses, Entries int64
}

// Cache is a read-through schema cache, safe for concurrent use.
type Cache struct {
	fetch  Fetcher
	lru    *expirable.LRU[string, *socrata.Schema]
	group  singleflight.Group
	hits   atomic.Int64
	misses atomic.Int64
}

// New returns a cache in front of f.
func New(f Fetcher, opts Options) *Cache {
	if opts.TTL <= 0 {
		opts.TTL = 5 * time.Minute
	}
	if opts.Size <= 0 {
		opts.Size = 256
	}
	return &Cache{fetch: f, lru: expirable.NewLRU[string, *socrata.Schema](opts.Size, nil, opts.TTL)}
}

// Schema returns the dataset's schema and whether it came from the cache.
// The returned schema is the caller's to modify.
func (c *Cache) Schema(ctx context.Context, datasetID string) (s *socrata.Schema, cached bool, err error) {
	if s, ok := c.lru.Get(datasetID); ok {
		c.hits.Add(1)
		return clone(s), true, nil
	}
	c.misses.Add(1)
	v, err, _ := c.group.Do(datasetID, func() (any, error) {
		// Another caller may have filled the entry while we waited.
		if s, ok := c.lru.Peek(datasetID); ok {
			return s, nil
		}
		s, err := c.fetch.Schema(context.WithoutCancel(ctx), datasetID)
		if err != nil {
			return nil, err
		}
		c.lru.Add(datasetID, s)
		return s, nil
	})
	if err != nil {
		return nil, false, err
	}
	return clone(v.(*socrata.Schema)), false, nil
}

// Invalidate drops a dataset's schema from the cache.
func (c *Cache) Invalidate(datasetID string) { c.lru.Remove(datasetID) }

// Stats returns the hit and miss counts and the number of entries.
func (c *Cache) Stats() Stats {
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Entries: int64(c.lru.Len())}
}

func clone(s *socrata.Schema) *socrata.Schema {
	c := *s
	c.Columns = append([]socrata.Column(nil), s.Columns...)
	return &c
}
