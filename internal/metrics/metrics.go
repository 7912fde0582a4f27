// Package metrics is the operator's view of a datasf Service, served at
// /metrics in the Prometheus text format: tool calls, upstream requests
// and waits, exports, stored results. Its hooks plug into the socrata
// client (OnRequest, OnWait), the dualresp server (OnExportStart,
// OnExportEnd, OnRemoved) and the mcp-go server (ToolMiddleware).
//
// It is imported by package datasf (the composition root) only: internal,
// not a library API.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Defaults of Options.
const (
	// DefaultMaxPortals bounds the portals besides the configured one
	// that have series of their own.
	DefaultMaxPortals = 20
	// DefaultPortalIdle is how long a portal (not the configured one) keeps
	// its series after its last request.
	DefaultPortalIdle = time.Hour
	// OtherPortal is the portal label of the requests to portals past
	// MaxPortals.
	OtherPortal = "other"
)

// Options configures New. The zero value means the defaults.
type Options struct {
	// MaxPortals bounds the other portals with series of their own
	// (default DefaultMaxPortals): past it, requests to a new portal are
	// counted under portal="other" (OtherPortal), so that a caller naming
	// thousands of domains cannot grow /metrics without bound.
	MaxPortals int
	// PortalIdle is how long a portal keeps its series after its last
	// request (default DefaultPortalIdle): a portal idle longer is
	// forgotten when a new one needs its place, and its series are
	// removed.
	PortalIdle time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Metrics are one Service's metrics. The registry is its own (not
// prometheus.DefaultRegisterer), so that several Services in one process
// (tests, embedders) do not clash.
type Metrics struct {
	reg *prometheus.Registry

	// The portals with series of their own, and when each was last used;
	// mu also makes choosing a label and using it one step, so that a
	// forgotten portal's series are not made again by a request under way.
	mu         sync.Mutex
	keep       string
	maxPortals int
	idle       time.Duration
	now        func() time.Time
	portals    map[string]time.Time

	toolCalls       *prometheus.CounterVec
	upstream        *prometheus.CounterVec
	upstreamLatency *prometheus.HistogramVec
	waits           *prometheus.CounterVec
	waitSeconds     *prometheus.HistogramVec
	exportsStarted  *prometheus.CounterVec
	exportsEnded    *prometheus.CounterVec
	exportRows      *prometheus.CounterVec
	exportBytes     *prometheus.CounterVec
	evictions       *prometheus.CounterVec
}

// New returns the metrics of a new Service.
func New(opts Options) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), maxPortals: opts.MaxPortals,
		idle: opts.PortalIdle, now: opts.Now, portals: map[string]time.Time{}}
	if m.maxPortals <= 0 {
		m.maxPortals = DefaultMaxPortals
	}
	if m.idle <= 0 {
		m.idle = DefaultPortalIdle
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "datasf_tool_calls_total",
		Help: "MCP tool calls by tool and outcome: ok, tool_error (an isError result) or failed (an internal error).",
	}, []string{"tool", "outcome"})
	m.upstream = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "datasf_upstream_requests_total",
		Help: "Requests sent to Socrata portals (every attempt) by portal (the configured one and a bounded set of others, the rest \"other\"), endpoint and HTTP status (0: no answer).",
	}, []string{"portal", "endpoint", "status"})
	m.upstreamLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "datasf_upstream_request_duration_seconds",
		Help:    "Time until a portal's answer started, by portal and endpoint.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"portal", "endpoint"})
	m.waits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "datasf_upstream_waits_total",
		Help: "Requests that waited for their turn under the per-portal limits, by portal and outcome: served or refused (503/isError, retry later).",
	}, []string{"portal", "outcome"})
	m.waitSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "datasf_upstream_wait_seconds",
		Help:    "How long requests waited for their turn under the per-portal limits.",
		Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"portal"})
	m.exportsStarted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "datasf_exports_started_total",
		Help: "Exports of stored results started, by format.",
	}, []string{"format"})
	m.exportsEnded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "datasf_exports_finished_total",
		Help: "Exports ended, by format and outcome: completed, incomplete (ended with the incomplete marker), failed (before any row) or client_gone.",
	}, []string{"format", "outcome"})
	m.exportRows = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "datasf_export_rows_total",
		Help: "Rows sent by exports, by format.",
	}, []string{"format"})
	m.exportBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "datasf_export_bytes_total",
		Help: "Body bytes sent by exports, by format.",
	}, []string{"format"})
	m.evictions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "datasf_stored_results_removed_total",
		Help: "Stored results removed, by reason: expired (the cleanup) or deleted (DELETE).",
	}, []string{"reason"})
	m.reg.MustRegister(m.toolCalls, m.upstream, m.upstreamLatency, m.waits, m.waitSeconds,
		m.exportsStarted, m.exportsEnded, m.exportRows, m.exportBytes, m.evictions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Gauge registers a gauge read from f at each scrape.
func (m *Metrics) Gauge(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

// EvictionCounters registers datasf_stored_results_evicted_total, read
// from the memory store at each scrape, by reason: owner_bound (an owner
// went over its bound: only its own records go) or store_full.
func (m *Metrics) EvictionCounters(f func() dualresp.Evictions) {
	const name, help = "datasf_stored_results_evicted_total", "Stored results evicted by the memory store, by reason: owner_bound (the owner went over its own bound) or store_full (the store went over its bound; the saving owner loses its own oldest first)."
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: prometheus.Labels{"reason": "owner_bound"}},
			func() float64 { return float64(f().OwnerBound) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: prometheus.Labels{"reason": "store_full"}},
			func() float64 { return float64(f().StoreFull) }))
}

