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

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/validate"
)

// Error types reported to the model in the error_type field.
const (
	errValidation = "validation"
	errNotFound   = "not_found"
	errRateLimit  = "rate_limit"
	errTimeout    = "timeout"
	errAPI        = "api_error"
)

// toolError is a tool call that failed, as the model is told: the reason
// and the next step apart, so that other front ends (the command line) can
// say the reason and a next step of their own. Handlers return it, or an
// *opError, as their error; the adapter (newTool) renders it once, as the
// JSON text of an isError result (errorBody).
type toolError struct {
	Type string // error_type: errValidation, errNotFound, ...
	Code string // the machine-readable code; "" means the type's default
	// Reason says what went wrong; Next what the model does about it, in
	// the model's terms (tools and arguments), "" when the reason says it.
	Reason, Next string
	Details      map[string]any
}

// Error is the model's words: the reason, then the next step.
func (e *toolError) Error() string {
	if e.Next == "" {
		return e.Reason
	}
	return e.Reason + " " + e.Next
}

// errorBody is the text of every isError tool result. It is sent as the
// text content (not as structuredContent, which clients validate against
// the tool's output schema). Error has the model's words, once. Next
// repeats the last words of Error that are the next step, only for a
// caller that asks for it (MetaNextStep), so that a front end can show the
// reason alone and a next step of its own; a model is not sent it (it
// would cost 9 to 24 tokens an error).
type errorBody struct {
	Error     string         `json:"error"`
	ErrorType string         `json:"error_type"`
	Code      string         `json:"code"`
	Next      string         `json:"next,omitempty"`
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

// MetaNextStep is the _meta field of a tools/call request that asks for
// the next step apart. In an isError answer, the error JSON's next field
// repeats the part of its error that tells the model what to do next
// ("Call get_schema for the full list."). A successful answer leaves its
// next step out of its summary and names it by a code (NextSchema, ...)
// under the same key of the result's _meta. The command line sets it to
// true and says a next step of its own instead. A call without it gets
// the model's words whole.
const MetaNextStep = "datasf-mcp/next"

// MetaWhole is the _meta field of a tools/call request that asks for the
// answer whole: never replaced by a preview and a link (spill.Options),
// however large. The command line sets it to true: a person asked for
// those 100 datasets, and the link would die with the process. Answers
// are bounded by the tools' own limits either way.
const MetaWhole = "datasf-mcp/whole"

// wantsWhole reports whether req asks for the answer whole.
func wantsWhole(req mcp.CallToolRequest) bool {
	if req.Params.Meta == nil {
		return false
	}
	want, _ := req.Params.Meta.AdditionalFields[MetaWhole].(bool)
	return want
}

// wantsNextStep reports whether req asks for the next step apart.
func wantsNextStep(req mcp.CallToolRequest) bool {
	if req.Params.Meta == nil {
		return false
	}
	want, _ := req.Params.Meta.AdditionalFields[MetaNextStep].(bool)
	return want
}

// result renders the error as an isError tool result, with its next step
// apart when withNext.
func (e *toolError) result(withNext bool) *mcp.CallToolResult {
	body := errorBody{Error: e.Error(), ErrorType: e.Type, Code: cmp.Or(e.Code, defaultCodes[e.Type]), Details: e.Details}
	if withNext {
		body.Next = e.Next
	}
	b, err := json.Marshal(body)
	if err != nil { // cannot happen for these types; keep the message anyway
		b = []byte(fmt.Sprintf(`{"error":%q,"error_type":%q}`, body.Error, body.ErrorType))
	}
	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(string(b))},
		IsError: true,
	}
}

// opError is an upstream failure of what a handler was doing: what names
// it ("dataset wg3w-h783", "the catalog search"), hint is the next step
// when the dataset is not found ("Check the id with search_datasf.").
// The adapter translates it (upstream) from the error types of package
// socrata.
type opError struct {
	what, hint string
	err        error
}

func (e *opError) Error() string { return e.what + ": " + e.err.Error() }
func (e *opError) Unwrap() error { return e.err }

// errorResult renders a handler's or the argument check's error as the
// isError result the model reads; with next, the next step is also sent
// apart (the command line asks for it, see MetaNextStep).
func errorResult(err error, next bool) *mcp.CallToolResult { return toolErrorOf(err).result(next) }

