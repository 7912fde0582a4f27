package portal

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// SharedBudget makes each portal's Limits the service's rather than one
// replica's: every replica that shares one Redis takes its requests'
// turns from the same budget, keyed by portal and app token, so that N
// replicas behind one address ask the portal no more than one would.
//
// The rate is GCRA on Redis (github.com/go-redis/redis_rate, a small,
// maintained limiter from the go-redis authors: one Lua script per turn,
// no clock shared but Redis's own). The bound on requests in flight is a
// sorted set of leases per portal, taken and freed by a Lua script,
// renewed while a request (a streamed page) is read, and dropped by
// Redis's clock when a replica dies holding one.
//
// The slots are shared fairly between the callers a request is made for
// (socrata.Options.Identity: a bearer token's owner, an MCP client's
// address), on every replica at once: each lease names its caller, and a
// caller with requests waiting for a slot says so in a second sorted set
// (one member per caller, dropped by Redis's clock within waiterTTL of its
// last ask). A free slot is refused to a caller while another caller
// waits that holds fewer slots than it does: so a slot that comes free
// goes to a waiting caller holding the fewest, and a tenant paging with 30
// threads on one replica yields to another's few queries on any replica.
// A waiting caller holding the fewest is never refused, so no slot is
// kept from all the waiters: the budget stays as busy as before (a slot
// may stay free for one pause between asks, pollWait, or for waiterTTL
// after a caller stopped waiting). A caller is named by a hash of its
// identity, never by it: a bearer token's owner is already a keyed hash
// (HMAC under the store's key), so nothing in Redis leads back to a
// token; an address is hashed without a key, which hides it from a
// glance but not from someone who can read Redis and hash every IPv4
// address, and it stays only while its lease or wait lasts. The callers
// in Redis are bounded by the leases (at most the bound) and by
// waiterTTL. Turns of the rate
// are taken by requests holding a slot, so with both bounds set a
// caller's turns follow its slots; a rate with no bound on requests in
// flight is first come, first served. The per-replica fair queue (package socrata's)
// applies while Redis is unreachable.
//
// When Redis cannot be reached, a request is not refused and not sent
// without limit: the replica's own limits apply, which Limits.Apply sets to
// its share (Limits / Limits.Replicas). The change is logged once each way
// and shown by Shared (the metric datasf_upstream_limits_shared). Redis is
// tried again after RetryInterval.
type SharedBudget struct {
	rdb     redis.UniversalClient
	rate    *redis_rate.Limiter
	prefix  string
	log     *slog.Logger
	lease   time.Duration
	retry   time.Duration
	replica string

	shared    atomic.Bool
	fallbacks atomic.Int64
	mu        sync.Mutex
	downUntil time.Time
}

// SharedBudgetOptions configures NewSharedBudget. Every zero field but
// Client means the default.
type SharedBudgetOptions struct {
	// Client is the Redis every replica reaches.
	Client redis.UniversalClient
	// Prefix starts every key (default "datasf:upstream:").
	Prefix string
	// Lease is how long a slot of the bound on requests in flight is held
	// without renewal: the time a dead replica's slots take to come back
	// (default 30s; renewed every third of it while held).
	Lease time.Duration
	// RetryInterval is how long a replica keeps to its local share after
	// Redis failed before trying Redis again (default 5s).
	RetryInterval time.Duration
	// Logger receives the changes between the shared budget and the local
	// share (default: discard).
	Logger *slog.Logger
}