// KeepPortal names the configured portal: its series are always kept,
// and it takes none of the MaxPortals places.
func (m *Metrics) KeepPortal(domain string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keep = strings.ToLower(domain)
	delete(m.portals, m.keep)
}

// portal returns the portal label of domain (see Options) and marks it
// used; m.mu must be held.
func (m *Metrics) portal(domain string) string {
	d := strings.ToLower(domain)
	if d == m.keep {
		return d
	}
	now := m.now()
	if _, ok := m.portals[d]; ok {
		m.portals[d] = now
		return d
	}
	if len(m.portals) >= m.maxPortals {
		for old, last := range m.portals {
			if now.Sub(last) > m.idle {
				m.forget(old)
			}
		}
	}
	if len(m.portals) >= m.maxPortals {
		return OtherPortal
	}
	m.portals[d] = now
	return d
}

// forget removes a portal's series; m.mu must be held.
func (m *Metrics) forget(domain string) {
	delete(m.portals, domain)
	l := prometheus.Labels{"portal": domain}
	m.upstream.DeletePartialMatch(l)
	m.upstreamLatency.DeletePartialMatch(l)
	m.waits.DeletePartialMatch(l)
	m.waitSeconds.DeletePartialMatch(l)
}

// OnRequest is socrata.Options.OnRequest.
func (m *Metrics) OnRequest(r socrata.RequestInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.portal(r.Domain)
	m.upstream.WithLabelValues(p, r.Endpoint, strconv.Itoa(r.Status)).Inc()
	m.upstreamLatency.WithLabelValues(p, r.Endpoint).Observe(r.Took.Seconds())
}

// OnWait is socrata.Options.OnWait.
func (m *Metrics) OnWait(w socrata.WaitInfo) {
	outcome := "served"
	if !w.Served {
		outcome = "refused"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.portal(w.Domain)
	m.waits.WithLabelValues(p, outcome).Inc()
	m.waitSeconds.WithLabelValues(p).Observe(w.Waited.Seconds())
}

// OnExportStart and OnExportEnd are dualresp's export hooks.
func (m *Metrics) OnExportStart(format string) { m.exportsStarted.WithLabelValues(format).Inc() }

func (m *Metrics) OnExportEnd(r dualresp.ExportReport) {
	m.exportsEnded.WithLabelValues(r.Format, r.Outcome).Inc()
	m.exportRows.WithLabelValues(r.Format).Add(float64(r.Rows))
	m.exportBytes.WithLabelValues(r.Format).Add(float64(r.Bytes))
}

// OnRemoved is dualresp.Options.OnRemoved.
func (m *Metrics) OnRemoved(reason string, n int) {
	m.evictions.WithLabelValues(reason).Add(float64(n))
}

// ToolMiddleware counts every tool call by tool and outcome.
func (m *Metrics) ToolMiddleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := next(ctx, req)
		outcome := "ok"
		switch {
		case err != nil:
			outcome = "failed"
		case res != nil && res.IsError:
			outcome = "tool_error"
		}
		m.toolCalls.WithLabelValues(req.Params.Name, outcome).Inc()
		return res, err
	}
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
