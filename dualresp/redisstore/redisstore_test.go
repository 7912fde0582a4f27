package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/redisstore/redistest"
	"github.com/datasf-mcp/datasf-mcp/dualresp/storetest"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

// prefixes makes every store of a test binary unique on a shared server.
var prefixes atomic.Int64

func newStore(t *testing.T, addr string, opts Options) *Store {
	t.Helper()
	if opts.Client == nil && opts.URL == "" {
		opts.Addr = addr
	}
	if opts.Prefix == "" {
		opts.Prefix = fmt.Sprintf("test%d:", prefixes.Add(1))
	}
	s, err := New(t.Context(), opts)
	if err != nil {
		t.Fatalf("New(%+v) = %v; want nil", opts, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// pttl returns the key's PTTL: -1 without expiry, -2 when missing.
func pttl(t *testing.T, s *Store, id string) time.Duration {
	t.Helper()
	ms, err := s.Client().Do(t.Context(), "PTTL", s.Key(id)).Int64()
	if err != nil {
		t.Fatalf("PTTL %s: %v", s.Key(id), err)
	}
	if ms < 0 {
		return time.Duration(ms)
	}
	return time.Duration(ms) * time.Millisecond
}

func TestContract(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	// storetest's clock is fixed in the past, so Redis-native expiry at
	// ExpiresAt+grace would delete its records at once. Run the contract with
	// expiry a century later (the PEXPIREAT paths run, nothing expires) and
	// without native expiry.
	for _, grace := range []time.Duration{100 * 365 * 24 * time.Hour, -1} {
		t.Run(fmt.Sprintf("grace=%v", grace), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) dualresp.Store {
				return newStore(t, addr, Options{ExpiryGrace: grace})
			})
		})
	}
}

// The pin quota through a dualresp.Server on this store (storetest's
// clock is in the past: no native expiry, as in TestContract). The store
// is no dualresp.UnusedPinDeleter, so RunPins leaves idle pins out.
func TestPins(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	storetest.RunPins(t, func(t *testing.T) dualresp.Store {
		return newStore(t, addr, Options{ExpiryGrace: -1})
	})
}