// NewSharedBudget returns the shared budget kept in opts.Client.
func NewSharedBudget(opts SharedBudgetOptions) *SharedBudget {
	b := &SharedBudget{rdb: opts.Client, rate: redis_rate.NewLimiter(opts.Client), prefix: opts.Prefix,
		log: opts.Logger, lease: opts.Lease, retry: opts.RetryInterval}
	if b.prefix == "" {
		b.prefix = "datasf:upstream:"
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.lease <= 0 {
		b.lease = 30 * time.Second
	}
	if b.retry <= 0 {
		b.retry = 5 * time.Second
	}
	var id [8]byte
	_, _ = crand.Read(id[:]) // never fails
	b.replica = hex.EncodeToString(id[:])
	b.shared.Store(true)
	return b
}

// Shared reports whether the last turn came from the shared budget: false
// while Redis is unreachable and the replica keeps to its local share.
func (b *SharedBudget) Shared() bool { return b.shared.Load() }

// Fallbacks returns the requests that took their turn from the local share
// because Redis was unreachable.
func (b *SharedBudget) Fallbacks() int64 { return b.fallbacks.Load() }

// limiter returns the socrata.SharedLimiter of one portal client, or nil
// when the limits have no bound to share. The token only names the key,
// hashed: it is never stored.
func (b *SharedBudget) limiter(domain, token string, maxConcurrent int, perSecond float64) socrata.SharedLimiter {
	if b == nil || (maxConcurrent <= 0 && perSecond <= 0) {
		return nil
	}
	sum := sha256.Sum256([]byte("datasf-upstream\x00" + token))
	// The portal's part of the keys in braces, Redis Cluster's hash tag:
	// the take script reads two of them, which must be in one slot.
	key := b.prefix + "{" + strings.ToLower(strings.TrimSpace(domain)) + ":" + hex.EncodeToString(sum[:6]) + "}"
	l := &sharedLimiter{b: b, slotsKey: key + ":inflight", waitKey: key + ":waiting", rateKey: key + ":rate", max: maxConcurrent}
	if perSecond > 0 {
		// GCRA's emission interval is Period/Rate: a rate in thousandths
		// a second keeps a fractional rate (2.5/s) exact.
		l.limit = redis_rate.Limit{Rate: int(math.Round(perSecond * 1000)), Period: 1000 * time.Second,
			Burst: max(1, int(math.Ceil(perSecond)))}
	}
	return l
}

// unavailable records that Redis failed, and says so when that changes
// the budget in use.
func (b *SharedBudget) unavailable(err error) error {
	b.mu.Lock()
	b.downUntil = time.Now().Add(b.retry)
	b.mu.Unlock()
	if b.shared.Swap(false) {
		b.log.Warn("upstream limits: Redis is unreachable; this replica keeps to its local share of each portal's limits (the limits divided by --replicas) until Redis answers again",
			"error", err.Error(), "retry_in", b.retry)
	}
	b.fallbacks.Add(1)
	return fmt.Errorf("%w: %v", socrata.ErrSharedLimitUnavailable, err)
}

// down reports whether Redis failed less than RetryInterval ago.
func (b *SharedBudget) down() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Now().Before(b.downUntil)
}

// available records that Redis answered.
func (b *SharedBudget) available() {
	if !b.shared.Swap(true) {
		b.log.Info("upstream limits: Redis answers again; each portal's limits are shared by every replica")
	}
}

// sharedLimiter is one portal client's turns from a SharedBudget.
type sharedLimiter struct {
	b        *SharedBudget
	slotsKey string
	waitKey  string
	rateKey  string
	max      int              // 0: no bound on requests in flight
	limit    redis_rate.Limit // zero: no rate
}

// waiterTTL is how long a caller stays among the waiters (KEYS[2] of
// takeSlot) after its last ask for a slot: many times the longest pause
// between asks (pollWait), so that a caller waiting is never dropped, and
// short, so that one that stopped waiting (served, gone, its replica dead)
// holds no slot back for long.
const waiterTTL = 250 * time.Millisecond

// takeSlot takes a lease of the bound on requests in flight for the
// caller ARGV[4] when fewer than ARGV[3] are held and no other caller
// waits that holds fewer than ARGV[4] does. KEYS[1] is a sorted set of
// leases "caller:replica:id" scored by their end in Redis's clock
// (milliseconds); KEYS[2] the callers waiting, scored by the end of their
// wait (ARGV[5] ms after their last ask). Ended members are dropped first.
// A caller refused joins the waiters.
var takeSlot = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local who = ARGV[4]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local function wait()
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), who)
  redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[5]) * 2)
  return 0
end
local leases = redis.call('ZRANGE', KEYS[1], 0, -1)
if #leases >= tonumber(ARGV[3]) then
  return wait()
end
local held = {}
for _, m in ipairs(leases) do
  local c = string.match(m, '^[^:]*')
  held[c] = (held[c] or 0) + 1
