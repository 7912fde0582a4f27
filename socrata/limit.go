package socrata

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultMaxQueueWait is how long a request waits for its turn under
// Options.MaxConcurrent and Options.RequestRate when Options.MaxQueueWait
// is zero.
const DefaultMaxQueueWait = 30 * time.Second

// BusyError is a request this client did not send: the portal's limits of
// this client (Options.MaxConcurrent, Options.RequestRate) would have made
// it wait longer than Options.MaxQueueWait. Nothing reached the portal;
// the same request later will be served.
type BusyError struct {
	Endpoint string
	// After is when a retry has a fair chance (at least one second).
	After time.Duration
	// Waited is how long the request waited before giving up.
	Waited time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("socrata: too many requests to the portal are waiting on this server (waited %s); retry after %s",
		e.Waited.Round(time.Millisecond), e.After)
}

// RetryAfter returns e.After: when to try again.
func (e *BusyError) RetryAfter() time.Duration { return e.After }

// WaitInfo describes one request that waited for its turn, for
// Options.OnWait.
type WaitInfo struct {
	Domain   string
	Endpoint string
	Waited   time.Duration
	// Served is false when the request gave up (a *BusyError) or its
	// context ended while it waited.
	Served bool
}

// SharedLimiter bounds the requests of several clients together: the
// replicas of one service that share one portal's budget through a store
// they all reach (package internal/portal's Redis budget). A client with
// one (Options.SharedLimit) asks it for every request's turn; while it
// answers ErrSharedLimitUnavailable the client falls back to its own
// limits (Options.MaxConcurrent, Options.RequestRate), which are then its
// share of the budget: never to no limit.
type SharedLimiter interface {
	// Acquire waits, at most until deadline, for one request's turn: a
	// slot of the shared bound on requests in flight and a token of the
	// shared rate. who names the caller the request is made for
	// (Options.Identity; "" is one caller), for fair shares of the budget
	// between callers. It returns the function that frees the slot and
	// whether the request had to wait. A turn that would come after
	// deadline is a *BusyError with After set; a store that cannot be
	// reached is an error wrapping ErrSharedLimitUnavailable; an ended ctx
	// is ctx's error.
	Acquire(ctx context.Context, who string, deadline time.Time) (release func(), waited bool, err error)
}

// ErrSharedLimitUnavailable is what a SharedLimiter answers when its store
// cannot be reached: the client then uses its own limits.
var ErrSharedLimitUnavailable = errors.New("socrata: the store of the shared limits cannot be reached")

// limiter holds the politeness limits of one client: a bound on the
// requests in flight and a token bucket of requests per second
// (golang.org/x/time/rate), and the limits it shares with other clients
// (SharedLimiter), asked first when there are some. Socrata throttles clients without an app token
// harder than those with one (https://dev.socrata.com/docs/app-tokens.html);
// the limits here keep this server a polite client of the portal whatever
// its own callers do.
type limiter struct {
	slots    *fairSlots // nil: no bound on requests in flight
	identity func(context.Context) string
	rate     *rate.Limiter // nil: no rate
	shared   SharedLimiter // nil: none
	maxWait  time.Duration
}

func newLimiter(opts Options) *limiter {
	l := &limiter{maxWait: opts.MaxQueueWait, shared: opts.SharedLimit, identity: opts.Identity}
	if l.maxWait <= 0 {
		l.maxWait = DefaultMaxQueueWait
	}
	if opts.MaxConcurrent > 0 {
		l.slots = newFairSlots(opts.MaxConcurrent)
	}
	if opts.RequestRate > 0 {
		burst := opts.RequestBurst
		if burst <= 0 {
			burst = max(1, int(math.Ceil(opts.RequestRate)))
		}
		l.rate = rate.NewLimiter(rate.Limit(opts.RequestRate), burst)
	}
	if l.slots == nil && l.rate == nil && l.shared == nil {
		return nil
	}
	return l
}

