package socrata

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ErrNotFound is matched (with errors.Is) by errors for a dataset or
// resource the portal does not have: HTTP 404 or Socrata's
// "dataset.missing"/"not_found" codes.
var ErrNotFound = errors.New("socrata: not found")

// APIError is an error answer from the portal, with Socrata's own code and
// message when it gave them (both of its error envelopes are understood).
type APIError struct {
	Endpoint   string         // "resource", "views" or "catalog"
	StatusCode int            // HTTP status
	Code       string         // e.g. "query.soql.no-such-column", "query.compiler.malformed", "html_response"
	Message    string         // Socrata's message, or ours when it gave none
	Data       map[string]any // Socrata's data object (column, position, …)
	RequestID  string         // X-Socrata-RequestId, when present
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "socrata: %s: HTTP %d", e.Endpoint, e.StatusCode)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotFound) true for missing datasets.
func (e *APIError) Is(target error) bool {
	if target != ErrNotFound {
		return false
	}
	switch e.Code {
	case "dataset.missing", "not_found", "query.dataset.does-not-exist":
		return true
	}
	return e.StatusCode == http.StatusNotFound && e.Code != "html_response"
}

// RateLimitError is a 429 answer that retries did not get past.
type RateLimitError struct {
	Endpoint   string
	RetryAfter time.Duration // from Retry-After; zero when not given
	Message    string
}

func (e *RateLimitError) Error() string {
	msg := "socrata: " + e.Endpoint + ": rate limited (HTTP 429)"
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf("; retry after %s", e.RetryAfter)
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// TimeoutError is a request that did not finish in time.
type TimeoutError struct {
	Endpoint string
	Err      error
}

func (e *TimeoutError) Error() string {
	return "socrata: " + e.Endpoint + ": timed out: " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Timeout reports true, like net.Error.
func (e *TimeoutError) Timeout() bool { return true }

// envelope holds both of Socrata's error envelopes:
// {"code","error","message","data"} and {"errorCode","message","data"}.
type envelope struct {
	Code      string         `json:"code"`
	ErrorCode string         `json:"errorCode"`
	Message   string         `json:"message"`
	Data      map[string]any `json:"data"`
}

// errorFromResponse is the one place where non-success answers become typed
// errors. It reads (a bounded part of) the body and closes it.
func errorFromResponse(endpoint string, resp *http.Response) error {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	e := &APIError{Endpoint: endpoint, StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Socrata-RequestId")}
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	trimmed := strings.TrimSpace(string(body))
	switch {
	case strings.Contains(ct, "text/html") || strings.HasPrefix(strings.ToLower(trimmed), "<!doctype") || strings.HasPrefix(strings.ToLower(trimmed), "<html"):
		e.Code = "html_response"
		e.Message = fmt.Sprintf("the portal answered HTTP %d with an HTML page instead of JSON", resp.StatusCode)
	default:
		var env envelope
		if err := json.Unmarshal(body, &env); err == nil {
			e.Code = env.ErrorCode
			if e.Code == "" {
				e.Code = env.Code
			}
			e.Message = env.Message
			e.Data = env.Data
		} else if trimmed != "" {
			e.Message = clip(trimmed, 300)
		}
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return &RateLimitError{Endpoint: endpoint, RetryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now()), Message: e.Message}
	}
	if resp.StatusCode == http.StatusAccepted {
		e.Code = "still_processing"
		e.Message = "the portal is still processing the query; try again shortly"
	}
	return e
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
