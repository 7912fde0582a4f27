package spill

import (
	"bytes"
	"cmp"
	"container/list"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// Kind is the dualresp.Query kind of spilled results.
const Kind = "spill"

// Defaults of the Store.
const (
	DefaultMaxBlobs     = 1000
	DefaultMaxBlobBytes = 256 << 20
	// DefaultOwnerShare is the part of MaxBlobs and MaxBlobBytes one owner
	// may hold when StoreOptions.MaxBlobsPerOwner and
	// MaxBlobBytesPerOwner are zero: a quarter.
	DefaultOwnerShare = 4
)

// ErrGone means a spilled result's rows are no longer held: the blob was
// evicted, or the process that spilled it restarted.
var ErrGone = errors.New("spill: the full result is no longer held in memory (evicted or the server restarted); call the tool again")

// blob is one spilled result.
type blob struct {
	key   string
	owner string // the identity of its owner (dualresp.OwnerIdentity)
	id    string // dualresp resource id, once known
	rows  []json.RawMessage
	size  int64
	elem  *list.Element
	sorts map[string][]int // cached sort permutations
}

// StoreOptions configures a Store. The zero value means the defaults.
type StoreOptions struct {
	// MaxBlobs and MaxBlobBytes bound the spilled results held (least
	// recently used out). Defaults 1,000 and 256 MiB. A result larger than
	// MaxBlobBytes is not spilled.
	MaxBlobs     int
	MaxBlobBytes int64
	// MaxBlobsPerOwner and MaxBlobBytesPerOwner bound the spilled results
	// of one owner (PutOwned; counted per identity, see
	// dualresp.OwnerIdentity): past them its own least recently used go.
	// Defaults: a quarter of MaxBlobs and MaxBlobBytes.
	MaxBlobsPerOwner     int
	MaxBlobBytesPerOwner int64
}

// Store keeps the rows of spilled results in memory, bounded by count and
// bytes, in all and per owner, least recently used first out. Owners are
// kept apart: an owner over its own bound loses its own results, and a
// Put over the store's bound evicts the putting owner's own results while
// it has others, and only then the least recently used of the owner
// holding the most bytes, so one tenant's spills never evict another's
// while it still holds some. It is the dualresp.Executor of the query kind
// Kind (its Plans stream): give it to dualresp.New in Options.Executors
// under Kind, and to the spiller that fills it. It is safe for concurrent
// use.
type Store struct {
	mu       sync.Mutex
	maxCount int
	maxBytes int64
	ownCount int   // of one owner's results
	ownBytes int64 // of one owner's results
	bytes    int64
	m        map[string]*blob
	lru      *list.List // of *blob, most recently used first
	owners   map[string]*ownerUse
}

// ownerUse is what one owner (identity) holds.
type ownerUse struct {
	count int
	bytes int64
}

var (
	_ dualresp.Executor = (*Store)(nil)
	_ dualresp.Streamer = spilled{}
)

// NewStore returns an empty Store.
func NewStore(opts StoreOptions) *Store {
	maxCount, maxBytes := opts.MaxBlobs, opts.MaxBlobBytes
	if maxCount <= 0 {
		maxCount = DefaultMaxBlobs
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBlobBytes
	}
	ownCount, ownBytes := opts.MaxBlobsPerOwner, opts.MaxBlobBytesPerOwner
	if ownCount <= 0 {
		ownCount = max(maxCount/DefaultOwnerShare, 1)
	}
	if ownBytes <= 0 {
		ownBytes = max(maxBytes/DefaultOwnerShare, 1)
	}
	return &Store{maxCount: maxCount, maxBytes: maxBytes, ownCount: ownCount, ownBytes: ownBytes,
		m: map[string]*blob{}, lru: list.New(), owners: map[string]*ownerUse{}}
}

// MaxBlobBytes returns the largest total size of rows the Store holds.
func (s *Store) MaxBlobBytes() int64 { return s.maxBytes }

// Evicted describes a spilled result the Store dropped to make room.
type Evicted struct {
	Key string
	// ID is the dualresp resource id given to SetID; "" when none was.
	ID    string
	Bytes int64
}

func newKey() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// Put stores rows under a new key (the Query.Text of its record) and
// returns the key and the results evicted to make room. The new result is
// never evicted by its own Put, even when it alone exceeds MaxBlobBytes:
// check that first. It is PutOwned of no owner.
func (s *Store) Put(rows []json.RawMessage) (string, []Evicted, error) {
	return s.PutOwned("", rows)
}

// PutOwned is Put of rows belonging to owner (a dualresp record Owner):
// the bounds per owner apply to owner's identity (dualresp.OwnerIdentity).
func (s *Store) PutOwned(owner string, rows []json.RawMessage) (string, []Evicted, error) {
	key, err := newKey()
	if err != nil {
		return "", nil, err
	}
	b := &blob{key: key, owner: dualresp.OwnerIdentity(owner), rows: rows}
	for _, r := range rows {
		b.size += int64(len(r))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b.elem = s.lru.PushFront(b)
	s.m[key] = b
	s.bytes += b.size
	use := s.owners[b.owner]
	if use == nil {
		use = &ownerUse{}
		s.owners[b.owner] = use
	}
	use.count++
	use.bytes += b.size
	var evicted []Evicted
	evict := func(old *blob) {
		s.removeLocked(old)
		evicted = append(evicted, Evicted{Key: old.key, ID: old.id, Bytes: old.size})
	}
	for use.count > 1 && (use.count > s.ownCount || use.bytes > s.ownBytes) {
		evict(s.oldestOf(b.owner, b))
	}
	for (len(s.m) > s.maxCount || s.bytes > s.maxBytes) && s.lru.Len() > 1 {
		if use.count > 1 {
			evict(s.oldestOf(b.owner, b))
			continue
		}
		largest, most := "", int64(-1)
		for o, u := range s.owners {
			if o != b.owner && u.bytes > most {
				largest, most = o, u.bytes
			}
		}
		evict(s.oldestOf(largest, b))
	}
	return key, evicted, nil
}

// oldestOf returns owner's least recently used result other than keep;
// s.mu must be held and owner must hold one.
func (s *Store) oldestOf(owner string, keep *blob) *blob {
	for e := s.lru.Back(); e != nil; e = e.Prev() {
		if b := e.Value.(*blob); b != keep && b.owner == owner {
			return b
		}
	}
	panic("spill: oldestOf an owner without results") // unreachable: the callers check the counts
}

func (s *Store) removeLocked(b *blob) {
	s.lru.Remove(b.elem)
	delete(s.m, b.key)
	s.bytes -= b.size
	if u := s.owners[b.owner]; u != nil {
		if u.count--; u.count <= 0 {
			delete(s.owners, b.owner)
		} else {
			u.bytes -= b.size
		}
	}
}

// SetID records the dualresp resource id of the result stored under key.
func (s *Store) SetID(key, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.m[key]; ok {
		b.id = id
	}
}

// Remove drops the result stored under key, if it is held.
func (s *Store) Remove(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.m[key]; ok {
		s.removeLocked(b)
	}
}

// Has reports whether the result stored under key is still held.
func (s *Store) Has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[key]
	return ok
}

// get returns the blob's rows, in the order of sort, and marks it used.
func (s *Store) get(key string, sort []dualresp.SortField) ([]json.RawMessage, []int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[key]
	if !ok {
		return nil, nil, ErrGone
	}
	s.lru.MoveToFront(b.elem)
	if len(sort) == 0 {
		return b.rows, nil, nil
	}
	sk := sortKey(sort)
	if p, ok := b.sorts[sk]; ok {
		return b.rows, p, nil
	}
	p := sortedOrder(b.rows, sort)
	if b.sorts == nil {
		b.sorts = map[string][]int{}
	}
	if len(b.sorts) >= 8 {
		clear(b.sorts)
	}
	b.sorts[sk] = p
	return b.rows, p, nil
}

// IDs returns the keys of the results held with their resource ids ("" when
// SetID was not called).
func (s *Store) IDs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.m))
	for k, b := range s.m {
		out[k] = b.id
	}
	return out
}

