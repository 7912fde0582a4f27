// Package expiring is a bounded LRU whose entries expire a fixed time after
// they were added. It is the LRU of github.com/hashicorp/golang-lru/v2
// (the design card's cache library) with the expiry checked when an entry
// is read, so that it needs no goroutine: golang-lru's own expirable LRU
// starts a sweeper that never exits, one for each cache ever made, which a
// server making a cache per portal it is asked about cannot afford.
//
// Package schemacache and package datasf's caches use it.
package expiring

import (
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// LRU is a bounded, expiring LRU safe for concurrent use. An expired entry
// is never returned; it is dropped when it is read, or when it is the least
// recently used and room is needed.
type LRU[K comparable, V any] struct {
	ttl time.Duration
	mu  sync.Mutex
	lru *simplelru.LRU[K, entry[V]]
}

type entry[V any] struct {
	value   V
	expires time.Time
}

// New returns an LRU of at most size entries (size > 0), each kept ttl
// after it was added (ttl > 0).
func New[K comparable, V any](size int, ttl time.Duration) *LRU[K, V] {
	if ttl <= 0 {
		panic(fmt.Sprintf("expiring: ttl %v; want more than 0", ttl))
	}
	l, err := simplelru.NewLRU[K, entry[V]](size, nil)
	if err != nil {
		panic("expiring: " + err.Error()) // size <= 0: a programming error
	}
	return &LRU[K, V]{ttl: ttl, lru: l}
}

// Get returns the value of key and marks it recently used, unless it is
// absent or expired.
func (c *LRU[K, V]) Get(key K) (V, bool) {
	return c.read(key, c.lru.Get)
}

// Peek is Get without marking the entry recently used.
func (c *LRU[K, V]) Peek(key K) (V, bool) {
	return c.read(key, c.lru.Peek)
}

func (c *LRU[K, V]) read(key K, get func(K) (entry[V], bool)) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := get(key)
	if ok && time.Now().Before(e.expires) {
		return e.value, true
	}
	if ok {
		c.lru.Remove(key)
	}
	var zero V
	return zero, false
}

// Add stores value under key for the LRU's ttl from now, dropping the least
// recently used entry when the LRU is full.
func (c *LRU[K, V]) Add(key K, value V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Add(key, entry[V]{value: value, expires: time.Now().Add(c.ttl)})
}

// Remove drops key's entry, if any.
func (c *LRU[K, V]) Remove(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(key)
}

// Len is the number of entries, expired ones not yet dropped included.
func (c *LRU[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
