// Package redisstore is a dualresp.Store that keeps records in Redis, so that
// several server instances (processes, machines) can serve each other's
// resources.
//
// Each record is one Redis hash under Prefix+"rec:"+id: the query, columns,
// sample, metadata and other fixed fields as one JSON value, and the fields
// that change (access_count, last_access, expires_at, pinned) as hash fields
// of their own. Every operation is atomic on the server: Save is a
// MULTI/EXEC transaction; Touch and Pin are Lua scripts. AccessCount is
// incremented with HINCRBY, so concurrent accesses from any number of
// processes are all counted.
//
// Expiry is Redis-native: an unpinned record's key carries a PEXPIREAT at
// ExpiresAt plus Options.ExpiryGrace, which Touch moves out when it extends
// the expiry and Pin removes (PERSIST). Redis therefore deletes expired
// records by itself, even when no server runs. The grace keeps a record
// readable for a little while after it expires, so that a dualresp.Server can
// still answer "expired" rather than "not found" for it, as with the other
// stores.
//
// Pinned records are also listed, for CountPinned, in one set per owner's
// identity, Prefix+"pinned:"+identity; entries of records deleted or saved
// unpinned since are pruned when the set is counted.
//
// DeleteExpired deletes expired records before Redis does: unpinned records
// are also listed in a sorted set, Prefix+"expiry", scored by expiry, which
// DeleteExpired scans; it also prunes the entries of records Redis has
// already expired. Records Redis expired by itself are not counted.
//
// Times are stored as Unix nanoseconds, so they round-trip exactly; the
// native expiry has millisecond resolution (rounded up).
//
// The store needs a single Redis server (or a primary with replicas). It does
// not support Redis Cluster: the expiry index and the records live in
// different hash slots.
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/redis/go-redis/v9"
)

// DefaultAddr is the Redis address used when Options.URL, Options.Addr and
// Options.Client are all empty.
const DefaultAddr = "127.0.0.1:6379"

// DefaultPrefix starts every key the store writes when Options.Prefix is
// empty.
const DefaultPrefix = "dualresp:"

// DefaultExpiryGrace is how long after ExpiresAt Redis deletes a record by
// itself, when Options.ExpiryGrace is zero.
const DefaultExpiryGrace = time.Minute

// deleteBatch is how many expiry index entries DeleteExpired handles per
// round trip.
const deleteBatch = 256

// Options configures New. The zero value connects to DefaultAddr with
// DefaultPrefix and DefaultExpiryGrace.
type Options struct {
	// URL locates the server: "redis://[user:password@]host:port/db", or
	// rediss:// for TLS (see redis.ParseURL for the query options).
	URL string
	// Addr is the server's "host:port", for when URL is empty.
	Addr string
	// Client is an existing client to use instead of URL and Addr. Close
	// does not close it.
	Client *redis.Client
	// Prefix starts every key the store writes; stores with different
	// prefixes on one server do not see each other's records. Empty means
	// DefaultPrefix.
	Prefix string
	// ExpiryGrace is how long after a record's ExpiresAt Redis deletes it by
	// itself. Zero means DefaultExpiryGrace; negative means Redis never
	// expires records, and only DeleteExpired (or Delete) removes them.
	ExpiryGrace time.Duration
}

