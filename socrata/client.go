// Package socrata is a client for Socrata open data portals such as
// data.sf.gov (DataSF, formerly data.sfgov.org): the Discovery API (catalog search), the Views API (dataset
// metadata) and the Resource API (SoQL queries).
//
// Every method takes a context first. Failures come back as typed errors:
// ErrNotFound (with errors.Is), *RateLimitError, *TimeoutError and *APIError
// (with errors.As); one function makes them all. Transient failures (429,
// 502, 503, 504, and 202 while Socrata is still processing a query) are
// retried with exponential backoff and jitter, honouring Retry-After, within a
// bounded number of attempts and a bounded total wait; so are 425 (Too
// Early, which data.sf.gov's CDN answers to bursts with an empty body) and
// an anonymous 403 "authentication_required" (how some portals throttle
// requests without an app token).
//
// The client follows no redirect. A portal that answers that it moved (a
// redirect to the same API on another host, or the HTML 403 the old host
// of a known move gives to queries; see KnownMove) is a *MovedError: the
// client reports it and sends nothing to the new host, whose name is
// checked, and whose client is made, by the caller (package portal's
// registry resolves a move and retries there). The app token is sent
// as X-App-Token and never appears in a log line or an error text.
// Options.MaxConcurrent and Options.RequestRate make a client polite: a
// request waits for its turn, and one that would wait too long fails with
// a *BusyError without reaching the portal.
//
// With an app token, queries go to SODA3 (POST /api/v3/views/{id}/query.json,
// the SoQL in a JSON body, so no URL-length limit); without one, to the SODA
// 2.1 Resource API. A portal without SODA3 is detected and remembered; see
// Client.UsesSODA3 and docs/soda3.md.
package socrata

import (
	"bytes"
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
	"sync/atomic"
	"time"
)

// Version is sent in the default User-Agent.
const Version = "0.1.0"

// Options configures a Client. The zero value talks to data.sf.gov.
type Options struct {
	// Domain is the portal, e.g. "data.sf.gov" (DefaultDomain).
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
	// HTTPClient does the requests. Default: a client whose Timeout is
	// Timeout. A caller's client is copied, with Timeout when set, and
	// with a CheckRedirect that follows no redirect: a portal's move is
	// a *MovedError, for the caller to follow or not.
	HTTPClient *http.Client
	// Timeout bounds each request, body included (default 30s).
	Timeout time.Duration
	// UserAgent is sent as User-Agent (default "datasf-mcp/<Version>").
	UserAgent string
	// MaxRetries bounds the retries of one request (0 means the default, 3;
	// negative means no retries).
	MaxRetries int
	// MaxRetryWait bounds the total time spent waiting between the attempts
	// of one request (default 30s). A Retry-After that would go past it ends
	// the retries at once.
	MaxRetryWait time.Duration
	// Logger receives debug logs of requests (default: discard). Logs carry
	// the endpoint, path, status, attempt and duration; never the token.
	Logger *slog.Logger

	// MaxConcurrent bounds the requests of this client in flight at once
	// (a streamed answer counts until its body is closed); 0 means no
	// bound. RequestRate bounds the requests a second it starts, with
	// bursts of RequestBurst (default: the rate, rounded up); 0 means no
	// bound. Every attempt counts, retries too. A request waits for its
	// turn (and logs that it did) at most MaxQueueWait (default
	// DefaultMaxQueueWait) or until its context's deadline, whichever is
	// sooner; past that it fails with a *BusyError without reaching the
	// portal.
	MaxConcurrent int
	RequestRate   float64
	RequestBurst  int
	MaxQueueWait  time.Duration
	// SharedLimit, when set, is asked first for every request's turn: the
	// limits this client shares with others (see SharedLimiter).
	SharedLimit SharedLimiter
	// Identity, when set, names the caller a request is made for (a
	// server's tenant), from the request's context. While requests wait
	// for a slot under MaxConcurrent, the slots that come free go round
	// robin between the callers that have requests waiting, each caller's
	// in their order: one caller's burst waits behind itself, not in
	// front of another caller's few requests. Nil, or "", is one caller.
	// SharedLimit is told the caller too, for fair shares of the budget it
	// keeps.
	Identity func(ctx context.Context) string
	// OnWait, when set, is told of every request that had to wait for its
	// turn; OnRequest of every attempt sent, with its HTTP status (0 when
	// none came) and how long the answer took to start. They are for
	// metrics and must return quickly.
	OnWait    func(WaitInfo)
	OnRequest func(RequestInfo)
	// SODA3PageSize is the most rows a SODA3 request asks for (default
	// DefaultSODA3PageSize): a query whose LIMIT is larger is read as
	// several pages of the same request body.
	SODA3PageSize int64
}

