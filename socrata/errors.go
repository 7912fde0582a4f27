package socrata

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// ErrNotFound is matched (with errors.Is) by errors for a dataset or
// resource the portal does not have: HTTP 404 or Socrata's "dataset.missing"
// code. The error itself is an *APIError with the details.
var ErrNotFound = errors.New("socrata: not found")

// APIError is an answer from the portal that the client cannot use: an error
// status, an error envelope where data was expected, an HTML page where JSON
// was expected, or a body cut off or not valid JSON. Socrata's own code and
// message are kept when it gave them; both of its error envelopes are
// understood: {"code","error","message","data"} and {"errorCode","message","data"}.
type APIError struct {
	Endpoint   string         // "catalog", "views", "resource" (SODA 2.1) or "query" (SODA3)
	StatusCode int            // HTTP status (200 for an error envelope or a broken body served with 200)
	Code       string         // Socrata's errorCode or code, e.g. "query.soql.no-such-column", "query.compiler.malformed"; or one of ours: "html_response", "empty_response", "redirect", "invalid_response", "truncated_response", "still_processing"
	Message    string         // Socrata's message, or ours when it gave none
	Data       map[string]any // Socrata's data object (column, position, …), when given
	RequestID  string         // X-Socrata-RequestId, when present
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "socrata: %s API answered HTTP %d", e.Endpoint, e.StatusCode)
	if e.Code != "" {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotFound) true for a missing dataset or resource.
func (e *APIError) Is(target error) bool {
	if target != ErrNotFound {
		return false
	}
	switch e.Code {
	case "dataset.missing", "query.dataset.does-not-exist":
		return true
	case "html_response", "empty_response", "redirect", "invalid_response", "truncated_response":
		return false
	}
	return e.StatusCode == http.StatusNotFound
}

// CodeAuthenticationRequired is Socrata's code for a request that needs
// an app token: an anonymous 403 with it is how some portals throttle
// (evidence anon-throttle-403, soda3-token-required); an app token lifts it.
const CodeAuthenticationRequired = "authentication_required"

// RateLimitError is a 429, or a 425 (Too Early, data.sf.gov's answer to
// bursts), that the retries did not get past.
type RateLimitError struct {
	Endpoint   string
	StatusCode int           // 429 or 425
	RetryAfter time.Duration // from Retry-After (seconds or an HTTP date); zero when not given
	Message    string        // Socrata's message, when given
}

func (e *RateLimitError) Error() string {
	status := cmp.Or(e.StatusCode, http.StatusTooManyRequests)
	msg := fmt.Sprintf("socrata: %s API answered HTTP %d (rate limited)", e.Endpoint, status)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf("; retry after %s", e.RetryAfter)
	}
	return msg
}

// TimeoutError is a request that did not finish in time: the context's
// deadline passed or the HTTP client timed out.
type TimeoutError struct {
	Endpoint string
	Err      error
}