// Store is a dualresp.Store backed by Redis. Create one with New.
type Store struct {
	client     *redis.Client
	ownsClient bool
	prefix     string
	index      string
	grace      time.Duration // < 0: no native expiry

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var (
	_ dualresp.Store        = (*Store)(nil)
	_ dualresp.PinCounter   = (*Store)(nil)
	_ dualresp.OwnerKeyer   = (*Store)(nil)
	_ dualresp.OwnerRenamer = (*Store)(nil)
)

// New connects to Redis (checking the connection with a PING bounded by ctx)
// and returns a Store. Close it when done.
func New(ctx context.Context, opts Options) (*Store, error) {
	s := &Store{
		client: opts.Client,
		prefix: opts.Prefix,
		grace:  opts.ExpiryGrace,
	}
	if s.prefix == "" {
		s.prefix = DefaultPrefix
	}
	s.index = s.prefix + "expiry"
	if s.grace == 0 {
		s.grace = DefaultExpiryGrace
	}
	switch {
	case opts.Client != nil && (opts.URL != "" || opts.Addr != ""):
		return nil, errors.New("redisstore: Options.Client is set together with Options.URL or Options.Addr; set only one")
	case opts.URL != "" && opts.Addr != "":
		return nil, errors.New("redisstore: both Options.URL and Options.Addr are set; set only one")
	case opts.Client == nil:
		ropts, err := clientOptions(opts.URL, opts.Addr)
		if err != nil {
			return nil, err
		}
		s.client = redis.NewClient(ropts)
		s.ownsClient = true
	}
	if err := s.client.Ping(ctx).Err(); err != nil {
		if s.ownsClient {
			s.client.Close()
		}
		return nil, fmt.Errorf("redisstore: connect to %s: %w", s.client.Options().Addr, err)
	}
	return s, nil
}

// clientOptions builds client options from a URL or an address. Errors never
// repeat the URL, which may hold a password.
func clientOptions(rawURL, addr string) (*redis.Options, error) {
	if rawURL == "" {
		if addr == "" {
			addr = DefaultAddr
		}
		return &redis.Options{Addr: addr}, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		return nil, errors.New(`redisstore: Options.URL is not a redis:// or rediss:// URL (want "redis://host:port/db")`)
	}
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redisstore: Options.URL for host %q: %w", u.Host, err)
	}
	return o, nil
}

// pinnedKey is the key of the set of ids of the pinned records of owner's
// identity (dualresp.OwnerIdentity).
func (s *Store) pinnedKey(owner string) string {
	return s.prefix + "pinned:" + dualresp.OwnerIdentity(owner)
}

// Client returns the Redis client the store uses.
func (s *Store) Client() *redis.Client { return s.client }

// Key returns the Redis key of the record with the given id.
func (s *Store) Key(id string) string { return s.prefix + "rec:" + id }

// Hash fields of a record.
const (
	fieldData        = "data"
	fieldAccessCount = "access_count"
	fieldLastAccess  = "last_access"
	fieldExpiresAt   = "expires_at"
	fieldPinned      = "pinned"
)

// data is the JSON form of the fields that only Save changes.
type data struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Query       dualresp.Query    `json:"query"`
	Columns     []dualresp.Column `json:"columns,omitempty"`
	TotalCount  int64             `json:"total_count"`
	Sample      []json.RawMessage `json:"sample,omitempty"`
	Metadata    map[string]any    `json:"metadata,omitempty"`
	Owner       string            `json:"owner,omitempty"`
	CreatedAt   time.Time         `json:"created_at"`
}

// Save implements dualresp.Store. A pinned record is stored without expiry.
// A record whose ExpiresAt plus the grace has already passed is deleted by
// Redis at once.
func (s *Store) Save(ctx context.Context, r *dualresp.Record) error {
	if r == nil || r.ID == "" {
		return errors.New("redisstore: save: record without an id")
	}
	if err := s.check(); err != nil {
		return fmt.Errorf("redisstore: save %q: %w", r.ID, err)
	}
	b, err := json.Marshal(data{
		Name: r.Name, Description: r.Description, Query: r.Query, Columns: r.Columns,
		TotalCount: r.TotalCount, Sample: r.Sample, Metadata: r.Metadata, Owner: r.Owner,
		CreatedAt: r.CreatedAt,
	})
	if err != nil {
		return fmt.Errorf("redisstore: save %q: encode: %w", r.ID, err)
	}
	for name, t := range map[string]time.Time{fieldLastAccess: r.LastAccess, fieldExpiresAt: r.ExpiresAt} {
		if err := checkTime(t); err != nil {
			return fmt.Errorf("redisstore: save %q: %s: %w", r.ID, name, err)
		}
	}
	fields := []any{
		fieldData, b,
		fieldAccessCount, r.AccessCount,
		fieldPinned, boolField(r.Pinned),
	}
	if !r.LastAccess.IsZero() {
		fields = append(fields, fieldLastAccess, nanos(r.LastAccess))
	}
	expires := !r.Pinned && !r.ExpiresAt.IsZero()
	if expires {
		fields = append(fields, fieldExpiresAt, nanos(r.ExpiresAt))
	}
	key := s.Key(r.ID)
	_, err = s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, key)
		p.HSet(ctx, key, fields...)
		if r.Pinned {
			p.SAdd(ctx, s.pinnedKey(r.Owner), r.ID)
		}
		if expires {
			p.ZAdd(ctx, s.index, redis.Z{Score: score(r.ExpiresAt), Member: r.ID})
			if s.grace >= 0 {
				p.PExpireAt(ctx, key, deadline(r.ExpiresAt, s.grace))
			}
		} else {
			p.ZRem(ctx, s.index, r.ID)
		}
		return nil
	})
	if err != nil {
		return s.fail("save", r.ID, err)
	}
	return nil
}