// Stats returns the number of results held and their total size in bytes.
func (s *Store) Stats() (count int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m), s.bytes
}

func sortKey(sort []dualresp.SortField) string {
	var bb bytes.Buffer
	for _, f := range sort {
		bb.WriteString(strconv.Quote(f.Field))
		if f.Desc {
			bb.WriteString(" desc")
		}
		bb.WriteByte(',')
	}
	return bb.String()
}

// sortedOrder returns the row indexes in the order of sort, ties broken by
// the original position (so pages never overlap or skip rows).
func sortedOrder(rows []json.RawMessage, sort []dualresp.SortField) []int {
	keys := make([][]any, len(rows))
	for i, r := range rows {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.UseNumber()
		_ = dec.Decode(&m)
		k := make([]any, len(sort))
		for j, f := range sort {
			k[j] = m[f.Field]
		}
		keys[i] = k
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		for j, f := range sort {
			c := compareValues(keys[a][j], keys[b][j])
			if f.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a, b)
	})
	return idx
}

// compareValues orders JSON values: null < booleans < numbers < strings <
// anything else (by its JSON text).
func compareValues(a, b any) int {
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch x := a.(type) {
	case nil:
		return 0
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case json.Number:
		fa, _ := x.Float64()
		fb, _ := b.(json.Number).Float64()
		return cmp.Compare(fa, fb)
	case string:
		return cmp.Compare(x, b.(string))
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Compare(ja, jb)
}

func rank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case json.Number:
		return 2
	case string:
		return 3
	}
	return 4
}

