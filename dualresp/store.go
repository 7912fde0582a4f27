package dualresp

import (
	"context"
	"encoding/json"
	"time"
)

// Query is the stored definition of a result: dualresp never interprets it.
// The Executor of its Kind prepares it again for every page and export, so
// a record saved by one process can be served by another after a restart.
type Query struct {
	// Kind names the query language, for example "soql".
	Kind string `json:"kind"`
	// Text is the query itself, for example a SoQL statement.
	Text string `json:"text"`
	// Params holds whatever else the Executor needs to prepare it, for example
	// {"dataset_id": "rqzj-sfat"}.
	Params map[string]string `json:"params,omitempty"`
}

// Column describes one column of a result.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
}

// Record is what a Store keeps for one result: the query and what was learnt
// when it first ran, never the full rows.
type Record struct {
	// ID is the resource id: 32 lowercase hex digits (128 random bits).
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Query is prepared again by the Executor of its kind to serve pages.
	Query   Query    `json:"query"`
	Columns []Column `json:"columns,omitempty"`
	// TotalCount is the exact number of rows of the result.
	TotalCount int64 `json:"total_count"`
	// Sample holds the sample rows handed to the model, as raw JSON objects.
	Sample []json.RawMessage `json:"sample,omitempty"`
	// Metadata is the caller's metadata (for example dataset_id, corrections),
	// merged into the structured content. Values must be JSON-encodable.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Owner identifies who created the record (for access control); dualresp
	// only stores it.
	Owner string `json:"owner,omitempty"`

	CreatedAt  time.Time `json:"created_at"`
	LastAccess time.Time `json:"last_access"`
	// ExpiresAt is when the record expires; zero when Pinned.
	ExpiresAt   time.Time `json:"expires_at"`
	Pinned      bool      `json:"pinned"`
	AccessCount int64     `json:"access_count"`
}

// Expired reports whether r has expired at now: it is not pinned and
// ExpiresAt is not after now.
func (r *Record) Expired(now time.Time) bool {
	return !r.Pinned && !r.ExpiresAt.IsZero() && !now.Before(r.ExpiresAt)
}

// Clone returns a deep copy of r (slices and maps are copied; Metadata values
// are copied one level deep).
func (r *Record) Clone() *Record {
	if r == nil {
		return nil
	}
	c := *r
	c.Query.Params = cloneMap(r.Query.Params)
	if r.Columns != nil {
		c.Columns = append([]Column(nil), r.Columns...)
	}
	if r.Sample != nil {
		c.Sample = make([]json.RawMessage, len(r.Sample))
		for i, row := range r.Sample {
			c.Sample[i] = append(json.RawMessage(nil), row...)
		}
	}
	if r.Metadata != nil {
		c.Metadata = make(map[string]any, len(r.Metadata))
		for k, v := range r.Metadata {
			c.Metadata[k] = v
		}
	}
	return &c
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Store keeps Records. Implementations must be safe for concurrent use, and
// must never hand out memory they keep: callers may modify the records they
// pass in and get back.
//
// A Store does not decide what "expired" means for reads: Get returns a
// record whose ExpiresAt has passed until DeleteExpired (or the store's own
// eviction) removes it; the Server compares ExpiresAt with its clock.
type Store interface {
	// Save inserts r, or replaces the record with the same ID entirely.
	// r.ID must not be empty.
	Save(ctx context.Context, r *Record) error
	// Get returns the record with the given id, or an error wrapping
	// ErrNotFound when there is none.
	Get(ctx context.Context, id string) (*Record, error)
	// Touch records one access atomically: AccessCount++, LastAccess = now,
	// and, when extend > 0 and the record is not pinned,
	// ExpiresAt = max(ExpiresAt, now+extend). It returns the updated record,
	// or an error wrapping ErrNotFound when there is none.
	Touch(ctx context.Context, id string, now time.Time, extend time.Duration) (*Record, error)
	// Pin sets Pinned = true and ExpiresAt to the zero time, and returns the
	// updated record, or an error wrapping ErrNotFound when there is none.
	// Pinning a pinned record changes nothing.
	Pin(ctx context.Context, id string) (*Record, error)
	// Delete removes the record, or returns an error wrapping ErrNotFound
	// when there is none.
	Delete(ctx context.Context, id string) error
	// DeleteExpired removes every unpinned record whose ExpiresAt is not
	// zero and not after now, and returns how many it removed.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
	// Close releases the store's resources. Calling it more than once is
	// safe; other methods may fail after it.
	Close() error
}

// UnusedPinDeleter is implemented by Stores that can delete the pinned
// records no one has read for a while, which the Server needs to enforce
// Options.PinnedIdleExpiration. MemoryStore and the sqlitestore package
// implement it.
type UnusedPinDeleter interface {
	// DeleteUnusedPinned deletes the pinned records whose LastAccess is
	// before before, and returns how many went.
	DeleteUnusedPinned(ctx context.Context, before time.Time) (int, error)
}

// PinCounter is implemented by Stores that can count pinned records, which
// the Server needs to enforce Options.MaxPinnedPerOwner. MemoryStore and
// the sqlitestore and redisstore packages implement it.
type PinCounter interface {
	// CountPinned returns the number of pinned records whose owner has
	// the identity of owner (OwnerIdentity), whatever its label.
	CountPinned(ctx context.Context, owner string) (int, error)
}