// acquire waits for the request's turn: a free slot and a token of the
// rate. It returns the function that frees the slot, or a *BusyError when
// the turn would come later than maxWait (or ctx's deadline), or ctx's
// error.
func (c *Client) acquire(ctx context.Context, endpoint string) (release func(), err error) {
	l := c.limit
	if l == nil {
		return func() {}, nil
	}
	start := c.now()
	deadline := start.Add(l.maxWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	waited := false
	done := func(served bool) {
		if !waited {
			return
		}
		took := c.now().Sub(start)
		c.log.InfoContext(ctx, "socrata: a request waited for its turn under this server's limits of the portal",
			"domain", c.domain, "endpoint", endpoint, "waited", took.Round(time.Millisecond), "served", served)
		if c.onWait != nil {
			c.onWait(WaitInfo{Domain: c.domain, Endpoint: endpoint, Waited: took, Served: served})
		}
	}
	busy := func(after time.Duration) error {
		done(false)
		return &BusyError{Endpoint: endpoint, After: max(after, time.Second).Round(time.Second), Waited: c.now().Sub(start)}
	}
	who := ""
	if l.identity != nil {
		who = l.identity(ctx)
	}
	if l.shared != nil {
		release, sharedWaited, err := l.shared.Acquire(ctx, who, deadline)
		waited = sharedWaited
		var be *BusyError
		switch {
		case err == nil:
			done(true)
			return release, nil
		case errors.As(err, &be):
			waited = true
			return nil, busy(be.After)
		case !errors.Is(err, ErrSharedLimitUnavailable):
			done(false)
			return nil, err
		}
		// The shared store is away: this client's own limits, its share.
		waited = false
	}
	if l.slots != nil {
		if w := l.slots.take(who); w != nil {
			waited = true
			t := time.NewTimer(max(deadline.Sub(c.now()), 0))
			select {
			case <-w.ready:
				t.Stop()
			case <-t.C:
				l.slots.leave(w)
				return nil, busy(l.maxWait / 4)
			case <-ctx.Done():
				t.Stop()
				l.slots.leave(w)
				done(false)
				return nil, ctx.Err()
			}
		}
	}
	release = func() {}
	if l.slots != nil {
		var once sync.Once
		release = func() { once.Do(l.slots.release) }
	}
	if l.rate != nil {
		r := l.rate.Reserve()
		delay := r.Delay()
		if delay > 0 {
			waited = true
			if c.now().Add(delay).After(deadline) {
				r.Cancel()
				release()
				return nil, busy(delay)
			}
			if err := c.sleep(ctx, delay); err != nil {
				r.Cancel()
				release()
				done(false)
				return nil, err
			}
		}
	}
	done(true)
	return release, nil
}

// releaseOnClose frees a request's slot when its body is closed: a
// streamed answer holds its slot while it is read.
type releaseOnClose struct {
	io.ReadCloser
	release func()
}

func (r *releaseOnClose) Close() error {
	err := r.ReadCloser.Close()
	r.release()
	return err
}

// fairSlots bounds the requests in flight, and gives the slots that come
// free round robin to the callers (Options.Identity) with requests
// waiting, each caller's requests in their order.
type fairSlots struct {
	mu      sync.Mutex
	free    int
	waiting map[string]*list.List // a caller's waiting *slotWaiter, oldest first
	turns   []string              // the callers with requests waiting, in turn
	next    int                   // index in turns of the caller served next
}

// slotWaiter is a request waiting for a slot: ready is closed when it has
// one.
type slotWaiter struct {
	who   string
	elem  *list.Element
	ready chan struct{}
	given bool
}

func newFairSlots(n int) *fairSlots {
	return &fairSlots{free: n, waiting: map[string]*list.List{}}
}

// take gives a slot at once (nil), or queues a request of who and returns
// its waiter.
func (f *fairSlots) take(who string) *slotWaiter {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.free > 0 && len(f.turns) == 0 {
		f.free--
		return nil
	}
	q := f.waiting[who]
	if q == nil {
		q = list.New()
		f.waiting[who] = q
		f.turns = append(f.turns, who)
	}
	w := &slotWaiter{who: who, ready: make(chan struct{})}
	w.elem = q.PushBack(w)
	return w
}

// leave takes w, which gave up, out of the queue; a slot given to it
// meanwhile goes to the next request.
func (f *fairSlots) leave(w *slotWaiter) {
	f.mu.Lock()
	given := w.given
	if !given {
		f.remove(w)
	}
	f.mu.Unlock()
	if given {
		f.release()
	}
}

// release frees a slot: it goes to the oldest waiting request of the
// caller whose turn it is.
func (f *fairSlots) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.turns) == 0 {
		f.free++
		return
	}
	if f.next >= len(f.turns) {
		f.next = 0
	}
	who := f.turns[f.next]
	w := f.waiting[who].Front().Value.(*slotWaiter)
	f.next++ // the next caller's turn, unless remove drops who from turns
	f.remove(w)
	w.given = true
	close(w.ready)
}

// remove takes w out of its caller's queue, and the caller out of the
// turns when it has nothing more waiting.
func (f *fairSlots) remove(w *slotWaiter) {
	q := f.waiting[w.who]
	q.Remove(w.elem)
	if q.Len() > 0 {
		return
	}
	delete(f.waiting, w.who)
	i := slices.Index(f.turns, w.who)
	f.turns = slices.Delete(f.turns, i, i+1)
	if i < f.next {
		f.next--
	}
}