// RequestInfo describes one attempt of a request, for Options.OnRequest.
type RequestInfo struct {
	Domain   string
	Endpoint string // "catalog", "views", "resource" or "query"
	Status   int    // 0 when no answer came
	Took     time.Duration
}

// Client talks to one Socrata portal. It is safe for concurrent use.
type Client struct {
	domain, base, discovery string
	token, userAgent        string
	http                    *http.Client
	maxRetries              int
	maxRetryWait            time.Duration
	log                     *slog.Logger
	limit                   *limiter // nil: no limits
	onWait                  func(WaitInfo)
	onRequest               func(RequestInfo)

	// soda3Off is set once the portal answered a SODA3 query with 404 or
	// 405 and SODA 2.1 served it: later queries go straight to 2.1.
	soda3Off atomic.Bool
	// soda2Gone is set once SODA 2.1 answered that it is gone: queries
	// go to SODA3 (with a token) from then on, whatever SODA3 answered
	// before.
	soda2Gone atomic.Bool
	// soda3Page is the largest SODA3 page (Options.SODA3PageSize).
	soda3Page int64
	// fieldNames caches, by dataset, the display-name keys some SODA3
	// answers use, mapped to field names (see displayKeys).
	fieldNames fieldNameCache

	// Tests replace these.
	sleep  func(ctx context.Context, d time.Duration) error
	now    func() time.Time
	jitter func(n time.Duration) time.Duration // uniform in [0, n]
}

// NewClient returns a client for the portal opts describes.
func NewClient(opts Options) *Client {
	c := &Client{
		domain:       strings.TrimSpace(opts.Domain),
		base:         strings.TrimRight(opts.BaseURL, "/"),
		discovery:    strings.TrimRight(opts.DiscoveryURL, "/"),
		token:        opts.AppToken,
		userAgent:    opts.UserAgent,
		maxRetries:   opts.MaxRetries,
		maxRetryWait: opts.MaxRetryWait,
		log:          opts.Logger,
		limit:        newLimiter(opts),
		onWait:       opts.OnWait,
		onRequest:    opts.OnRequest,
		soda3Page:    opts.SODA3PageSize,
		sleep:        sleepCtx,
		now:          time.Now,
		jitter:       func(n time.Duration) time.Duration { return rand.N(n + 1) },
	}
	if c.domain == "" {
		c.domain = DefaultDomain
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
	hc := http.Client{Timeout: 30 * time.Second}
	if opts.HTTPClient != nil {
		hc = *opts.HTTPClient
	}
	if opts.Timeout > 0 {
		hc.Timeout = opts.Timeout
	}
	hc.CheckRedirect = noRedirect
	c.http = &hc
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
	if c.soda3Page <= 0 {
		c.soda3Page = DefaultSODA3PageSize
	}
	return c
}

// Domain returns the portal's domain, as the client was made for it.
func (c *Client) Domain() string { return c.domain }

// noRedirect is every HTTP client's CheckRedirect: the answer is the
// redirect itself, for the client to read (see MovedError).
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

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

// retryable reports whether an answer with this status is worth another try:
// rate limiting, gateway trouble, and 202 (Socrata still processing). 425
// is how data.sf.gov answers bursts ("DataSF answers empty-body HTTP 425
// under bursts, even with an app token", evidence burst-425).
func retryable(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusAccepted, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusTooEarly:
		return true
	}
	return false
}

// throttled reports whether err is an anonymous request refused with 403
// "authentication_required": "Anonymous throttling on NYC comes back as 403
// authentication_required, not 429 ... the 403 clears on its own"
// (evidence anon-throttle-403). With a token sent, the 403 is a refusal,
// not a throttle, and is not retried.
func (c *Client) throttled(err error) bool {
	var api *APIError
	return c.token == "" && errors.As(err, &api) && api.StatusCode == http.StatusForbidden && api.Code == CodeAuthenticationRequired
}

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// send performs one request (a GET, or a POST of a JSON body) with
// retries and returns a successful (2xx, not 202) response, whose body the
// caller must close. Anything else becomes a typed error through toError.
// Every method the client uses is read-only, so a POST is retried like a
// GET. An answer that the portal moved is a *MovedError, not retried.
func (c *Client) send(ctx context.Context, endpoint, method, u string, body []byte) (*http.Response, error) {
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, c.toError(ctx, endpoint, reply{err: err})
		}
		resp, err := c.once(ctx, endpoint, method, u, body, attempt)
		var (
			fail      error
			again     bool
			retryWait time.Duration
		)
		var busy *BusyError
		if errors.As(err, &busy) {
			return nil, busy // not sent: retrying here would only wait longer
		}
		if err != nil {
			fail = c.toError(ctx, endpoint, reply{err: err})
			var te *TimeoutError
			// Transport failures (connection refused or reset) are retried;
			// timeouts and cancellations are not: the caller's time is up.
			again = ctx.Err() == nil && !errors.As(fail, &te) && !errors.Is(fail, context.Canceled)
		} else {
			if resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.StatusCode != http.StatusAccepted {
				return resp, nil
			}
			body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
			resp.Body.Close()
			if rerr != nil && len(body) == 0 && !retryable(resp.StatusCode) {
				fail = c.toError(ctx, endpoint, reply{err: rerr, status: resp.StatusCode})
			} else {
				fail = c.toError(ctx, endpoint, reply{status: resp.StatusCode, header: resp.Header, body: body, url: resp.Request.URL})
			}
			again = retryable(resp.StatusCode) || c.throttled(fail)
			retryWait = retryAfter(resp.Header.Get("Retry-After"), c.now())
		}
		if !again || attempt >= c.maxRetries {
			return nil, fail
		}
		d := retryWait
		if d <= 0 {
			d = c.backoff(attempt)
		}
		if waited+d > c.maxRetryWait {
			c.log.DebugContext(ctx, "socrata: not retrying: the wait would exceed MaxRetryWait",
				"endpoint", endpoint, "attempt", attempt+1, "wait", d, "waited", waited)
			return nil, fail
		}
		c.log.DebugContext(ctx, "socrata: retrying", "endpoint", endpoint, "attempt", attempt+1, "wait", d, "reason", fail.Error())
		if err := c.sleep(ctx, d); err != nil {
			return nil, c.toError(ctx, endpoint, reply{err: err})
		}
		waited += d
	}
}