func (e *TimeoutError) Error() string {
	return "socrata: " + e.Endpoint + " API did not answer in time: " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Timeout reports true, like net.Error.
func (e *TimeoutError) Timeout() bool { return true }

// reply is everything known about one attempt: the transport error, or the
// status, headers and (a bounded prefix of) the body.
type reply struct {
	err    error
	status int
	header http.Header
	body   []byte
	url    *url.URL // the request's, when known
}

// envelope holds both of Socrata's error envelopes.
type envelope struct {
	Code      string         `json:"code"`
	ErrorCode string         `json:"errorCode"`
	Error     any            `json:"error"`
	Message   string         `json:"message"`
	Data      map[string]any `json:"data"`
}

// coordinatorCode finds the code in messages like
// "Query coordinator error: query.soql.no-such-column; No such column: x".
var coordinatorCode = regexp.MustCompile(`error: ([a-z]+(?:\.[a-z0-9-]+)+);`)

// toError is the one place where an answer the client cannot use becomes a
// typed error: transport failures and timeouts, non-2xx statuses, error
// envelopes served with 200, HTML where JSON was expected, and bodies that are
// not JSON or end early. The app token is removed from every text it returns.
func (c *Client) toError(ctx context.Context, endpoint string, r reply) error {
	if r.err != nil {
		err := stripURL(r.err)
		switch {
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(context.Cause(ctx), context.DeadlineExceeded) || isNetTimeout(err):
			return &TimeoutError{Endpoint: endpoint, Err: c.redactErr(err)}
		case errors.Is(err, context.Canceled):
			return fmt.Errorf("socrata: %s API request canceled: %w", endpoint, context.Canceled)
		case r.status != 0 && isInvalidJSON(err):
			return &APIError{Endpoint: endpoint, StatusCode: r.status, Code: "invalid_response",
				Message: c.redact("the response is not the JSON expected: " + err.Error())}
		case r.status != 0:
			msg := "the response ended before it was complete (the connection was cut); retry the request"
			if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
				msg += " (" + err.Error() + ")"
			}
			return &APIError{Endpoint: endpoint, StatusCode: r.status, Code: "truncated_response", Message: c.redact(msg)}
		}
		return fmt.Errorf("socrata: %s API request failed: %w", endpoint, c.redactErr(err))
	}

	e := &APIError{Endpoint: endpoint, StatusCode: r.status, RequestID: r.header.Get("X-Socrata-RequestId")}
	// Redact before anything is parsed or clipped: a token cut in two by
	// clip would no longer match the redaction.
	trimmed := bytes.TrimSpace(c.redactBytes(r.body))
	if r.url != nil {
		if to, ok := movedTo(c.domain, r.url, r.status, r.header); ok {
			return &MovedError{Endpoint: endpoint, Domain: c.domain, To: to, StatusCode: r.status}
		}
	}
	// The old host of a known move refuses queries with an nginx 403
	// page: "data.sfgov.org answers 403 to any request whose query
	// contains $select=" (evidence moves-select-403; "the legacy nginx
	// 403", evidence moves-ordered-count-403, moves-nginx-403).
	if to := KnownMove(c.domain); to != "" && r.status == http.StatusForbidden && isHTML(r.header, trimmed) {
		return &MovedError{Endpoint: endpoint, Domain: c.domain, To: to, StatusCode: r.status}
	}
	switch {
	case r.status >= 300 && r.status < 400:
		e.Code = "redirect"
		e.Message = fmt.Sprintf("the portal answered HTTP %d, a redirect", r.status)
		if loc := r.header.Get("Location"); loc != "" {
			e.Message += " to " + clip(stripQuery(loc), 200)
		}
		e.Message += ", not Socrata's API; only a move to the same API on another host is followed"
	case isHTML(r.header, trimmed):
		// Gateways answer with pages: nginx, a CDN, FortiWeb's "Web Page
		// Blocked!" (evidence gateway-403-fortiweb), a meta redirect
		// (evidence moves-meta-redirect-html), a login page.
		e.Code = "html_response"
		e.Message = fmt.Sprintf("the portal answered HTTP %d with an HTML page, not Socrata's API", r.status)
		if t := htmlTitle(trimmed); t != "" {
			e.Message += fmt.Sprintf(" (%q)", t)
		}
		e.Message += "; a gateway, proxy or login page answered instead of the portal's API, or the portal moved or is down: check the domain"
	case len(trimmed) == 0 && r.status >= 400:
		e.Code = "empty_response"
		e.Message = fmt.Sprintf("the portal answered HTTP %d (%s) with an empty body, not Socrata's API: a gateway in front of it refused the request", r.status, http.StatusText(r.status))
	case len(trimmed) > 0 && trimmed[0] == '{':
		var env envelope
		if err := json.Unmarshal(trimmed, &env); err == nil {
			e.Code = env.ErrorCode
			if e.Code == "" {
				e.Code = env.Code
			}
			e.Message = env.Message
			if s, ok := env.Error.(string); ok && e.Message == "" {
				e.Message = s // the Discovery API's {"error": "…"}
			}
			e.Data = env.Data
		} else {
			e.Message = clip(string(trimmed), 300)
		}
		if e.Code == "" {
			if m := coordinatorCode.FindStringSubmatch(e.Message); m != nil {
				e.Code = m[1]
			}
		}
	case len(trimmed) > 0:
		e.Message = clip(string(trimmed), 300)
	}
	if r.status >= 200 && r.status < 300 && r.status != http.StatusAccepted && e.Code == "" {
		// A success status whose body is not what was expected.
		e.Code = "invalid_response"
		if e.Message == "" {
			e.Message = "the response body is empty"
		}
	}
	e.Message = c.redact(e.Message)
	e.Data = c.redactData(e.Data)

	switch r.status {
	case http.StatusTooManyRequests, http.StatusTooEarly:
		msg := e.Message
		if e.Code == "empty_response" {
			msg = ""
		}
		return &RateLimitError{Endpoint: endpoint, StatusCode: r.status, RetryAfter: retryAfter(r.header.Get("Retry-After"), c.now()), Message: msg}
	case http.StatusAccepted:
		e.Code = "still_processing"
		e.Message = "the portal is still processing the query (HTTP 202); try again shortly"
	}
	if e.Message == "" {
		e.Message = http.StatusText(r.status)
		if e.Message == "" {
			e.Message = "no message"
		}
	}
	return e
}