// Get implements dualresp.Store.
func (s *Store) Get(ctx context.Context, id string) (*dualresp.Record, error) {
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("redisstore: get %q: %w", id, err)
	}
	m, err := s.client.HGetAll(ctx, s.Key(id)).Result()
	if err == nil && len(m) == 0 {
		err = redis.Nil
	}
	if err != nil {
		return nil, s.fail("get", id, err)
	}
	return decode(id, m)
}

// luaCompare compares two decimal integers given as strings (as written by
// strconv.FormatInt) exactly; Lua numbers are doubles and would round Unix
// nanoseconds.
const luaCompare = `
local function cmp(a, b)
  local na, nb = a:byte(1) == 45, b:byte(1) == 45
  if na ~= nb then
    if na then return -1 else return 1 end
  end
  local sign = 1
  if na then a, b, sign = a:sub(2), b:sub(2), -1 end
  if #a ~= #b then
    if #a < #b then return -sign else return sign end
  end
  if a == b then return 0 end
  if a < b then return -sign else return sign end
end
`

// touchScript: KEYS = record, index. ARGV = now (ns), until (ns, or "" for
// no extension), until's index score, native expiry deadline (ms, or ""),
// id.
var touchScript = redis.NewScript(luaCompare + `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HINCRBY', KEYS[1], 'access_count', 1)
redis.call('HSET', KEYS[1], 'last_access', ARGV[1])
if ARGV[2] ~= '' and redis.call('HGET', KEYS[1], 'pinned') ~= '1' then
  local exp = redis.call('HGET', KEYS[1], 'expires_at')
  if not exp or cmp(ARGV[2], exp) > 0 then
    redis.call('HSET', KEYS[1], 'expires_at', ARGV[2])
    redis.call('ZADD', KEYS[2], ARGV[3], ARGV[5])
    if ARGV[4] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[4]) end
  end
end
return redis.call('HGETALL', KEYS[1])
`)

// Touch implements dualresp.Store with one Lua script: AccessCount is
// incremented with HINCRBY, and when the expiry moves out, so does the key's
// PEXPIREAT.
func (s *Store) Touch(ctx context.Context, id string, now time.Time, extend time.Duration) (*dualresp.Record, error) {
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("redisstore: touch %q: %w", id, err)
	}
	if err := checkTime(now); err != nil {
		return nil, fmt.Errorf("redisstore: touch %q: now: %w", id, err)
	}
	until, sc, dl := "", "", ""
	if extend > 0 {
		t := now.Add(extend)
		if err := checkTime(t); err != nil {
			return nil, fmt.Errorf("redisstore: touch %q: now+extend: %w", id, err)
		}
		until, sc = nanos(t), strconv.FormatFloat(score(t), 'f', -1, 64)
		if s.grace >= 0 {
			dl = strconv.FormatInt(deadline(t, s.grace).UnixMilli(), 10)
		}
	}
	v, err := touchScript.Run(ctx, s.client, []string{s.Key(id), s.index}, nanos(now), until, sc, dl, id).Slice()
	if err != nil {
		return nil, s.fail("touch", id, err)
	}
	return decodeList(id, v)
}

