package datasf

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Error types reported to the model in the error_type field.
const (
	errValidation = "validation"
	errNotFound   = "not_found"
	errRateLimit  = "rate_limit"
	errTimeout    = "timeout"
	errAPI        = "api_error"
)

// toolError is the body of every isError tool result. It is sent as the text
// content (not as structuredContent, which clients validate against the
// tool's output schema). Its words for the model are in Error, once.
type toolError struct {
	Error     string         `json:"error"`
	ErrorType string         `json:"error_type"`
	Code      string         `json:"code"`
	Details   map[string]any `json:"details,omitempty"`
}

// defaultCodes are the machine-readable codes of each error type when no
// more precise one is known.
var defaultCodes = map[string]string{
	errValidation: "invalid_argument",
	errNotFound:   "dataset_not_found",
	errRateLimit:  "rate_limited",
	errTimeout:    "upstream_timeout",
	errAPI:        "upstream_error",
}

// result renders the error as an isError tool result.
func (e toolError) result() *mcp.CallToolResult {
	if e.Code == "" {
		e.Code = defaultCodes[e.ErrorType]
	}
	b, err := json.Marshal(e)
	if err != nil { // cannot happen for these types; keep the message anyway
		b = []byte(fmt.Sprintf(`{"error":%q,"error_type":%q}`, e.Error, e.ErrorType))
	}
	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(string(b))},
		IsError: true,
	}
}

func validationError(msg string, details map[string]any) *mcp.CallToolResult {
	return toolError{Error: msg, ErrorType: errValidation, Details: details}.result()
}

// upstreamError translates an error from the Socrata client into a result the
// model can act on. what names the operation ("dataset rqzj-sfat", "search").
func upstreamError(err error, what string, hint string) *mcp.CallToolResult {
	var (
		rl   *socrata.RateLimitError
		busy *socrata.BusyError
		to   *socrata.TimeoutError
		api  *socrata.APIError
		de   *socrata.DomainError
		mv   *socrata.MovedError
	)
	switch {
	case errors.As(err, &mv):
		return movedError(mv, what)
	case errors.As(err, &de):
		return domainRefused(de)
	case errors.Is(err, socrata.ErrNonPublicAddress):
		return toolError{Error: "The portal's name resolves to an address that is not public; it is refused. Give a public portal's host name.",
			ErrorType: errValidation, Code: codeDomainRefused}.result()
	case errors.Is(err, socrata.ErrNotFound):
		msg := what + " was not found on the portal."
		if hint != "" {
			msg += " " + hint
		}
		return toolError{Error: msg, ErrorType: errNotFound}.result()
	case errors.As(err, &busy):
		secs := max(int(math.Ceil(busy.After.Seconds())), 1)
		return toolError{
			Error: fmt.Sprintf("This server is at its limit of requests to the portal (other calls are waiting); nothing was sent for %s. Wait %d seconds and try again, or make fewer calls at once.",
				what, secs),
			ErrorType: errRateLimit,
			Code:      "upstream_busy",
			Details:   map[string]any{"retry_after_seconds": secs},
		}.result()
	case errors.As(err, &rl):
		secs := int(math.Ceil(rl.RetryAfter.Seconds()))
		if secs < 1 {
			secs = 1
		}
		msg := fmt.Sprintf("The portal is rate limiting requests. Wait %d seconds and try again.", secs)
		if rl.StatusCode == http.StatusTooEarly {
			// data.sf.gov's CDN answers bursts with an empty 425, token
			// or not (find_string ids 68959116828, 68284003677).
			msg = fmt.Sprintf("The portal refused a burst of requests (HTTP 425 Too Early, from the network in front of it) for %s, and kept refusing after this server's retries. Wait %d seconds and try again, with fewer calls at once.", what, secs)
		}
		return toolError{
			Error:     msg,
			ErrorType: errRateLimit,
			Details:   map[string]any{"retry_after_seconds": secs, "status": cmp.Or(rl.StatusCode, http.StatusTooManyRequests)},
		}.result()
	case errors.As(err, &api) && api.Code == socrata.CodeAuthenticationRequired:
		// Anonymous throttling: "Anonymous throttling on NYC comes back as
		// 403 authentication_required, not 429" (find_string id
		// 67605731364); an app token lifts it.
		return toolError{
			Error: "The portal refused the request for " + what + " without an app token (HTTP 403 authentication_required: " + api.Message +
				"). It throttles anonymous requests: wait a minute and try again; an app token lifts the throttle (the server's operator sets SOCRATA_APP_TOKEN, or DATASF_APP_TOKENS for other portals).",
			ErrorType: errRateLimit, Code: api.Code,
			Details: map[string]any{"status": api.StatusCode, "code": api.Code, "socrata_message": api.Message},
		}.result()
	case errors.As(err, &to), errors.Is(err, context.DeadlineExceeded):
		return toolError{
			Error:     "The portal did not answer in time for " + what + ". Try again, or narrow the query (add a WHERE clause or a LIMIT).",
			ErrorType: errTimeout,
		}.result()
	case errors.As(err, &api):
		details := map[string]any{"status": api.StatusCode}
		if api.Code != "" {
			details["code"] = api.Code
		}
		if api.Message != "" {
			details["socrata_message"] = api.Message
		}
		msg := "The portal rejected the request for " + what
		if api.StatusCode < 400 {
			msg = "The portal's answer for " + what + " could not be used"
		}
		if api.Message != "" {
			msg += ": " + api.Message
		} else {
			msg += fmt.Sprintf(" (HTTP %d)", api.StatusCode)
		}
		switch {
		case strings.HasPrefix(api.Code, "query."):
			msg += ". Fix the SoQL and try again; get_schema lists the real column names."
		case api.Code == "html_response" || api.Code == "empty_response" || api.Code == "redirect":
			// Not Socrata's answer: nothing the model can change; the
			// user can run the checks.
			msg += ". This is not a problem with the query or a token: tell the user, who can run `datasf-mcp doctor` to check the portal."
		}
		return toolError{Error: msg, ErrorType: errAPI, Code: api.Code, Details: details}.result()
	default:
		if host, reason, ok := unreachable(err); ok {
			return toolError{
				Error: fmt.Sprintf("Could not reach the portal at %s for %s: %s. The server has no network path to the portal; "+
					"tell the user, who can check the connection (or the portal domain) or run the server offline.", host, what, reason),
				ErrorType: errAPI,
				Code:      CodeUnreachable,
				Details:   map[string]any{"host": host},
			}.result()
		}
		return toolError{Error: "The request for " + what + " failed: " + err.Error(), ErrorType: errAPI}.result()
	}
}

