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

// DefaultMaxResourcesPerOwner is the number of unpinned records a
// MemoryStore keeps of one owner when MemoryStoreOptions.MaxResourcesPerOwner
// is zero.
const DefaultMaxResourcesPerOwner = 1_000

// MemoryStoreOptions configures a MemoryStore. The zero value means the
// defaults.
type MemoryStoreOptions struct {
	// MaxResources bounds the number of unpinned records; when a Save goes
	// over it, the least recently used unpinned records (by Save, Get and
	// Touch) are evicted. Pinned records are never evicted and do not count.
	// Zero means DefaultMaxResources; negative means no bound.
	//
	// Owners are kept apart: a Save over the bound evicts the least
	// recently used record of the owner (Record.Owner) that holds the most
	// unpinned records, so an owner's burst evicts its own records first,
	// and an owner holding no more than its share (MaxResources divided by
	// the number of owners) loses none to another's.
	MaxResources int
	// MaxResourcesPerOwner bounds the unpinned records of one owner: a
	// Save over it evicts that owner's least recently used record. Zero
	// means DefaultMaxResourcesPerOwner (or MaxResources, when smaller);
	// negative means no bound but MaxResources.
	MaxResourcesPerOwner int
}

// MemoryStore is a Store that keeps records in memory. It is the Server's
// default store; records do not survive the process.
type MemoryStore struct {
	mu       sync.Mutex
	max      int // of unpinned records; <= 0: none
	maxOwner int // of one owner's unpinned records; <= 0: none
	recs     map[string]*memEntry
	owners   map[string]*list.List // by owner: its unpinned *memEntry, most recently used first
	unpinned int
	closed   bool
	evicted  Evictions
}

// Evictions counts the records a MemoryStore evicted, by cause: OwnerBound
// when an owner went over MaxResourcesPerOwner, StoreFull when the store
// went over MaxResources.
type Evictions struct {
	OwnerBound, StoreFull int64
}

type memEntry struct {
	rec   *Record
	owner string        // the owner whose list holds elem
	elem  *list.Element // nil when pinned
}

var (
	_ Store            = (*MemoryStore)(nil)
	_ PinCounter       = (*MemoryStore)(nil)
	_ UnusedPinDeleter = (*MemoryStore)(nil)
)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(opts MemoryStoreOptions) *MemoryStore {
	max := opts.MaxResources
	if max == 0 {
		max = DefaultMaxResources
	}
	maxOwner := opts.MaxResourcesPerOwner
	if maxOwner == 0 {
		maxOwner = DefaultMaxResourcesPerOwner
		if max > 0 && max < maxOwner {
			maxOwner = max
		}
	}
	return &MemoryStore{max: max, maxOwner: maxOwner, recs: make(map[string]*memEntry), owners: make(map[string]*list.List)}
}

// unlink takes e out of its owner's list of unpinned records; s.mu must be
// held.
func (s *MemoryStore) unlink(e *memEntry) {
	if e.elem == nil {
		return
	}
	l := s.owners[e.owner]
	l.Remove(e.elem)
	if l.Len() == 0 {
		delete(s.owners, e.owner)
	}
	e.elem = nil
	s.unpinned--
}

// link puts e at the front of its record's owner's list of unpinned
// records; s.mu must be held.
func (s *MemoryStore) link(e *memEntry) {
	e.owner = e.rec.Owner
	l := s.owners[e.owner]
	if l == nil {
		l = list.New()
		s.owners[e.owner] = l
	}
	e.elem = l.PushFront(e)
	s.unpinned++
}

// evictOldest drops the least recently used unpinned record of owner; s.mu
// must be held.
func (s *MemoryStore) evictOldest(owner string, count *int64) {
	l := s.owners[owner]
	if l == nil {
		return
	}
	*count++
	old := l.Back().Value.(*memEntry)
	s.unlink(old)
	delete(s.recs, old.rec.ID)
}

// evictOver drops records until owner is within its bound and the store
// within its own, taking each from the owner with the most unpinned
// records; s.mu must be held.
func (s *MemoryStore) evictOver(owner string) {
	if s.maxOwner > 0 {
		for l := s.owners[owner]; l != nil && l.Len() > s.maxOwner; l = s.owners[owner] {
			s.evictOldest(owner, &s.evicted.OwnerBound)
		}
	}
	for s.max > 0 && s.unpinned > s.max {
		largest, n := owner, 0
		if l := s.owners[owner]; l != nil {
			n = l.Len() // ties go to the owner saving
		}
		for o, l := range s.owners {
			if l.Len() > n {
				largest, n = o, l.Len()
			}
		}
		s.evictOldest(largest, &s.evicted.StoreFull)
	}
}

// Evictions returns how many records the store has evicted, by cause.
func (s *MemoryStore) Evictions() Evictions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.evicted
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
	s.unlink(e)
	e.rec = c
	if !c.Pinned {
		s.link(e)
		s.evictOver(c.Owner)
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
		s.owners[e.owner].MoveToFront(e.elem)
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
	s.unlink(e)
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
	s.unlink(e)
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
			s.unlink(e)
			delete(s.recs, id)
			n++
		}
	}
	return n, nil
}

// DeleteUnusedPinned implements UnusedPinDeleter.
func (s *MemoryStore) DeleteUnusedPinned(ctx context.Context, before time.Time) (int, error) {
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
		if e.rec.Pinned && e.rec.LastAccess.Before(before) {
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
	s.owners = make(map[string]*list.List)
	s.unpinned = 0
	return nil
}
