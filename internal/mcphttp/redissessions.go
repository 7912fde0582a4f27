package mcphttp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/redis/go-redis/v9"
)

// sessionStore is what the transport asks of the MCP session ids it
// issues: the memory table of one replica (sessions) or the Redis one that
// every replica sharing it reads (redisSessions).
type sessionStore interface {
	server.SessionIdManager
	// admit reports whether client may start one more session.
	admit(client string) error
	// forClient is the SessionIdManager that issues sessions to client.
	forClient(client string) server.SessionIdManager
	// sweeper is the SessionIdManager of mcp-go's calls without a request
	// (its idle sweep, its shutdown).
	sweeper() server.SessionIdManager
	// openStream counts one more open event stream of client.
	openStream(client string, maxPerClient, maxAll int) (done func(), err error)
	// idleTimeout is how long a session lives without a request.
	idleTimeout() time.Duration
	// ownerOf is the client that started the live session id; ok is
	// false when no live session has this id.
	ownerOf(id string) (client string, ok bool, err error)
	// Len returns the live sessions (of this replica's view).
	Len() int
}

func (s *sessions) sweeper() server.SessionIdManager { return s }
func (s *sessions) idleTimeout() time.Duration       { return s.idle }

// errSessionStore is returned by admit when the session store cannot be
// reached: initialize is answered 503.
type errSessionStore struct{ err error }

func (e *errSessionStore) Error() string {
	return "the MCP session store (Redis) cannot be reached: " + e.err.Error() + "; retry shortly, or use protocol version 2026-07-28, which needs no session"
}

// redisSessions keeps the MCP sessions in Redis, so that a session that
// initialize started on one replica is accepted by every replica behind
// the balancer. A session is one key holding its client, whose expiry is
// the idle timeout (every request renews it); the per-client and
// server-wide bounds are sorted sets of session ids scored by their last
// use, so that sessions idle past the timeout no longer count. Event
// streams (GET /mcp) are connections to one replica and are counted there
// (the memory table's openStream).
//
// Ending a session is DELETE /mcp (on any replica) or its key's expiry: a
// replica's own idle sweep and its shutdown end nothing in Redis, since the
// session may be in use through another replica.
type redisSessions struct {
	rdb          redis.UniversalClient
	prefix       string
	idle         time.Duration
	maxLive      int
	maxPerClient int
	onEnd        func(id string)
	log          *slog.Logger
	streams      *sessions // the local count of event streams
	timeout      time.Duration
}

func newRedisSessions(rdb redis.UniversalClient, idle time.Duration, maxLive, maxPerClient int, onEnd func(string), log *slog.Logger) *redisSessions {
	idle = positiveOr(idle, DefaultSessionIdleTimeout)
	return &redisSessions{rdb: rdb, prefix: "datasf:mcp:", idle: idle,
		maxLive: positiveOr(maxLive, DefaultMaxSessions), maxPerClient: positiveOr(maxPerClient, DefaultMaxSessionsPerClient),
		onEnd: onEnd, log: log, streams: newSessions(idle, 1, nil, nil), timeout: 2 * time.Second}
}

func (r *redisSessions) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), r.timeout)
}

func (r *redisSessions) sessionKey(id string) string { return r.prefix + "session:" + id }
func (r *redisSessions) endedKey(id string) string   { return r.prefix + "ended:" + id }
func (r *redisSessions) allKey() string              { return r.prefix + "live" }

// clientKey names the set of sessions of a client's identity (a token's
// owner, an address; see sessionfair.go), hashed to bound the key: its
// client keys share the identity's bound, so that minting keys opens no
// more sessions. (Unlike the memory table, another key of an identity at
// its bound is refused rather than ending the flooding key's oldest
// session.)
func (r *redisSessions) clientKey(client string) string {
	sum := sha256.Sum256([]byte(clientIdentity(client)))
	return r.prefix + "client:" + hex.EncodeToString(sum[:12])
}

// admitScript drops the sessions idle past ARGV[2] (ms) from the client's
// set (KEYS[1]) and the server's (KEYS[2]) and answers 0 when both have
// room, 1 when the client is at ARGV[3], 2 when the server is at ARGV[4].
var admitScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local oldest = now - tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', oldest)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', oldest)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 2 end
return 0
`)

// addScript records a new session (KEYS[1]) of a client (its set
// KEYS[2]; the server's KEYS[3]) with ARGV[1] the client and ARGV[2] the
// idle timeout in ms.
var addScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], now, ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[3], now, ARGV[3])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1
`)

// touchScript renews a live session (KEYS[1]) in its key and in the
// server's set (KEYS[2]) and answers its client, or false when it is not
// live. The client's set is renewed by the caller, which learns its name
// here.
var touchScript = redis.NewScript(`
local client = redis.call('GET', KEYS[1])
if not client then return false end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], 'XX', now, ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return client
`)

