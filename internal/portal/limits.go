package portal

import (
	"math"
	"time"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Defaults of Limits for a portal reached over the network.
const (
	// DefaultUpstreamConcurrency is the requests in flight to one portal
	// without an app token.
	DefaultUpstreamConcurrency = 4
	// DefaultUpstreamRate is the requests a second to one portal without an
	// app token.
	DefaultUpstreamRate = 5.0
	// DefaultTokenFactor multiplies a portal's limits when this server has
	// an app token for it: Socrata gives an application with a token its
	// own, larger pool of requests (https://dev.socrata.com/docs/app-tokens.html).
	DefaultTokenFactor = 4
)

// Limits are the per-portal politeness limits: each portal's
// client (one per portal, shared by the tools, the REST pages and the
// exports) has at most MaxConcurrent requests in flight and starts at most
// Rate requests a second (golang.org/x/time/rate). A request that has to
// wait logs it; one that would wait longer than MaxWait is not sent and
// fails with a *socrata.BusyError: 503 with Retry-After on the REST API,
// an isError result of error_type rate_limit for the tools. An export's
// page that meets it is asked for again after the Retry-After.
type Limits struct {
	// MaxConcurrent bounds the requests in flight to one portal. Zero:
	// DefaultUpstreamConcurrency, or no bound for the offline portal;
	// negative: no bound.
	MaxConcurrent int
	// Rate bounds the requests a second to one portal (bursts of up to a
	// second's worth). Zero: DefaultUpstreamRate, or no bound for the
	// offline portal; negative: no bound.
	Rate float64
	// MaxWait is the longest a request waits for its turn. Zero:
	// socrata.DefaultMaxQueueWait.
	MaxWait time.Duration
	// TokenFactor multiplies MaxConcurrent and Rate for a portal with an
	// app token. Zero: DefaultTokenFactor; below 1: 1.
	TokenFactor float64
	// Shared, when set, makes these limits the service's: every replica
	// that shares its Redis takes its turns from one budget per portal and
	// token (see SharedBudget).
	Shared *SharedBudget
	// Replicas is the number of replicas that share the limits (zero or
	// one: this one alone). Each replica's own limits are its share,
	// MaxConcurrent / Replicas (rounded up) and Rate / Replicas: what it
	// keeps to when Shared's Redis is unreachable, and, without Shared, a
	// fixed split of the limits between the replicas.
	Replicas int
}

// Resolve fills in the defaults; offline means the local portal.
func (l Limits) Resolve(offline bool) Limits {
	if l.MaxConcurrent == 0 && !offline {
		l.MaxConcurrent = DefaultUpstreamConcurrency
	}
	if l.Rate == 0 && !offline {
		l.Rate = DefaultUpstreamRate
	}
	switch {
	case l.TokenFactor == 0:
		l.TokenFactor = DefaultTokenFactor
	case l.TokenFactor < 1:
		l.TokenFactor = 1
	}
	return l
}

// Apply sets a portal client's limits, raised when it has an app token.
func (l Limits) Apply(o *socrata.Options) {
	f := 1.0
	if o.AppToken != "" {
		f = l.TokenFactor
	}
	o.MaxConcurrent, o.RequestRate, o.SharedLimit = 0, 0, nil
	n := float64(max(l.Replicas, 1))
	var concurrent int
	var perSecond float64
	if l.MaxConcurrent > 0 {
		concurrent = int(float64(l.MaxConcurrent) * f)
		o.MaxConcurrent = int(math.Ceil(float64(concurrent) / n))
	}
	if l.Rate > 0 {
		perSecond = l.Rate * f
		o.RequestRate = perSecond / n
	}
	if sl := l.Shared.limiter(o.Domain, o.AppToken, concurrent, perSecond); sl != nil {
		o.SharedLimit = sl
	}
	o.MaxQueueWait = l.MaxWait
}
