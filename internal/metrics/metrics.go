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

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Metrics are one Service's metrics. The registry is its own (not
// prometheus.DefaultRegisterer), so that several Services in one process
// (tests, embedders) do not clash.
type Metrics struct {
	reg *prometheus.Registry

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
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "datasf_tool_calls_total",
		Help: "MCP tool calls by tool and outcome: ok, tool_error (an isError result) or failed (an internal error).",
	}, []string{"tool", "outcome"})
	m.upstream = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "datasf_upstream_requests_total",
		Help: "Requests sent to Socrata portals (every attempt) by portal, endpoint and HTTP status (0: no answer).",
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
	const name, help = "datasf_stored_results_evicted_total", "Stored results evicted by the memory store, by reason: owner_bound (the owner went over its own bound) or store_full (the store went over its bound; the owner holding the most loses one)."
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: prometheus.Labels{"reason": "owner_bound"}},
			func() float64 { return float64(f().OwnerBound) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: prometheus.Labels{"reason": "store_full"}},
			func() float64 { return float64(f().StoreFull) }))
}

// OnRequest is socrata.Options.OnRequest.
func (m *Metrics) OnRequest(r socrata.RequestInfo) {
	m.upstream.WithLabelValues(r.Domain, r.Endpoint, strconv.Itoa(r.Status)).Inc()
	m.upstreamLatency.WithLabelValues(r.Domain, r.Endpoint).Observe(r.Took.Seconds())
}

// OnWait is socrata.Options.OnWait.
func (m *Metrics) OnWait(w socrata.WaitInfo) {
	outcome := "served"
	if !w.Served {
		outcome = "refused"
	}
	m.waits.WithLabelValues(w.Domain, outcome).Inc()
	m.waitSeconds.WithLabelValues(w.Domain).Observe(w.Waited.Seconds())
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