// toolErrorOf is a handler's or the argument check's error as the model is
// told it: a *toolError as it is, an *opError translated from socrata's
// error types (upstream), refused arguments as validation errors.
func toolErrorOf(err error) *toolError {
	var (
		te   *toolError
		op   *opError
		aerr *argumentError
		verr *validate.Error
	)
	switch {
	case errors.As(err, &te):
		return te
	case errors.As(err, &aerr) && aerr.field != "":
		return validationError(aerr.msg, map[string]any{"field": aerr.field})
	case errors.As(err, &verr):
		fields := make([]string, 0, len(verr.Fields))
		for _, f := range verr.Fields {
			fields = append(fields, f.Field)
		}
		return validationError(err.Error(), map[string]any{"fields": fields})
	case errors.As(err, &aerr):
		return validationError(aerr.msg, nil)
	case errors.As(err, &op):
		return upstream(op.err, op.what, op.hint)
	}
	return upstream(err, "the call", "")
}

func validationError(msg string, details map[string]any) *toolError {
	return &toolError{Reason: msg, Type: errValidation, Details: details}
}

// upstream translates an error from the Socrata client into what the
// model can act on. what names the operation ("dataset rqzj-sfat",
// "search"), hint is the next step when it is not found.
func upstream(err error, what string, hint string) *toolError {
	var (
		tok  *socrata.TokenRequiredError
		rl   *socrata.RateLimitError
		busy *socrata.BusyError
		to   *socrata.TimeoutError
		api  *socrata.APIError
		de   *socrata.DomainError
		mv   *socrata.MovedError
	)
	switch {
	case errors.As(err, &tok):
		// SODA 2.1 answered that it is gone, and SODA3 needs a token.
		return &toolError{
			Reason: fmt.Sprintf("The portal %s no longer answers queries without an app token, so %s could not be read (SODA 2.1 answered HTTP %d: %s).",
				tok.Domain, what, tok.Err.StatusCode, tok.Err.Message),
			Next: fmt.Sprintf("Tell the user: its SODA3 API needs a free Socrata app token, created at %s and set by the server's operator as SOCRATA_APP_TOKEN (DATASF_APP_TOKENS for other portals).",
				socrata.AppTokenURL(tok.Domain)),
			Type: errAPI, Code: CodeAppTokenRequired,
			Details: map[string]any{"status": tok.Err.StatusCode, "socrata_message": tok.Err.Message, "app_token_url": socrata.AppTokenURL(tok.Domain)},
		}
	case errors.As(err, &mv):
		return movedError(mv, what)
	case errors.As(err, &de):
		return domainRefused(de)
	case errors.Is(err, socrata.ErrNonPublicAddress):
		return &toolError{Reason: "The portal's name resolves to an address that is not public; it is refused.", Next: "Give a public portal's host name.",
			Type: errValidation, Code: codeDomainRefused}
	case errors.Is(err, socrata.ErrNotFound):
		return &toolError{Reason: what + " was not found on the portal.", Next: hint, Type: errNotFound}
	case errors.As(err, &busy):
		secs := max(int(math.Ceil(busy.After.Seconds())), 1)
		return &toolError{
			Reason:  fmt.Sprintf("This server is at its limit of requests to the portal (other calls are waiting); nothing was sent for %s.", what),
			Next:    fmt.Sprintf("Wait %d seconds and try again, or make fewer calls at once.", secs),
			Type:    errRateLimit,
			Code:    "upstream_busy",
			Details: map[string]any{"retry_after_seconds": secs},
		}
	case errors.As(err, &rl):
		secs := int(math.Ceil(rl.RetryAfter.Seconds()))
		if secs < 1 {
			secs = 1
		}
		reason := "The portal is rate limiting requests."
		next := fmt.Sprintf("Wait %d seconds and try again.", secs)
		if rl.StatusCode == http.StatusTooEarly {
			// data.sf.gov's CDN answers bursts with an empty 425, token
			// or not (evidence burst-425).
			reason = fmt.Sprintf("The portal refused a burst of requests (HTTP 425 Too Early, from the network in front of it) for %s, and kept refusing after this server's retries.", what)
			next = fmt.Sprintf("Wait %d seconds and try again, with fewer calls at once.", secs)
		}
		return &toolError{
			Reason: reason, Next: next,
			Type:    errRateLimit,
			Details: map[string]any{"retry_after_seconds": secs, "status": cmp.Or(rl.StatusCode, http.StatusTooManyRequests)},
		}
	case errors.As(err, &api) && api.Code == socrata.CodeAuthenticationRequired:
		// Anonymous throttling: "Anonymous throttling on NYC comes back as
		// 403 authentication_required, not 429" (evidence
		// anon-throttle-403); an app token lifts it.
		return &toolError{
			Reason: "The portal refused the request for " + what + " without an app token (HTTP 403 authentication_required: " + api.Message + ").",
			Next:   "It throttles anonymous requests: wait a minute and try again; an app token lifts the throttle (the server's operator sets SOCRATA_APP_TOKEN, or DATASF_APP_TOKENS for other portals).",
			Type:   errRateLimit, Code: api.Code,
			Details: map[string]any{"status": api.StatusCode, "code": api.Code, "socrata_message": api.Message},
		}
	case errors.As(err, &to), errors.Is(err, context.DeadlineExceeded):
		return &toolError{
			Reason: "The portal did not answer in time for " + what + ".",
			Next:   "Try again, or narrow the query (add a WHERE clause or a LIMIT).",
			Type:   errTimeout,
		}
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
		// The portal's own message ends the answer as Socrata wrote it;
		// a sentence of ours follows it after a full stop.
		next := ""
		switch {
		case strings.HasPrefix(api.Code, "query."):
			next = "Fix the SoQL and try again; get_schema lists the real column names."
		case api.Code == "html_response" || api.Code == "empty_response" || api.Code == "redirect":
			// Not Socrata's answer: nothing the model can change; the
			// user can run the checks.
			next = "This is not a problem with the query or a token: tell the user, who can run `datasf-mcp doctor` to check the portal."
		}
		if next != "" {
			msg += "."
		}
		return &toolError{Reason: msg, Next: next, Type: errAPI, Code: api.Code, Details: details}
	default:
		if host, reason, ok := unreachable(err); ok {
			return &toolError{
				Reason:  fmt.Sprintf("Could not reach the portal at %s for %s: %s.", host, what, reason),
				Next:    "The server has no network path to the portal; tell the user, who can check the connection (or the portal domain) or run the server offline.",
				Type:    errAPI,
				Code:    CodeUnreachable,
				Details: map[string]any{"host": host},
			}
		}
		return &toolError{Reason: "The request for " + what + " failed: " + planError(err).Error(), Type: errAPI}
	}
}