// shapeError is a body that is JSON but not the expected shape.
type shapeError struct{ msg string }

func (e *shapeError) Error() string { return e.msg }

func isInvalidJSON(err error) bool {
	var (
		syn   *json.SyntaxError
		typ   *json.UnmarshalTypeError
		shape *shapeError
	)
	return errors.As(err, &syn) || errors.As(err, &typ) || errors.As(err, &shape)
}

func isHTML(h http.Header, body []byte) bool {
	if strings.Contains(strings.ToLower(h.Get("Content-Type")), "text/html") {
		return true
	}
	return len(body) > 0 && body[0] == '<'
}

var titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

func htmlTitle(body []byte) string {
	m := titleRE.FindSubmatch(body)
	if m == nil {
		return ""
	}
	return clip(strings.Join(strings.Fields(html.UnescapeString(string(m[1]))), " "), 120)
}

func isNetTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// stripURL removes the request URL from transport errors: it carries the
// whole query, which is noise in an error read by a person or a model.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &strippedURLError{op: strings.ToLower(ue.Op), err: ue.Err}
	}
	return err
}

type strippedURLError struct {
	op  string
	err error
}

func (e *strippedURLError) Error() string { return e.op + ": " + e.err.Error() }
func (e *strippedURLError) Unwrap() error { return e.err }
func (e *strippedURLError) Timeout() bool { return isNetTimeout(e.err) }

// stripQuery drops the query of a URL: it repeats ours.
func stripQuery(u string) string {
	before, _, _ := strings.Cut(u, "?")
	return before
}

// redact removes the app token from a text.
func (c *Client) redact(s string) string {
	if c.token == "" || !strings.Contains(s, c.token) {
		return s
	}
	return strings.ReplaceAll(s, c.token, "[redacted]")
}

// redactBytes removes the app token from a body.
func (c *Client) redactBytes(b []byte) []byte {
	if c.token == "" || !bytes.Contains(b, []byte(c.token)) {
		return b
	}
	return bytes.ReplaceAll(b, []byte(c.token), []byte("[redacted]"))
}

// redactErr keeps err (for errors.Is/As) unless its text holds the token.
func (c *Client) redactErr(err error) error {
	if c.token == "" || !strings.Contains(err.Error(), c.token) {
		return err
	}
	return &redactedError{msg: c.redact(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func (c *Client) redactData(m map[string]any) map[string]any {
	if c.token == "" || m == nil {
		return m
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			return c.redact(v)
		case map[string]any:
			for k, x := range v {
				v[k] = walk(x)
			}
		case []any:
			for i, x := range v {
				v[i] = walk(x)
			}
		}
		return v
	}
	walk(m)
	return m
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
