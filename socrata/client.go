// Package socrata is a client for Socrata open data portals such as
// data.sfgov.org: the Discovery API (catalog search), the Views API (dataset
// metadata) and the Resource API (SoQL queries).
//
// Every method takes a context first. Failures come back as typed errors:
// ErrNotFound (with errors.Is), *RateLimitError, *TimeoutError and *APIError
// (with errors.As). Transient failures (429, 502, 503, 504 and 202 "still
// processing") are retried with backoff and jitter, honouring Retry-After,
// within a bounded number of attempts and total time. The app token is sent
// as X-App-Token and never appears in logs or error texts.
package socrata

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Version is sent in the default User-Agent.
const Version = "0.1.0"

// Options configures a Client. The zero value talks to data.sfgov.org.
type Options struct {
	// Domain is the portal, e.g. "data.sfgov.org" (the default).
	Domain string
	// BaseURL is the scheme and host of the Views and Resource APIs.
	// Default "https://" + Domain.
	BaseURL string
	// DiscoveryURL is the base of the Discovery API. Default
	// "https://api.us.socrata.com".
	DiscoveryURL string
	// AppToken is sent as X-App-Token on every request when set. It is never
	// logged and never part of an error.
	AppToken string
	// HTTPClient does the requests. Default: a client with Timeout.
	HTTPClient *http.Client
	// Timeout bounds each request (default 30s).
	Timeout time.Duration
	// UserAgent is sent as User-Agent (default "datasf-mcp/<Version>").
	UserAgent string
	// MaxRetries bounds the retries of one request (default 3; negative: none).
	MaxRetries int
	// MaxRetryWait bounds the total time spent waiting between retries of one
	// request (default 30s).
	MaxRetryWait time.Duration
	// Logger receives debug logs of requests (default: discard).
	Logger *slog.Logger

	// sleep waits between retries; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// Client talks to one Socrata portal. It is safe for concurrent use.
type Client struct {
	domain, base, discovery string
	token, userAgent        string
	http                    *http.Client
	timeout                 time.Duration
	maxRetries              int
	maxRetryWait            time.Duration
	log                     *slog.Logger
	sleep                   func(ctx context.Context, d time.Duration) error
}

// NewClient returns a client for the portal opts describes.
func NewClient(opts Options) *Client {
	c := &Client{
		domain:       opts.Domain,
		base:         strings.TrimRight(opts.BaseURL, "/"),
		discovery:    strings.TrimRight(opts.DiscoveryURL, "/"),
		token:        opts.AppToken,
		userAgent:    opts.UserAgent,
		http:         opts.HTTPClient,
		timeout:      opts.Timeout,
		maxRetries:   opts.MaxRetries,
		maxRetryWait: opts.MaxRetryWait,
		log:          opts.Logger,
		sleep:        opts.sleep,
	}
	if c.domain == "" {
		c.domain = "data.sfgov.org"
	}
	if c.base == "" {
		c.base = "https://" + c.domain
	}
	if c.discovery == "" {
		c.discovery = "https://api.us.socrata.com"
	}
	if c.userAgent == "" {
		c.userAgent = "datasf-mcp/" + Version
	}
	if c.timeout <= 0 {
		c.timeout = 30 * time.Second
	}
	if c.http == nil {
		c.http = &http.Client{Timeout: c.timeout}
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = 3
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.maxRetryWait <= 0 {
		c.maxRetryWait = 30 * time.Second
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	return c
}

// Domain returns the portal's domain.
func (c *Client) Domain() string { return c.domain }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// get performs a GET with retries and returns the successful response, whose
// body the caller must close. Non-2xx answers become typed errors.
func (c *Client) get(ctx context.Context, endpoint string, u string) (*http.Response, error) {
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, c.ctxError(ctx, endpoint, err)
		}
		resp, err := c.once(ctx, u)
		if err != nil {
			if isTimeout(err) {
				err = &TimeoutError{Endpoint: endpoint, Err: stripURL(err)}
			} else {
				err = fmt.Errorf("socrata: %s: %w", endpoint, stripURL(err))
			}
			if attempt < c.maxRetries && waited < c.maxRetryWait && ctx.Err() == nil && !isTimeoutErr(err) {
				d := min(backoff(attempt), c.maxRetryWait-waited)
				c.log.DebugContext(ctx, "socrata: retrying after a transport error", "endpoint", endpoint, "attempt", attempt+1, "wait", d)
				if serr := c.sleep(ctx, d); serr != nil {
					return nil, c.ctxError(ctx, endpoint, serr)
				}
				waited += d
				continue
			}
			return nil, err
		}
		if resp.StatusCode == http.StatusOK {
			return resp, nil
		}
		retryable := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusAccepted ||
			resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusServiceUnavailable ||
			resp.StatusCode == http.StatusGatewayTimeout
		if resp.StatusCode >= 200 && resp.StatusCode < 300 && !retryable {
			return resp, nil
		}
		apiErr := errorFromResponse(endpoint, resp)
		if retryable && attempt < c.maxRetries {
			d := backoff(attempt)
			if ra := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ra > 0 {
				d = ra
			}
			if waited+d <= c.maxRetryWait {
				c.log.DebugContext(ctx, "socrata: retrying", "endpoint", endpoint, "status", resp.StatusCode, "attempt", attempt+1, "wait", d)
				if serr := c.sleep(ctx, d); serr != nil {
					return nil, c.ctxError(ctx, endpoint, serr)
				}
				waited += d
				continue
			}
		}
		return nil, apiErr
	}
}

func (c *Client) once(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if c.token != "" {
		req.Header.Set("X-App-Token", c.token)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err == nil {
		c.log.DebugContext(ctx, "socrata: request", "path", req.URL.Path, "status", resp.StatusCode, "took", time.Since(start))
	}
	return resp, err
}

func (c *Client) ctxError(ctx context.Context, endpoint string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{Endpoint: endpoint, Err: context.DeadlineExceeded}
	}
	return err
}

// backoff returns the wait before retry attempt+1: exponential from 250ms
// with full jitter, at most 8s.
func backoff(attempt int) time.Duration {
	d := 250 * time.Millisecond << min(attempt, 5)
	d = min(d, 8*time.Second)
	return d/2 + rand.N(d/2+1)
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &te) && te.Timeout())
}

func isTimeoutErr(err error) bool {
	var te *TimeoutError
	return errors.As(err, &te)
}

// stripURL removes the request URL from transport errors: it may carry the
// query, which is noise for a model, and we never want URLs with secrets in
// errors.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", strings.ToLower(ue.Op), ue.Err)
	}
	return err
}

// getJSON GETs u and decodes the JSON body into v.
func (c *Client) getJSON(ctx context.Context, endpoint, u string, v any) error {
	resp, err := c.get(ctx, endpoint, u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := checkJSON(endpoint, resp); err != nil {
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		if isTimeout(err) {
			return &TimeoutError{Endpoint: endpoint, Err: err}
		}
		return &APIError{Endpoint: endpoint, StatusCode: resp.StatusCode, Code: "invalid_response", Message: "the response body is not valid JSON: " + err.Error()}
	}
	return nil
}

// checkJSON rejects an HTML page served where JSON was expected (as portals
// and proxies do for maintenance pages and logins).
func checkJSON(endpoint string, resp *http.Response) error {
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	if strings.Contains(ct, "text/html") {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return &APIError{Endpoint: endpoint, StatusCode: resp.StatusCode, Code: "html_response",
			Message: "the portal answered with an HTML page instead of JSON (maintenance page, login or proxy error)"}
	}
	return nil
}
