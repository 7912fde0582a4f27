package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

// harness is the parent's side: the product (MCP server in-process, REST
// endpoint on a loopback listener) against the upstream child.
type harness struct {
	up   *child
	st   *stack
	http *http.Client
	stop context.CancelFunc
	done chan error
}

func newHarness(ctx context.Context, up *child) (*harness, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	st, err := newStack(ctx, up.URL, "http://"+ln.Addr().String(), datasf.UpstreamLimits{MaxConcurrent: -1, Rate: -1})
	if err != nil {
		ln.Close()
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	h := &harness{up: up, st: st, stop: stop, done: make(chan error, 1),
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}}
	go func() { h.done <- serveOn(sctx, ln, st.results.Handler()) }()
	return h, nil
}

func (h *harness) Close() {
	h.stop()
	<-h.done
	h.st.Close()
}

// resetUpstream clears the upstream's handler timing.
func (h *harness) resetUpstream(ctx context.Context) error {
	return h.postUpstream(ctx, "/bench/reset")
}

// setUpstreamLatency makes the upstream answer every request d later.
func (h *harness) setUpstreamLatency(ctx context.Context, d time.Duration) error {
	return h.postUpstream(ctx, "/bench/latency?d="+d.String())
}

// postUpstream posts to one of the upstream's bench controls.
func (h *harness) postUpstream(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.up.URL+path, nil)
	if err != nil {
		return err
	}
	resp, err := h.http.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("upstream %s: %s", path, resp.Status)
	}
	return nil
}

// upstreamStats returns the upstream's handler timing since the last reset.
func (h *harness) upstreamStats(ctx context.Context) (upstreamStats, error) {
	var st upstreamStats
	return st, h.getJSON(ctx, h.up.URL+"/bench/stats", &st)
}

// get sends GET u and returns the response when its status is 200 OK; any
// other status is an error that quotes the start of the body.
func (h *harness) get(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := h.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	return resp, nil
}

func (h *harness) getJSON(ctx context.Context, u string, v any) error {
	resp, err := h.get(ctx, u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// createOn asks the export child to run query_datasf and returns the
// resource URL of the result.
func (h *harness) createOn(ctx context.Context, e *child, datasetID, soql string) (createdResult, error) {
	u := e.URL + "/bench/query?" + url.Values{"dataset_id": {datasetID}, "soql": {soql}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return createdResult{}, err
	}
	resp, err := h.http.Do(req)
	if err != nil {
		return createdResult{}, err
	}
	defer resp.Body.Close()
	var cr createdResult
	if err := json.NewDecoder(resp.Body).Decode(&cr); err != nil {
		return cr, fmt.Errorf("export child /bench/query: %s: %w", resp.Status, err)
	}
	if cr.Error != "" || resp.StatusCode != http.StatusOK {
		return cr, fmt.Errorf("export child /bench/query: %s: %s", resp.Status, cr.Error)
	}
	if cr.URL == "" {
		return cr, errors.New("export child /bench/query: no resource url")
	}
	return cr, nil
}

// since returns the time elapsed since t, at least 1 ns.
func since(t time.Time) time.Duration { return max(time.Since(t), 1) }