// pinScript: KEYS = record, index, the owner's pinned set. ARGV = id.
var pinScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSET', KEYS[1], 'pinned', '1')
redis.call('HDEL', KEYS[1], 'expires_at')
redis.call('PERSIST', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
return redis.call('HGETALL', KEYS[1])
`)

// Pin implements dualresp.Store: the record loses its expiry, and its key
// its TTL (PERSIST), and joins its owner's pinned set.
func (s *Store) Pin(ctx context.Context, id string) (*dualresp.Record, error) {
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("redisstore: pin %q: %w", id, err)
	}
	// The owner names the pinned set; it never changes after Save.
	b, err := s.client.HGet(ctx, s.Key(id), fieldData).Bytes()
	if err != nil {
		return nil, s.fail("pin", id, err)
	}
	var d data
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("redisstore: pin %q: decode: %w", id, err)
	}
	v, err := pinScript.Run(ctx, s.client, []string{s.Key(id), s.index, s.pinnedKey(d.Owner)}, id).Slice()
	if err != nil {
		return nil, s.fail("pin", id, err)
	}
	return decodeList(id, v)
}

// countPinnedScript: KEYS = the owner's pinned set. ARGV = the prefix of
// record keys. It drops the ids of records that are gone or no longer
// pinned and returns how many remain.
var countPinnedScript = redis.NewScript(`
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('HGET', ARGV[1] .. id, 'pinned') ~= '1' then
    redis.call('SREM', KEYS[1], id)
  end
end
return redis.call('SCARD', KEYS[1])
`)

// CountPinned implements dualresp.PinCounter.
func (s *Store) CountPinned(ctx context.Context, owner string) (int, error) {
	if err := s.check(); err != nil {
		return 0, fmt.Errorf("redisstore: count pinned: %w", err)
	}
	n, err := countPinnedScript.Run(ctx, s.client, []string{s.pinnedKey(owner)}, s.prefix+"rec:").Int()
	if err != nil {
		return 0, s.fail("count pinned", "", err)
	}
	return n, nil
}

// OwnerKey implements dualresp.OwnerKeyer: the key is kept in Redis, at
// Prefix+"owner-key", made by the first replica that asks (SET NX), so
// every replica sharing the store reads the same one. Whoever can read the
// Redis can read it too: keep the Redis private, as its records are.
func (s *Store) OwnerKey(ctx context.Context) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("redisstore: owner key: %w", err)
	}
	key := s.prefix + "owner-key"
	if err := s.client.SetNX(ctx, key, dualresp.NewOwnerKey(), 0).Err(); err != nil {
		return nil, s.fail("owner key", "", err)
	}
	b, err := s.client.Get(ctx, key).Bytes()
	if err != nil {
		return nil, s.fail("owner key", "", err)
	}
	if len(b) < 32 {
		return nil, fmt.Errorf("redisstore: owner key at %s is %d bytes; want at least 32 (delete it to make a new one)", key, len(b))
	}
	return b, nil
}

// RenameOwners implements dualresp.OwnerRenamer. It scans every record
// once (a start-up step, bounded by the records the Redis holds) and
// moves the identities' sets of pinned records, then adds the new
// identities to the set PREFIX+"owners-renamed": a later call whose
// renames are all there (every start after the first) scans nothing.
func (s *Store) RenameOwners(ctx context.Context, renames map[string]string) (int, error) {
	if err := s.check(); err != nil {
		return 0, fmt.Errorf("redisstore: rename owners: %w", err)
	}
	renames, err := s.notRenamed(ctx, renames)
	if err != nil {
		return 0, s.fail("rename owners", "", err)
	}
	if len(renames) == 0 {
		return 0, nil
	}
	n := 0
	iter := s.client.Scan(ctx, 0, s.prefix+"rec:*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		err := s.client.Watch(ctx, func(tx *redis.Tx) error {
			b, err := tx.HGet(ctx, key, fieldData).Bytes()
			if errors.Is(err, redis.Nil) {
				return nil // gone meanwhile
			}
			if err != nil {
				return err
			}
			var fields map[string]json.RawMessage
			var owner string
			if json.Unmarshal(b, &fields) != nil || json.Unmarshal(fields["owner"], &owner) != nil {
				return nil // not a record of this store's, or without an owner
			}
			identity, label, labelled := strings.Cut(owner, "/")
			to, ok := renames[identity]
			if !ok {
				return nil
			}
			if labelled {
				to += "/" + label
			}
			fields["owner"], _ = json.Marshal(to)
			b, err = json.Marshal(fields)
			if err != nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.HSet(ctx, key, fieldData, b)
				return nil
			})
			if err == nil {
				n++
			}
			return err
		}, key)
		if err != nil {
			return n, s.fail("rename owners", "", err)
		}
	}
	if err := iter.Err(); err != nil {
		return n, s.fail("rename owners", "", err)
	}
	if _, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for from, to := range renames {
			p.SUnionStore(ctx, s.pinnedKey(to), s.pinnedKey(to), s.pinnedKey(from))
			p.Del(ctx, s.pinnedKey(from))
			p.SAdd(ctx, s.renamedKey(), to)
		}
		return nil
	}); err != nil {
		return n, s.fail("rename owners", "", err)
	}
	return n, nil
}

// renamedKey is the key of the set of the new identities of the renames
// RenameOwners has made.
func (s *Store) renamedKey() string { return s.prefix + "owners-renamed" }

// notRenamed returns the renames whose new identity RenameOwners has not
// recorded as made.
func (s *Store) notRenamed(ctx context.Context, renames map[string]string) (map[string]string, error) {
	if len(renames) == 0 {
		return nil, nil
	}
	done := make(map[string]*redis.BoolCmd, len(renames))
	if _, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, to := range renames {
			done[to] = p.SIsMember(ctx, s.renamedKey(), to)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	todo := make(map[string]string, len(renames))
	for from, to := range renames {
		if !done[to].Val() {
			todo[from] = to
		}
	}
	return todo, nil
}

// Delete implements dualresp.Store.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.check(); err != nil {
		return fmt.Errorf("redisstore: delete %q: %w", id, err)
	}
	var del *redis.IntCmd
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		del = p.Del(ctx, s.Key(id))
		p.ZRem(ctx, s.index, id)
		return nil
	})
	if err == nil && del.Val() == 0 {
		err = redis.Nil
	}
	if err != nil {
		return s.fail("delete", id, err)
	}
	return nil
}

// deleteExpiredScript: KEYS = index, then the records' keys. ARGV = now
// (ns), then the records' ids. It deletes the records that are expired at
// now, drops index entries of records that are gone or pinned, and returns
// {deleted, kept}.
var deleteExpiredScript = redis.NewScript(luaCompare + `
local deleted, kept = 0, 0
for i = 2, #KEYS do
  local f = redis.call('HMGET', KEYS[i], 'pinned', 'expires_at')
  if f[1] == false or f[1] == '1' or f[2] == false then
    redis.call('ZREM', KEYS[1], ARGV[i])
  elseif cmp(f[2], ARGV[1]) <= 0 then
    redis.call('DEL', KEYS[i])
    redis.call('ZREM', KEYS[1], ARGV[i])
    deleted = deleted + 1
  else
    kept = kept + 1
  end
end
return {deleted, kept}
`)

// DeleteExpired implements dualresp.Store: it deletes the unpinned records
// whose ExpiresAt is not after now, using the expiry index, and returns how
// many it deleted. Records Redis has already expired by itself are not
// counted (their index entries are dropped).
func (s *Store) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	if err := s.check(); err != nil {
		return 0, fmt.Errorf("redisstore: delete expired: %w", err)
	}
	if err := checkTime(now); err != nil {
		return 0, fmt.Errorf("redisstore: delete expired: now: %w", err)
	}
	max := strconv.FormatFloat(score(now), 'f', -1, 64)
	total, offset := 0, int64(0)
	for {
		ids, err := s.client.ZRangeArgs(ctx, redis.ZRangeArgs{
			Key: s.index, Start: "-inf", Stop: max, ByScore: true, Offset: offset, Count: deleteBatch,
		}).Result()
		if err != nil {
			return total, s.fail("delete expired", "", err)
		}
		if len(ids) == 0 {
			return total, nil
		}
		keys := make([]string, 1, len(ids)+1)
		keys[0] = s.index
		args := make([]any, 1, len(ids)+1)
		args[0] = nanos(now)
		for _, id := range ids {
			keys = append(keys, s.Key(id))
			args = append(args, id)
		}
		res, err := deleteExpiredScript.Run(ctx, s.client, keys, args...).Int64Slice()
		if err != nil {
			return total, s.fail("delete expired", "", err)
		}
		if len(res) != 2 {
			return total, fmt.Errorf("redisstore: delete expired: script returned %v; want {deleted, kept}", res)
		}
		total += int(res[0])
		// Kept entries (expiring later within the same millisecond) stay in
		// the range; skip them.
		offset += res[1]
		if len(ids) < deleteBatch {
			return total, nil
		}
	}
}

// Close implements dualresp.Store. It closes the client if New created it.
// Calling it again returns the first call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		if s.ownsClient {
			if err := s.client.Close(); err != nil {
				s.closeErr = fmt.Errorf("redisstore: close: %w", err)
			}
		}
	})
	return s.closeErr
}

func (s *Store) check() error {
	if s.closed.Load() {
		return dualresp.ErrClosed
	}
	return nil
}

// fail turns a Redis error into the error a Store method returns: redis.Nil
// becomes dualresp.ErrNotFound, a closed client dualresp.ErrClosed.
func (s *Store) fail(op, id string, err error) error {
	where := op
	if id != "" {
		where = fmt.Sprintf("%s %q", op, id)
	}
	switch {
	case errors.Is(err, redis.Nil):
		return fmt.Errorf("redisstore: %s: %w", where, dualresp.ErrNotFound)
	case errors.Is(err, redis.ErrClosed):
		return fmt.Errorf("redisstore: %s: %w", where, dualresp.ErrClosed)
	}
	return fmt.Errorf("redisstore: %s: %w", where, err)
}

func boolField(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// The range of times stored exactly as Unix nanoseconds in an int64.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// checkTime reports an error for a time nanos cannot represent. The zero
// time is fine: it is never stored.
func checkTime(t time.Time) error {
	if !t.IsZero() && (t.Before(minTime) || t.After(maxTime)) {
		return fmt.Errorf("time %s is outside the storable range (%d to %d)", t.Format(time.RFC3339), minTime.Year(), maxTime.Year())
	}
	return nil
}

// nanos formats t as Unix nanoseconds.
func nanos(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }

// score is t's expiry index score: Unix milliseconds, rounded down, so that
// a range up to score(now) holds every record expired at now.
func score(t time.Time) float64 {
	return math.Floor(float64(t.UnixNano()) / 1e6)
}

// deadline is when Redis deletes a record expiring at t: t plus grace,
// rounded up to the millisecond.
func deadline(t time.Time, grace time.Duration) time.Time {
	d := t.Add(grace)
	if r := d.Truncate(time.Millisecond); !r.Equal(d) {
		return r.Add(time.Millisecond)
	}
	return d
}

// decodeList decodes the flat field/value list HGETALL returns from a
// script.
func decodeList(id string, v []any) (*dualresp.Record, error) {
	if len(v)%2 != 0 {
		return nil, fmt.Errorf("redisstore: record %q: odd hash reply of %d values", id, len(v))
	}
	m := make(map[string]string, len(v)/2)
	for i := 0; i < len(v); i += 2 {
		k, ok1 := v[i].(string)
		val, ok2 := v[i+1].(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("redisstore: record %q: hash reply holds %T/%T, not strings", id, v[i], v[i+1])
		}
		m[k] = val
	}
	return decode(id, m)
}

func decode(id string, m map[string]string) (*dualresp.Record, error) {
	var d data
	if err := json.Unmarshal([]byte(m[fieldData]), &d); err != nil {
		return nil, fmt.Errorf("redisstore: record %q: decode %s: %w", id, fieldData, err)
	}
	r := &dualresp.Record{
		ID: id, Name: d.Name, Description: d.Description, Query: d.Query, Columns: d.Columns,
		TotalCount: d.TotalCount, Sample: d.Sample, Metadata: d.Metadata, Owner: d.Owner,
		CreatedAt: d.CreatedAt, Pinned: m[fieldPinned] == "1",
	}
	var err error
	if r.AccessCount, err = strconv.ParseInt(m[fieldAccessCount], 10, 64); err != nil {
		return nil, fmt.Errorf("redisstore: record %q: %s: %w", id, fieldAccessCount, err)
	}
	if r.LastAccess, err = timeField(m, fieldLastAccess); err != nil {
		return nil, fmt.Errorf("redisstore: record %q: %w", id, err)
	}
	if r.ExpiresAt, err = timeField(m, fieldExpiresAt); err != nil {
		return nil, fmt.Errorf("redisstore: record %q: %w", id, err)
	}
	return r, nil
}

func timeField(m map[string]string, name string) (time.Time, error) {
	v, ok := m[name]
	if !ok {
		return time.Time{}, nil
	}
	ns, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", name, err)
	}
	return time.Unix(0, ns).UTC(), nil
}