// TestNativeExpiry checks the TTL Redis holds for a record through Save,
// Touch and Pin, against the real clock.
func TestNativeExpiry(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	ctx := t.Context()
	s := newStore(t, addr, Options{})
	now := time.Now()
	within := func(what string, got, want time.Duration) {
		t.Helper()
		// The TTL counts down from when it was set: allow for the time the
		// test took since now, and for Redis rounding expiry times to the
		// millisecond (PTTL may read a millisecond or two above).
		if got > want+10*time.Millisecond || got < want-time.Minute {
			t.Errorf("%s: PTTL = %v; want about %v (at most, and not a minute less)", what, got, want)
		}
		t.Logf("%s: PTTL = %v (ExpiresAt+grace-now = %v)", what, got, want)
	}

	if err := s.Save(ctx, storetest.Record("r", now.Add(10*time.Minute))); err != nil {
		t.Fatal(err)
	}
	within("after Save expiring in 10m", pttl(t, s, "r"), 10*time.Minute+DefaultExpiryGrace)

	r, err := s.Touch(ctx, "r", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(time.Hour); !r.ExpiresAt.Equal(want) {
		t.Errorf("Touch(now, 1h).ExpiresAt = %v; want %v", r.ExpiresAt, want)
	}
	within("after Touch extending to 1h", pttl(t, s, "r"), time.Hour+DefaultExpiryGrace)

	if _, err := s.Touch(ctx, "r", now, time.Minute); err != nil {
		t.Fatal(err)
	}
	within("after Touch with a shorter extension", pttl(t, s, "r"), time.Hour+DefaultExpiryGrace)

	if score, err := s.Client().ZScore(ctx, s.index, "r").Result(); err != nil || score != float64(now.Add(time.Hour).UnixMilli()) {
		t.Errorf("expiry index score = %v, %v; want %d", score, err, now.Add(time.Hour).UnixMilli())
	}
	if _, err := s.Pin(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if got := pttl(t, s, "r"); got != -1 {
		t.Errorf("after Pin: PTTL = %v; want -1 (no expiry: PERSIST)", got)
	}
	if err := s.Client().ZScore(ctx, s.index, "r").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("after Pin: ZSCORE in the expiry index = %v; want redis.Nil (not indexed)", err)
	}
	if _, err := s.Touch(ctx, "r", now, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := pttl(t, s, "r"); got != -1 {
		t.Errorf("after Touch of a pinned record: PTTL = %v; want -1", got)
	}

	pinned := storetest.Record("p", now.Add(time.Minute))
	pinned.Pinned = true
	if err := s.Save(ctx, pinned); err != nil {
		t.Fatal(err)
	}
	if got := pttl(t, s, "p"); got != -1 {
		t.Errorf("after Save of a pinned record: PTTL = %v; want -1", got)
	}
}

// TestRedisDeletesExpired checks that Redis itself drops a record once
// ExpiresAt+grace has passed, keeps it readable (as expired) within the
// grace, and that DeleteExpired prunes the index entry without counting it.
func TestRedisDeletesExpired(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	ctx := t.Context()
	s := newStore(t, addr, Options{ExpiryGrace: time.Minute})
	now := time.Now()

	if err := s.Save(ctx, storetest.Record("gone", now.Add(-2*time.Minute))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "gone"); !errors.Is(err, dualresp.ErrNotFound) {
		t.Errorf("Get(record expired 2m ago, grace 1m) = %v; want ErrNotFound (Redis deleted it)", err)
	}
	if err := s.Save(ctx, storetest.Record("grace", now.Add(-time.Second))); err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, "grace")
	if err != nil {
		t.Fatalf("Get(record expired 1s ago, grace 1m) = %v; want it (expired but within the grace)", err)
	}
	if !r.Expired(now) {
		t.Errorf("Get(grace).Expired(now) = false; want true")
	}
	if got := pttl(t, s, "grace"); got <= 0 || got > time.Minute-time.Second+10*time.Millisecond {
		t.Errorf("PTTL(grace) = %v; want in (0, 59s]", got)
	}
	if n, err := s.Client().ZCard(ctx, s.index).Result(); err != nil || n != 2 {
		t.Errorf("expiry index holds %d, %v; want 2 (gone and grace)", n, err)
	}
	n, err := s.DeleteExpired(ctx, now)
	if err != nil || n != 1 {
		t.Errorf("DeleteExpired(now) = %d, %v; want 1 (grace; gone was already dropped by Redis)", n, err)
	}
	if n, err := s.Client().ZCard(ctx, s.index).Result(); err != nil || n != 0 {
		t.Errorf("after DeleteExpired the expiry index holds %d, %v; want 0", n, err)
	}
}

// TestConcurrentTouch touches one record from 32 goroutines over two stores
// with their own connections (as two server instances would): every access
// is counted.
func TestConcurrentTouch(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	ctx := t.Context()
	a := newStore(t, addr, Options{Prefix: "shared:"})
	b := newStore(t, addr, Options{Prefix: "shared:"})
	now := time.Now()
	if err := a.Save(ctx, storetest.Record("hot", now.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 32, 20
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		s := a
		if g%2 == 1 {
			s = b
		}
		wg.Go(func() {
			for i := range each {
				if _, err := s.Touch(ctx, "hot", now.Add(time.Duration(g*each+i)*time.Millisecond), time.Hour); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Touch: %v", err)
	}
	got, err := b.Get(ctx, "hot")
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessCount != goroutines*each {
		t.Errorf("AccessCount after %d touches from %d goroutines = %d; want %d", goroutines*each, goroutines, got.AccessCount, goroutines*each)
	}
	if want := now.Add((goroutines*each-1)*time.Millisecond + time.Hour); !got.ExpiresAt.Equal(want) {
		t.Errorf("ExpiresAt after touches = %v; want the latest now+1h %v", got.ExpiresAt, want)
	}
	t.Logf("concurrent Touch over two clients: %d goroutines x %d = AccessCount %d", goroutines, each, got.AccessCount)
}

// TestDeleteExpiredBatches deletes more records than one batch while records
// expiring later within the same millisecond stay.
func TestDeleteExpiredBatches(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	ctx := t.Context()
	s := newStore(t, addr, Options{ExpiryGrace: -1})
	now := time.Date(2026, 1, 1, 0, 0, 0, 500_000, time.UTC) // half a millisecond in
	const expired, kept = 300, 300
	for i := range expired {
		if err := s.Save(ctx, storetest.Record(fmt.Sprintf("old%03d", i), now.Add(-time.Duration(i)*time.Millisecond))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range kept { // same millisecond as now, one nanosecond later
		if err := s.Save(ctx, storetest.Record(fmt.Sprintf("new%03d", i), now.Add(time.Nanosecond))); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.DeleteExpired(ctx, now)
	if err != nil || n != expired {
		t.Errorf("DeleteExpired(now) = %d, %v; want %d, nil", n, err, expired)
	}
	for i := range kept {
		if _, err := s.Get(ctx, fmt.Sprintf("new%03d", i)); err != nil {
			t.Fatalf("Get(new%03d) = %v; want it kept", i, err)
		}
	}
	if n, err := s.DeleteExpired(ctx, now.Add(time.Nanosecond)); err != nil || n != kept {
		t.Errorf("DeleteExpired(now+1ns) = %d, %v; want %d, nil", n, err, kept)
	}
	if pttl(t, s, "new000") != -2 {
		t.Errorf("new000 still exists after DeleteExpired(now+1ns)")
	}
	t.Logf("DeleteExpired over %d expired + %d same-millisecond live records: deleted %d, then %d", expired, kept, expired, kept)
}

func TestPrefixIsolation(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	ctx := t.Context()
	a := newStore(t, addr, Options{Prefix: "a:", ExpiryGrace: -1})
	b := newStore(t, addr, Options{Prefix: "b:", ExpiryGrace: -1})
	if err := a.Save(ctx, storetest.Record("x", time.Unix(1, 0))); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "x"); !errors.Is(err, dualresp.ErrNotFound) {
		t.Errorf("b.Get(x saved in a) = %v; want ErrNotFound", err)
	}
	if n, err := b.DeleteExpired(ctx, time.Unix(2, 0)); err != nil || n != 0 {
		t.Errorf("b.DeleteExpired() = %d, %v; want 0, nil", n, err)
	}
	if _, err := a.Get(ctx, "x"); err != nil {
		t.Errorf("a.Get(x) after b.DeleteExpired = %v; want nil", err)
	}
	keys, err := a.Client().Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if diff := cmp.Diff([]string{"a:expiry", "a:rec:x"}, keys); diff != "" {
		t.Errorf("keys on the server (-want +got):\n%s", diff)
	}
}

// TestNanosecondTimes checks that times round-trip exactly, beyond the
// millisecond precision storetest asks for.
func TestNanosecondTimes(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	ctx := t.Context()
	s := newStore(t, addr, Options{ExpiryGrace: -1})
	base := time.Date(2026, 7, 8, 9, 10, 11, 123_456_789, time.UTC)
	want := storetest.Record("ns", base.Add(time.Hour+time.Nanosecond))
	want.CreatedAt = base.In(time.FixedZone("PDT", -7*3600))
	want.LastAccess = base.Add(7 * time.Nanosecond)
	if err := s.Save(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "ns")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, storetest.Compare); diff != "" {
		t.Errorf("Get(ns) (-want +got):\n%s", diff)
	}
	// Touch compares nanosecond expiries exactly: one nanosecond later wins.
	got, err = s.Touch(ctx, "ns", base.Add(2*time.Nanosecond), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if w := base.Add(time.Hour + 2*time.Nanosecond); !got.ExpiresAt.Equal(w) {
		t.Errorf("Touch(+2ns, 1h).ExpiresAt = %v; want %v", got.ExpiresAt, w)
	}
	got, err = s.Touch(ctx, "ns", base, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if w := base.Add(time.Hour + 2*time.Nanosecond); !got.ExpiresAt.Equal(w) {
		t.Errorf("Touch(earlier, 1h).ExpiresAt = %v; want unchanged %v", got.ExpiresAt, w)
	}
	far := storetest.Record("far", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
	if err := s.Save(ctx, far); err == nil || !strings.Contains(err.Error(), "expires_at") {
		t.Errorf("Save(ExpiresAt in year 3000) = %v; want an error naming expires_at", err)
	}
}

func TestURLAndDatabase(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	ctx := t.Context()
	s := newStore(t, addr, Options{URL: "redis://" + addr + "/3", Prefix: "u:"})
	if err := s.Save(ctx, storetest.Record("in3", time.Now().Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	db3 := redis.NewClient(&redis.Options{Addr: addr, DB: 3})
	defer db3.Close()
	db0 := redis.NewClient(&redis.Options{Addr: addr, DB: 0})
	defer db0.Close()
	if n, err := db3.Exists(ctx, "u:rec:in3").Result(); err != nil || n != 1 {
		t.Errorf("EXISTS u:rec:in3 in db 3 = %d, %v; want 1", n, err)
	}
	if n, err := db0.Exists(ctx, "u:rec:in3").Result(); err != nil || n != 0 {
		t.Errorf("EXISTS u:rec:in3 in db 0 = %d, %v; want 0", n, err)
	}
	// A store on a caller's client leaves the client open on Close.
	own := newStore(t, addr, Options{Client: db3, Prefix: "u:"})
	if _, err := own.Get(ctx, "in3"); err != nil {
		t.Errorf("Get(in3) through Options.Client = %v", err)
	}
	if err := own.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := own.Get(ctx, "in3"); !errors.Is(err, dualresp.ErrClosed) {
		t.Errorf("Get after Close = %v; want ErrClosed", err)
	}
	if err := db3.Ping(ctx).Err(); err != nil {
		t.Errorf("caller's client after store Close: PING = %v; want it still open", err)
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String() // nothing listens here once closed
	l.Close()
	client := redis.NewClient(&redis.Options{Addr: closed})
	defer client.Close()
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"URL and Addr", Options{URL: "redis://" + closed, Addr: closed}, "both Options.URL and Options.Addr"},
		{"Client and URL", Options{Client: client, URL: "redis://" + closed}, "Options.Client is set together"},
		{"wrong scheme", Options{URL: "http://user:s3cret@" + closed}, "not a redis:// or rediss:// URL"},
		{"bad URL", Options{URL: "redis://user:s3cret@%zz"}, "not a redis:// or rediss:// URL"},
		{"bad database", Options{URL: "redis://user:s3cret@" + closed + "/notanumber"}, "invalid database number"},
		{"unreachable", Options{URL: "redis://user:s3cret@" + closed + "/0"}, "connect to " + closed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			s, err := New(ctx, tt.opts)
			if err == nil {
				s.Close()
				t.Fatalf("New(%s) = nil error; want one containing %q", tt.name, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New(%s) = %v; want an error containing %q", tt.name, err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("New(%s) = %v; the error shows the password", tt.name, err)
			}
		})
	}
}

// scanCounter is a go-redis hook counting the SCAN commands a client sends.
type scanCounter struct{ scans atomic.Int64 }

func (h *scanCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *scanCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "scan" {
			h.scans.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h *scanCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if cmd.Name() == "scan" {
				h.scans.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

// TestRenameOwnersScansOnce: a server renames the owners of its tokens at
// every start (datasf: unkeyed token hashes to keyed ones); the first
// start scans the records, the next ones, in new processes with new
// clients, send no SCAN at all, until a rename is new. The failure this
// guards against: a SCAN over every key of the Redis at every start.
func TestRenameOwnersScansOnce(t *testing.T) {
	t.Parallel()
	addr := redistest.Start(t)
	prefix := fmt.Sprintf("test%d:", prefixes.Add(1))
	renames := map[string]string{"token:plain-a": "token:keyed-a", "token:plain-b": "token:keyed-b"}
	start := func() (*Store, *scanCounter) {
		c := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { c.Close() })
		h := &scanCounter{}
		c.AddHook(h)
		return newStore(t, addr, Options{Client: c, Prefix: prefix}), h
	}
	first, h := start()
	for i := range 30 {
		rec := storetest.Record(fmt.Sprintf("r%02d", i), time.Now().Add(time.Hour))
		rec.Owner = "token:plain-a"
		if err := first.Save(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := first.RenameOwners(t.Context(), renames); err != nil || n != 30 {
		t.Fatalf("the first start's RenameOwners = %d, %v; want 30, nil", n, err)
	}
	if h.scans.Load() == 0 {
		t.Fatal("the first start's RenameOwners sent no SCAN: is the hook counting?")
	}
	for i := range 2 {
		again, h := start()
		n, err := again.RenameOwners(t.Context(), renames)
		if err != nil || n != 0 || h.scans.Load() != 0 {
			t.Errorf("start %d: RenameOwners = %d, %v after %d SCANs; want 0, nil after none", i+2, n, err, h.scans.Load())
		}
	}
	// A new rename (a token configured since) scans again, once.
	renames["token:plain-c"] = "token:keyed-c"
	next, h := start()
	if _, err := next.RenameOwners(t.Context(), renames); err != nil || h.scans.Load() == 0 {
		t.Errorf("RenameOwners with a new rename = %v after %d SCANs; want a scan", err, h.scans.Load())
	}
}