// planError is the error a query's Plan returned, without the
// *dualresp.CountError or *dualresp.QueryError that says which of its
// calls failed: the model is told what was being done by opError.
func planError(err error) error {
	var ce *dualresp.CountError
	var qe *dualresp.QueryError
	switch {
	case errors.As(err, &ce):
		return ce.Err
	case errors.As(err, &qe):
		return qe.Err
	}
	return err
}

// CodeAppTokenRequired is the code of a tool error for a portal that
// serves queries only on SODA3, asked without an app token.
const CodeAppTokenRequired = "app_token_required"

// CodeMoved is the code of a tool error for a portal that moved to a host
// this server does not follow it to, or whose old address refused a query.
const CodeMoved = "portal_moved"

// movedError answers a portal that moved and was not followed.
func movedError(mv *socrata.MovedError, what string) *toolError {
	details := map[string]any{"domain": mv.Domain, "moved_to": mv.To, "status": mv.StatusCode}
	var de *socrata.DomainError
	switch {
	case errors.As(mv.Refused, &de):
		details["reason"] = de.Reason
		return &toolError{Reason: fmt.Sprintf("The portal %s has moved to %s, which this server refuses (%s), so %s could not be read.", mv.Domain, mv.To, de.Reason, what),
			Next: fmt.Sprintf("Tell the user; the server's operator can allow %s (DATASF_DOMAINS).", mv.To),
			Type: errValidation, Code: CodeMoved, Details: details}
	case mv.Refused != nil:
		return &toolError{Reason: fmt.Sprintf("The portal %s has moved to %s, which could not be used for %s: %v.",
			mv.Domain, mv.To, what, mv.Refused), Type: errAPI, Code: CodeMoved, Details: details}
	case mv.StatusCode == http.StatusForbidden:
		return &toolError{Reason: fmt.Sprintf("The old address of this portal (%s) refused the query for %s (HTTP 403, an HTML page, not a credentials problem): it has moved to %s.",
			mv.Domain, what, mv.To), Next: fmt.Sprintf("Call again with domain %q.", mv.To), Type: errAPI, Code: CodeMoved, Details: details}
	}
	return &toolError{Reason: fmt.Sprintf("The portal %s has moved to %s (HTTP %d) for %s.", mv.Domain, mv.To, mv.StatusCode, what),
		Next: fmt.Sprintf("Call again with domain %q.", mv.To), Type: errAPI, Code: CodeMoved, Details: details}
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
func domainRefused(de *socrata.DomainError) *toolError {
	return &toolError{Reason: strings.TrimPrefix(de.Error(), "socrata: ") + ".", Next: "list_datasf with domain \"*\" lists portals.",
		Type: errValidation, Code: codeDomainRefused, Details: map[string]any{"field": "domain", "reason": de.Reason}}
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