// CodeMoved is the code of a tool error for a portal that moved to a host
// this server does not follow it to, or whose old address refused a query.
const CodeMoved = "portal_moved"

// movedError answers a portal that moved and was not followed.
func movedError(mv *socrata.MovedError, what string) *mcp.CallToolResult {
	details := map[string]any{"domain": mv.Domain, "moved_to": mv.To, "status": mv.StatusCode}
	var de *socrata.DomainError
	switch {
	case errors.As(mv.Refused, &de):
		details["reason"] = de.Reason
		return toolError{Error: fmt.Sprintf("The portal %s has moved to %s, which this server refuses (%s), so %s could not be read. Tell the user; the server's operator can allow %s (DATASF_DOMAINS).",
			mv.Domain, mv.To, de.Reason, what, mv.To), ErrorType: errValidation, Code: CodeMoved, Details: details}.result()
	case mv.Refused != nil:
		return toolError{Error: fmt.Sprintf("The portal %s has moved to %s, which could not be used for %s: %v.",
			mv.Domain, mv.To, what, mv.Refused), ErrorType: errAPI, Code: CodeMoved, Details: details}.result()
	case mv.StatusCode == http.StatusForbidden:
		return toolError{Error: fmt.Sprintf("The old address of this portal (%s) refused the query for %s (HTTP 403, an HTML page, not a credentials problem): it has moved to %s. Call again with domain %q.",
			mv.Domain, what, mv.To, mv.To), ErrorType: errAPI, Code: CodeMoved, Details: details}.result()
	}
	return toolError{Error: fmt.Sprintf("The portal %s has moved to %s (HTTP %d) for %s. Call again with domain %q.",
		mv.Domain, mv.To, mv.StatusCode, what, mv.To), ErrorType: errAPI, Code: CodeMoved, Details: details}.result()
}

// restErrorText says why a stored query failed, for the caller of the REST
// API (dualresp.Options.ErrorText), from the error's type: the portal's own
// message when it refused the query, else "" (dualresp then says only that
// the query failed, or that it ran out of time).
func restErrorText(err error) string {
	var (
		api *socrata.APIError
		to  *socrata.TimeoutError
		rl  *socrata.RateLimitError
	)
	switch {
	case errors.Is(err, socrata.ErrNotFound):
		return "the dataset was not found on the portal"
	case errors.As(err, &rl):
		return "the portal is rate limiting requests; try again later"
	case errors.As(err, &to):
		return "the data source did not answer in time; try again"
	case errors.As(err, &api) && api.Message != "":
		return "the portal refused the query: " + api.Message
	case errors.As(err, &api):
		return fmt.Sprintf("the portal answered HTTP %d", api.StatusCode)
	}
	return ""
}

// codeDomainRefused is the code of a tool error for a domain argument that
// is not a public portal's host name, or not allowed here.
const codeDomainRefused = "domain_refused"

// domainRefused answers a refused domain argument.
func domainRefused(de *socrata.DomainError) *mcp.CallToolResult {
	msg := strings.TrimPrefix(de.Error(), "socrata: ")
	return toolError{Error: msg + ". list_datasf with domain \"*\" lists portals.", ErrorType: errValidation, Code: codeDomainRefused,
		Details: map[string]any{"field": "domain", "reason": de.Reason}}.result()
}

// CodeUnreachable is the code of a tool error whose portal cannot be
// reached at all: its name does not resolve or the connection fails. The
// command line suggests --offline for it.
const CodeUnreachable = "portal_unreachable"

// unreachable reports whether err is a failure to reach the portal's host
// (a DNS lookup or a dial that failed), with the host and why.
func unreachable(err error) (host, reason string, ok bool) {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsNotFound {
			return dns.Name, "its name does not resolve (" + dns.Err + ")", true
		}
		return dns.Name, "its name could not be looked up (" + dns.Err + ")", true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && op.Addr != nil && op.Err != nil {
		return op.Addr.String(), strings.TrimPrefix(op.Err.Error(), "connect: "), true
	}
	return "", "", false
}

// maxLoggedQuery is the most characters of a query (SoQL or SQL) a log
// line carries; a longer one is cut.
const maxLoggedQuery = 2000