// renewScript moves a session (ARGV[2]) of a client's set (KEYS[1]) to
// now, in Redis's clock as every score is.
var renewScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`)

func (r *redisSessions) admit(client string) error {
	ctx, cancel := r.ctx()
	defer cancel()
	n, err := admitScript.Run(ctx, r.rdb, []string{r.clientKey(client), r.allKey()},
		"", r.idle.Milliseconds(), r.maxPerClient, r.maxLive).Int()
	switch {
	case err != nil:
		r.log.Warn("mcp sessions: Redis failed; initialize is refused until it answers", "error", err.Error())
		return &errSessionStore{err: err}
	case n == 1:
		return &errTooManySessions{perClient: true, max: r.maxPerClient}
	case n == 2:
		return &errTooManySessions{max: r.maxLive}
	}
	return nil
}

// Generate issues a session of no known client.
func (r *redisSessions) Generate() string { return r.generate("") }

func (r *redisSessions) generate(client string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails
	id := "mcp-session-" + hex.EncodeToString(b[:])
	ctx, cancel := r.ctx()
	defer cancel()
	err := addScript.Run(ctx, r.rdb, []string{r.sessionKey(id), r.clientKey(client), r.allKey()},
		client, r.idle.Milliseconds(), id).Err()
	if err != nil {
		// The id is refused by Validate; the client sends initialize again.
		r.log.Warn("mcp sessions: Redis failed recording a new session", "error", err.Error())
	}
	return id
}

// Validate accepts a live session (renewing it), reports one ended by
// DELETE as terminated, and refuses any other.
func (r *redisSessions) Validate(id string) (isTerminated bool, err error) {
	if id == "" {
		return false, errors.New("missing Mcp-Session-Id: send initialize first")
	}
	ctx, cancel := r.ctx()
	defer cancel()
	client, err := touchScript.Run(ctx, r.rdb, []string{r.sessionKey(id), r.allKey()},
		r.idle.Milliseconds(), id).Text()
	switch {
	case err == nil:
		// The client's set is renewed apart: the script cannot name its
		// key before it has read the session.
		_ = renewScript.Run(ctx, r.rdb, []string{r.clientKey(client)}, r.idle.Milliseconds(), id).Err()
		return false, nil
	case !errors.Is(err, redis.Nil):
		r.log.Warn("mcp sessions: Redis failed validating a session", "error", err.Error())
		return false, fmt.Errorf("the session store cannot be reached: %w", err)
	}
	if n, err := r.rdb.Exists(ctx, r.endedKey(id)).Result(); err == nil && n > 0 {
		return true, nil
	}
	return false, fmt.Errorf("unknown session id %q: send initialize first", id)
}

// ownerOf reads the client of a live session.
func (r *redisSessions) ownerOf(id string) (string, bool, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	client, err := r.rdb.Get(ctx, r.sessionKey(id)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("the session store cannot be reached: %w", err)
	}
	return client, true, nil
}

// Terminate ends a session on every replica (DELETE /mcp).
func (r *redisSessions) Terminate(id string) (isNotAllowed bool, err error) {
	ctx, cancel := r.ctx()
	defer cancel()
	client, err := r.rdb.GetDel(ctx, r.sessionKey(id)).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("the session store cannot be reached: %w", err)
	}
	pipe := r.rdb.Pipeline()
	pipe.ZRem(ctx, r.clientKey(client), id)
	pipe.ZRem(ctx, r.allKey(), id)
	pipe.Set(ctx, r.endedKey(id), "1", r.idle)
	_, _ = pipe.Exec(ctx)
	if r.onEnd != nil {
		r.onEnd(id)
	}
	return false, nil
}

// countScript counts the sessions of KEYS[1] used within ARGV[1] ms.
var countScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. (now - tonumber(ARGV[1])), '+inf')
`)

// Len returns the sessions live in Redis (used within the idle timeout).
func (r *redisSessions) Len() int {
	ctx, cancel := r.ctx()
	defer cancel()
	n, err := countScript.Run(ctx, r.rdb, []string{r.allKey()}, r.idle.Milliseconds()).Int()
	if err != nil {
		return 0
	}
	return n
}

func (r *redisSessions) openStream(client string, maxPerClient, maxAll int) (func(), error) {
	return r.streams.openStream(client, maxPerClient, maxAll)
}

func (r *redisSessions) idleTimeout() time.Duration { return r.idle }

func (r *redisSessions) forClient(client string) server.SessionIdManager {
	return redisClientSessions{r, client}
}

// sweeper answers mcp-go's idle sweep and shutdown: they end nothing in
// Redis (the session may live on through another replica; its key expires
// by itself when idle everywhere).
func (r *redisSessions) sweeper() server.SessionIdManager { return localOnly{r} }

type redisClientSessions struct {
	*redisSessions
	client string
}

func (c redisClientSessions) Generate() string { return c.generate(c.client) }

type localOnly struct{ *redisSessions }

func (localOnly) Terminate(string) (bool, error) { return false, nil }

// newSessionStore returns the Redis store with Options.Redis, else the
// memory table of this replica.
func newSessionStore(opts Options, log *slog.Logger) sessionStore {
	if opts.Redis != nil {
		return newRedisSessions(opts.Redis, opts.SessionIdleTimeout, opts.MaxSessions, opts.MaxSessionsPerClient, opts.OnSessionEnd, log)
	}
	s := newSessions(opts.SessionIdleTimeout, opts.MaxSessions, nil, opts.OnSessionEnd)
	s.maxPerClient = positiveOr(opts.MaxSessionsPerClient, DefaultMaxSessionsPerClient)
	return s
}

// sessionStoreStatus is the HTTP status of an admit error.
func sessionStoreStatus(err error) int {
	var e *errSessionStore
	if errors.As(err, &e) {
		return http.StatusServiceUnavailable
	}
	return http.StatusTooManyRequests
}