end
local mine = held[who] or 0
if mine > 0 then
  for _, c in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    if c ~= who and (held[c] or 0) < mine then
      return wait()
    end
  end
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1
`)

// renewSlot moves a held lease's end to now + ARGV[2] ms.
var renewSlot = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return n
`)

// Acquire implements socrata.SharedLimiter.
func (l *sharedLimiter) Acquire(ctx context.Context, who string, deadline time.Time) (release func(), waited bool, err error) {
	b := l.b
	if b.down() {
		b.fallbacks.Add(1)
		return nil, false, socrata.ErrSharedLimitUnavailable
	}
	release = func() {}
	if l.max > 0 {
		release, waited, err = l.takeSlot(ctx, who, deadline)
		if err != nil {
			return nil, waited, err
		}
	}
	if l.limit.Rate > 0 {
		w, err := l.takeRate(ctx, deadline)
		waited = waited || w
		if err != nil {
			release()
			return nil, waited, err
		}
	}
	b.available()
	return release, waited, nil
}

// pollWait is how long a request waits before asking again for a slot
// that was full: short first, longer while the wait lasts, with jitter so
// that waiters on several replicas do not ask in step.
func pollWait(try int) time.Duration {
	d := min(2*time.Millisecond<<min(try, 4), 25*time.Millisecond)
	return d/2 + rand.N(d/2+1)
}

// callerName is how a caller (socrata.Options.Identity) is named in
// Redis: a hash, so that no token or address is stored, short and without
// ':' (takeSlot's separator).
func callerName(who string) string {
	sum := sha256.Sum256([]byte("datasf-upstream-caller\x00" + who))
	return hex.EncodeToString(sum[:8])
}

// takeSlot takes one lease of the bound on requests in flight for the
// caller who, asking again until deadline; the lease is renewed until
// release.
func (l *sharedLimiter) takeSlot(ctx context.Context, who string, deadline time.Time) (release func(), waited bool, err error) {
	b := l.b
	var idb [12]byte
	_, _ = crand.Read(idb[:])
	caller := callerName(who)
	member := caller + ":" + b.replica + ":" + hex.EncodeToString(idb[:])
	lease := b.lease.Milliseconds()
	for try := 0; ; try++ {
		ok, err := takeSlot.Run(ctx, b.rdb, []string{l.slotsKey, l.waitKey}, member, lease, l.max, caller,
			waiterTTL.Milliseconds()).Int()
		if err != nil {
			if ctx.Err() != nil {
				return nil, waited, ctx.Err()
			}
			return nil, waited, b.unavailable(err)
		}
		if ok == 1 {
			break
		}
		waited = true
		d := pollWait(try)
		if time.Now().Add(d).After(deadline) {
			return nil, waited, &socrata.BusyError{After: time.Second}
		}
		if err := sleep(ctx, d); err != nil {
			return nil, waited, err
		}
	}
	stop := make(chan struct{})
	go func() { // renew the lease while the request (a streamed page) is read
		t := time.NewTicker(b.lease / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				rctx, cancel := context.WithTimeout(context.Background(), b.lease/3)
				_ = renewSlot.Run(rctx, b.rdb, []string{l.slotsKey}, member, lease).Err()
				cancel()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			// A lease not removed (Redis away) ends by itself.
			rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = b.rdb.ZRem(rctx, l.slotsKey, member).Err()
		})
	}, waited, nil
}

// takeRate takes one token of the shared rate, waiting for it until
// deadline.
func (l *sharedLimiter) takeRate(ctx context.Context, deadline time.Time) (waited bool, err error) {
	for range 1000 { // each try waits the RetryAfter GCRA gives; bounded anyway
		res, err := l.b.rate.Allow(ctx, l.rateKey, l.limit)
		if err != nil {
			if ctx.Err() != nil {
				return waited, ctx.Err()
			}
			return waited, l.b.unavailable(err)
		}
		if res.Allowed > 0 {
			return waited, nil
		}
		waited = true
		if time.Now().Add(res.RetryAfter).After(deadline) {
			return waited, &socrata.BusyError{After: res.RetryAfter}
		}
		if err := sleep(ctx, res.RetryAfter); err != nil {
			return waited, err
		}
	}
	return waited, &socrata.BusyError{After: time.Second}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