func checkKind(q dualresp.Query) error {
	if q.Kind != Kind {
		return fmt.Errorf("spill: cannot execute a query of kind %q (want %q)", q.Kind, Kind)
	}
	return nil
}

// Prepare returns the plan of the spilled result q.Text: its rows are
// looked up as each of the plan's calls runs, so a result evicted since
// fails with ErrGone then.
func (s *Store) Prepare(_ context.Context, q dualresp.Query) (dualresp.Plan, error) {
	if err := checkKind(q); err != nil {
		return nil, err
	}
	return spilled{s, q.Text}, nil
}

// spilled is the dualresp.Plan (and dualresp.Streamer) of the spilled
// result key.
type spilled struct {
	s   *Store
	key string
}

// Count returns the number of rows of the spilled result.
func (p spilled) Count(context.Context) (int64, error) {
	rows, _, err := p.s.get(p.key, nil)
	return int64(len(rows)), err
}

// Page returns rows [req.Offset, req.Offset+req.Limit) of the spilled
// result, sorted by req.Sort (stable: ties keep the original order).
func (p spilled) Page(ctx context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	if err := ctx.Err(); err != nil {
		return dualresp.PageResult{}, err
	}
	if req.Offset < 0 || req.Limit < 0 {
		return dualresp.PageResult{}, fmt.Errorf("spill: bad page offset %d, limit %d", req.Offset, req.Limit)
	}
	rows, order, err := p.s.get(p.key, req.Sort)
	if err != nil {
		return dualresp.PageResult{}, err
	}
	n := int64(len(rows))
	lo := min(req.Offset, n)
	hi := min(lo+req.Limit, n)
	out := make([]json.RawMessage, 0, hi-lo)
	for i := lo; i < hi; i++ {
		j := int(i)
		if order != nil {
			j = order[i]
		}
		out = append(out, rows[j])
	}
	return dualresp.PageResult{Rows: out}, nil
}

// Stream passes the rows of the spilled result that req selects to fn, in
// the order asked.
func (p spilled) Stream(ctx context.Context, req dualresp.PageRequest, fn func(json.RawMessage) error) error {
	if req.Offset < 0 || req.Limit < 0 {
		return fmt.Errorf("spill: bad stream offset %d, limit %d", req.Offset, req.Limit)
	}
	rows, perm, err := p.s.get(p.key, req.Sort)
	if err != nil {
		return err
	}
	n := int64(len(rows))
	lo, hi := min(req.Offset, n), n
	if req.Limit > 0 {
		hi = min(lo+req.Limit, n)
	}
	for i := lo; i < hi; i++ {
		if (i-lo)%1000 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		j := int(i)
		if perm != nil {
			j = perm[i]
		}
		if err := fn(rows[j]); err != nil {
			return err
		}
	}
	return nil
}
