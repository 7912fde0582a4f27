package dualresp

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

// DefaultMaxResources is the number of records a MemoryStore keeps when
// MemoryStoreOptions.MaxResources is zero.
const DefaultMaxResources = 10_000

// DefaultMaxResourcesPerOwner is the number of unpinned records a
// MemoryStore keeps of one owner's identity when
// MemoryStoreOptions.MaxResourcesPerOwner is zero.
const DefaultMaxResourcesPerOwner = 1_000

// MemoryStoreOptions configures a MemoryStore. The zero value means the
// defaults.
type MemoryStoreOptions struct {
	// MaxResources bounds the number of records, pinned ones included;
	// when a Save goes over it, least recently used unpinned records (by
	// Save, Get and Touch) are evicted. Pinned records are never evicted,
	// and there are at most MaxPinned of them. Zero means
	// DefaultMaxResources; negative means no bound.
	//
	// Owners are kept apart by identity (OwnerIdentity: labels inside one
	// identity share its place): a Save over the bound evicts the least
	// recently used record of the saving owner's identity while it has
	// one besides the record saved, and only then of the identity that
	// holds the most unpinned records. So the one causing the pressure
	// pays for it, and a burst, under however many labels, never evicts
	// another identity's records while it has its own.
	MaxResources int
	// MaxResourcesPerOwner bounds the unpinned records of one identity: a
	// Save over it evicts that identity's least recently used record. Zero
	// means DefaultMaxResourcesPerOwner (or MaxResources, when smaller);
	// negative means no bound but MaxResources.
	MaxResourcesPerOwner int
	// MaxPinned bounds the pinned records: a Pin past it fails with a
	// *PinQuotaError (Store set), so that pins count against MaxResources
	// and cannot crowd out the results in use. Zero means half of
	// MaxResources; negative means no bound but MaxResources.
	MaxPinned int
}

// MemoryStore is a Store that keeps records in memory. It is the Server's
// default store; records do not survive the process.
type MemoryStore struct {
	mu        sync.Mutex
	max       int // of records, pinned or not; <= 0: none
	maxOwner  int // of one identity's unpinned records; <= 0: none
	maxPinned int // of pinned records; <= 0: none but max
	recs      map[string]*memEntry
	owners    map[string]*list.List // by identity: its unpinned *memEntry, most recently used first
	pinnedBy  map[string]int        // by identity: its pinned records
	unpinned  int
	pinned    int
	closed    bool
	evicted   Evictions
}

// Evictions counts the records a MemoryStore evicted, by cause: OwnerBound
// when an owner went over MaxResourcesPerOwner, StoreFull when the store
// went over MaxResources.
type Evictions struct {
	OwnerBound, StoreFull int64
}

type memEntry struct {
	rec    *Record
	owner  string        // the identity whose list holds elem, or whose pin count holds the record
	elem   *list.Element // nil when pinned or not counted
	pinned bool          // counted in pinnedBy
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
	maxPinned := opts.MaxPinned
	if maxPinned == 0 && max > 0 {
		maxPinned = max / 2
	}
	if maxPinned < 0 || max > 0 && maxPinned > max {
		maxPinned = max
	}
	return &MemoryStore{max: max, maxOwner: maxOwner, maxPinned: maxPinned,
		recs: make(map[string]*memEntry), owners: make(map[string]*list.List), pinnedBy: make(map[string]int)}
}

// unlink takes e out of its identity's list of unpinned records, or out of
// its pin count; s.mu must be held.
func (s *MemoryStore) unlink(e *memEntry) {
	if e.pinned {
		if s.pinnedBy[e.owner]--; s.pinnedBy[e.owner] <= 0 {
			delete(s.pinnedBy, e.owner)
		}
		s.pinned--
		e.pinned = false
	}
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

// link puts e at the front of its record's identity's list of unpinned
// records, or in its pin count when the record is pinned; s.mu must be
// held.
func (s *MemoryStore) link(e *memEntry) {
	e.owner = OwnerIdentity(e.rec.Owner)
	if e.rec.Pinned {
		e.pinned = true
		s.pinnedBy[e.owner]++
		s.pinned++
		return
	}
	l := s.owners[e.owner]
	if l == nil {
		l = list.New()
		s.owners[e.owner] = l
	}
	e.elem = l.PushFront(e)
	s.unpinned++
}

// evictOldest drops the least recently used unpinned record of identity;
// s.mu must be held.
func (s *MemoryStore) evictOldest(identity string, count *int64) {
	l := s.owners[identity]
	if l == nil {
		return
	}
	*count++
	old := l.Back().Value.(*memEntry)
	s.unlink(old)
	delete(s.recs, old.rec.ID)
}

// evictOver drops records until the identity of the record just saved is
// within its bound and the store within its own; s.mu must be held. Over
// the store's bound, the saving identity's own records go first (while it
// has one besides the record just saved), then those of the other
// identity with the most unpinned records.
func (s *MemoryStore) evictOver(identity string) {
	if s.maxOwner > 0 {
		for l := s.owners[identity]; l != nil && l.Len() > s.maxOwner; l = s.owners[identity] {
			s.evictOldest(identity, &s.evicted.OwnerBound)
		}
	}
	for s.max > 0 && s.unpinned > 0 && s.unpinned+s.pinned > s.max {
		victim := identity
		if l := s.owners[identity]; l == nil || l.Len() <= 1 {
			n := 0
			for o, l := range s.owners {
				if o != identity && l.Len() > n {
					victim, n = o, l.Len()
				}
			}
		}
		s.evictOldest(victim, &s.evicted.StoreFull)
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
	s.link(e)
	if !c.Pinned {
		s.evictOver(e.owner)
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
	if !e.pinned && s.maxPinned > 0 && s.pinned >= s.maxPinned {
		return nil, &PinQuotaError{Max: s.maxPinned, Store: true}
	}
	e.rec.Pinned = true
	e.rec.ExpiresAt = time.Time{}
	s.unlink(e)
	s.link(e)
	return e.rec.Clone(), nil
}

// CountPinned implements PinCounter: it counts the pinned records of
// owner's identity (OwnerIdentity), whatever their labels.
func (s *MemoryStore) CountPinned(ctx context.Context, owner string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	return s.pinnedBy[OwnerIdentity(owner)], nil
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
			s.unlink(e)
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
	s.pinnedBy = make(map[string]int)
	s.unpinned, s.pinned = 0, 0
	return nil
}
