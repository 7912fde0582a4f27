package dualresp

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

// DefaultMaxResources is the number of unpinned records a MemoryStore keeps
// when MemoryStoreOptions.MaxResources is zero.
const DefaultMaxResources = 10_000

// MemoryStoreOptions configures a MemoryStore. The zero value means the
// defaults.
type MemoryStoreOptions struct {
	// MaxResources bounds the number of unpinned records; when a Save goes
	// over it, the least recently used unpinned records (by Save, Get and
	// Touch) are evicted. Pinned records are never evicted and do not count.
	// Zero means DefaultMaxResources; negative means no bound.
	MaxResources int
}

// MemoryStore is a Store that keeps records in memory. It is the Server's
// default store; records do not survive the process.
type MemoryStore struct {
	mu     sync.Mutex
	max    int
	recs   map[string]*memEntry
	lru    *list.List // of *memEntry, unpinned only, most recently used first
	closed bool
}

type memEntry struct {
	rec  *Record
	elem *list.Element // nil when pinned
}

var (
	_ Store      = (*MemoryStore)(nil)
	_ PinCounter = (*MemoryStore)(nil)
)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(opts MemoryStoreOptions) *MemoryStore {
	max := opts.MaxResources
	if max == 0 {
		max = DefaultMaxResources
	}
	return &MemoryStore{max: max, recs: make(map[string]*memEntry), lru: list.New()}
}

// Len returns the number of records held, pinned or not.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.recs)
}

// Save implements Store. It may evict least recently used unpinned records.
func (s *MemoryStore) Save(ctx context.Context, r *Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r == nil || r.ID == "" {
		return fmt.Errorf("dualresp: save: record without an id")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	c := r.Clone()
	if c.Pinned {
		c.ExpiresAt = time.Time{}
	}
	e, ok := s.recs[r.ID]
	if !ok {
		e = &memEntry{}
		s.recs[r.ID] = e
	}
	e.rec = c
	switch {
	case c.Pinned && e.elem != nil:
		s.lru.Remove(e.elem)
		e.elem = nil
	case !c.Pinned && e.elem == nil:
		e.elem = s.lru.PushFront(e)
	case !c.Pinned:
		s.lru.MoveToFront(e.elem)
	}
	if s.max > 0 {
		for s.lru.Len() > s.max {
			old := s.lru.Remove(s.lru.Back()).(*memEntry)
			delete(s.recs, old.rec.ID)
		}
	}
	return nil
}

// lookup returns the entry for id and marks it used; s.mu must be held.
func (s *MemoryStore) lookup(id string) (*memEntry, error) {
	if s.closed {
		return nil, ErrClosed
	}
	e, ok := s.recs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if e.elem != nil {
		s.lru.MoveToFront(e.elem)
	}
	return e, nil
}

// Get implements Store.
func (s *MemoryStore) Get(ctx context.Context, id string) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.lookup(id)
	if err != nil {
		return nil, err
	}
	return e.rec.Clone(), nil
}

// Touch implements Store.
func (s *MemoryStore) Touch(ctx context.Context, id string, now time.Time, extend time.Duration) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.lookup(id)
	if err != nil {
		return nil, err
	}
	r := e.rec
	r.AccessCount++
	r.LastAccess = now
	if extend > 0 && !r.Pinned {
		if until := now.Add(extend); until.After(r.ExpiresAt) {
			r.ExpiresAt = until
		}
	}
	return r.Clone(), nil
}

// Pin implements Store.
func (s *MemoryStore) Pin(ctx context.Context, id string) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.lookup(id)
	if err != nil {
		return nil, err
	}
	e.rec.Pinned = true
	e.rec.ExpiresAt = time.Time{}
	if e.elem != nil {
		s.lru.Remove(e.elem)
		e.elem = nil
	}
	return e.rec.Clone(), nil
}

// CountPinned implements PinCounter.
func (s *MemoryStore) CountPinned(ctx context.Context, owner string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	n := 0
	for _, e := range s.recs {
		if e.rec.Pinned && e.rec.Owner == owner {
			n++
		}
	}
	return n, nil
}

// Delete implements Store.
func (s *MemoryStore) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	e, ok := s.recs[id]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if e.elem != nil {
		s.lru.Remove(e.elem)
	}
	delete(s.recs, id)
	return nil
}

// DeleteExpired implements Store.
func (s *MemoryStore) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	n := 0
	for id, e := range s.recs {
		if e.rec.Expired(now) {
			if e.elem != nil {
				s.lru.Remove(e.elem)
			}
			delete(s.recs, id)
			n++
		}
	}
	return n, nil
}

// Close implements Store: it drops every record. Calling it again is a no-op.
func (s *MemoryStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.recs = make(map[string]*memEntry)
	s.lru.Init()
	return nil
}