// once sends one request.
func (c *Client) once(ctx context.Context, endpoint, method, u string, body []byte, attempt int) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if c.token != "" {
		req.Header.Set("X-App-Token", c.token)
	}
	release, err := c.acquire(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if c.onRequest != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		c.onRequest(RequestInfo{Domain: c.domain, Endpoint: endpoint, Status: status, Took: time.Since(start)})
	}
	if err != nil {
		release()
		c.log.DebugContext(ctx, "socrata: request failed", "endpoint", endpoint, "path", req.URL.Path,
			"attempt", attempt+1, "took", time.Since(start), "error", c.redact(stripURL(err).Error()))
		return nil, err
	}
	resp.Body = &releaseOnClose{ReadCloser: resp.Body, release: release}
	c.log.DebugContext(ctx, "socrata: request", "endpoint", endpoint, "path", req.URL.Path,
		"attempt", attempt+1, "status", resp.StatusCode, "took", time.Since(start))
	return resp, nil
}

// backoff returns the wait before retry attempt+1: exponential from 250ms,
// at most 8s, with jitter over its upper half.
func (c *Client) backoff(attempt int) time.Duration {
	d := min(250*time.Millisecond<<min(attempt, 6), 8*time.Second)
	return d/2 + c.jitter(d/2)
}

// retryAfter parses a Retry-After header: delay seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(secs, 0)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// maxJSONBody bounds a Discovery or Views document.
const maxJSONBody = 64 << 20

// getJSON GETs u and decodes the JSON object it answers into v. An error
// envelope or an HTML page served with 200 is an error too.
func (c *Client) getJSON(ctx context.Context, endpoint, u string, v any) error {
	resp, err := c.send(ctx, endpoint, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJSONBody))
	if err != nil {
		return c.toError(ctx, endpoint, reply{err: err, status: resp.StatusCode})
	}
	r := reply{status: resp.StatusCode, header: resp.Header, body: body}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' || isHTML(resp.Header, trimmed) {
		return c.toError(ctx, endpoint, r)
	}
	var probe struct {
		Error     any    `json:"error"`
		ErrorCode string `json:"errorCode"`
	}
	if err := json.Unmarshal(trimmed, &probe); err != nil {
		return c.toError(ctx, endpoint, reply{err: err, status: resp.StatusCode})
	}
	if probe.Error == true || probe.ErrorCode != "" {
		return c.toError(ctx, endpoint, r)
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		return c.toError(ctx, endpoint, reply{err: err, status: resp.StatusCode})
	}
	return nil
}

// validID checks a dataset identifier before it goes into a URL path.
func validID(datasetID string) error {
	if datasetID == "" {
		return errors.New(`socrata: datasetID is empty; want a dataset identifier such as "rqzj-sfat"`)
	}
	if len(datasetID) > 64 {
		return fmt.Errorf("socrata: datasetID is %d characters long; want a dataset identifier such as \"rqzj-sfat\"", len(datasetID))
	}
	for _, r := range datasetID {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("socrata: datasetID %q has the character %q; want a dataset identifier such as \"rqzj-sfat\"", datasetID, r)
		}
	}
	return nil
}

func (c *Client) resourceURL(datasetID, soql string) string {
	return c.base + "/resource/" + url.PathEscape(datasetID) + ".json?" + url.Values{"$query": {soql}}.Encode()
}
