package socrata

import (
	"context"
	"fmt"
	"io"
	"math"
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

// limiter holds the politeness limits of one client: a bound on the
// requests in flight and a token bucket of requests per second
// (golang.org/x/time/rate). Socrata throttles clients without an app token
// harder than those with one (https://dev.socrata.com/docs/app-tokens.html);
// the limits here keep this server a polite client of the portal whatever
// its own callers do.
type limiter struct {
	slots   chan struct{} // nil: no bound on requests in flight
	rate    *rate.Limiter // nil: no rate
	maxWait time.Duration
}

func newLimiter(opts Options) *limiter {
	l := &limiter{maxWait: opts.MaxQueueWait}
	if l.maxWait <= 0 {
		l.maxWait = DefaultMaxQueueWait
	}
	if opts.MaxConcurrent > 0 {
		l.slots = make(chan struct{}, opts.MaxConcurrent)
	}
	if opts.RequestRate > 0 {
		burst := opts.RequestBurst
		if burst <= 0 {
			burst = max(1, int(math.Ceil(opts.RequestRate)))
		}
		l.rate = rate.NewLimiter(rate.Limit(opts.RequestRate), burst)
	}
	if l.slots == nil && l.rate == nil {
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
	if l.slots != nil {
		select {
		case l.slots <- struct{}{}:
		default:
			waited = true
			t := time.NewTimer(max(deadline.Sub(c.now()), 0))
			select {
			case l.slots <- struct{}{}:
				t.Stop()
			case <-t.C:
				return nil, busy(l.maxWait / 4)
			case <-ctx.Done():
				t.Stop()
				done(false)
				return nil, ctx.Err()
			}
		}
	}
	release = func() {}
	if l.slots != nil {
		var once sync.Once
		release = func() { once.Do(func() { <-l.slots }) }
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
