package datasf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
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
	)
	switch {
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
		return toolError{
			Error:     fmt.Sprintf("The portal is rate limiting requests. Wait %d seconds and try again.", secs),
			ErrorType: errRateLimit,
			Details:   map[string]any{"retry_after_seconds": secs},
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
		if strings.HasPrefix(api.Code, "query.") {
			msg += ". Fix the SoQL and try again; get_schema lists the real column names."
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
