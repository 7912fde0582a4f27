package datasf

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// TestUpstreamErrorUnreachablePortal: a portal that cannot be reached (its
// name does not resolve, or nothing listens) is reported as such, with the
// host, under code portal_unreachable, not as a raw dial error.
func TestUpstreamErrorUnreachablePortal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		err      error
		host     string
		wantText string
	}{
		{
			name:     "dns",
			err:      fmt.Errorf("socrata: views API request failed: get: %w", &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "api.us.socrata.com", IsNotFound: true}}),
			host:     "api.us.socrata.com",
			wantText: "does not resolve",
		},
		{
			name:     "refused",
			err:      fmt.Errorf("socrata: catalog API request failed: get: %w", &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}, Err: fmt.Errorf("connect: connection refused")}),
			host:     "127.0.0.1:9",
			wantText: "connection refused",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := errorResult(&opError{what: "dataset wg3w-h783", err: tc.err}, false)
			var body errorBody
			if err := json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &body); err != nil {
				t.Fatal(err)
			}
			if !res.IsError || body.Code != "portal_unreachable" || body.ErrorType != errAPI || body.Details["host"] != tc.host {
				t.Errorf("errorResult(%v) = code %q, type %q, details %v; want portal_unreachable, api_error, host %s", tc.err, body.Code, body.ErrorType, body.Details, tc.host)
			}
			if !strings.Contains(body.Error, "Could not reach the portal") || !strings.Contains(body.Error, tc.host) || !strings.Contains(body.Error, tc.wantText) {
				t.Errorf("errorResult(%v).error = %q; want it to say the portal at %s could not be reached (%s)", tc.err, body.Error, tc.host, tc.wantText)
			}
		})
	}
}

// The upstream answers of the live portals, as the evidence file
// describes them, reach the model named for what they are: never as a
// token problem unless the portal says the token is invalid.
func TestLivePortalErrorWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		err       error
		errorType string
		words     []string
	}{
		{"old host's 403 (evidence moves-select-403)",
			&socrata.MovedError{Endpoint: "resource", Domain: "data.sfgov.org", To: "data.sf.gov", StatusCode: 403},
			errAPI, []string{"old address of this portal (data.sfgov.org) refused the query", "not a credentials problem", `domain "data.sf.gov"`}},
		{"move refused by the allowlist",
			&socrata.MovedError{Endpoint: "views", Domain: "data.old.example", To: "data.new.example", StatusCode: 301,
				Refused: &socrata.DomainError{Domain: "data.new.example", Reason: "this server serves only data.old.example", NotServed: true}},
			errValidation, []string{"has moved to data.new.example, which this server refuses", "DATASF_DOMAINS"}},
		{"425 burst (evidence burst-425)",
			&socrata.RateLimitError{Endpoint: "resource", StatusCode: 425},
			errRateLimit, []string{"HTTP 425 Too Early", "Wait 1 seconds"}},
		{"anonymous throttle (evidence anon-throttle-403)",
			&socrata.APIError{Endpoint: "resource", StatusCode: 403, Code: "authentication_required", Message: "This request must be authenticated or have an application token"},
			errRateLimit, []string{"without an app token", "an app token lifts the throttle"}},
		{"HTML page", &socrata.APIError{Endpoint: "resource", StatusCode: 403, Code: "html_response",
			Message: `the portal answered HTTP 403 with an HTML page, not Socrata's API ("403 Forbidden")`},
			errAPI, []string{"HTML page, not Socrata's API"}},
		{"coordinator envelope (evidence error-shapes)", &socrata.APIError{Endpoint: "resource", StatusCode: 400, Code: "query.soql.no-such-column",
			Message: "No such column: x", Data: map[string]any{"position": map[string]any{"line": 1, "column": 8}}},
			errAPI, []string{"No such column: x", "query.soql.no-such-column"}},
	}
	for _, tt := range tests {
		res := errorResult(&opError{what: "the query on dataset abcd-1234", err: tt.err}, false)
		text := res.Content[0].(mcp.TextContent).Text
		var body errorBody
		if err := json.Unmarshal([]byte(text), &body); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if body.ErrorType != tt.errorType {
			t.Errorf("%s: error_type %q; want %q (%s)", tt.name, body.ErrorType, tt.errorType, text)
		}
		for _, w := range tt.words {
			if !strings.Contains(body.Error+" "+body.Code, w) {
				t.Errorf("%s: %s; want it to say %q", tt.name, text, w)
			}
		}
		if strings.Contains(strings.ToLower(body.Error), "token is") || strings.Contains(strings.ToLower(body.Error), "check your app token") {
			t.Errorf("%s: %q speaks of a bad token", tt.name, body.Error)
		}
	}
}

// A query's count or sample that fails with an error of no known kind is
// told in the error's own words: dualresp's wrapper, which names its
// call, is not the model's concern.
func TestPlanErrorWords(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		&dualresp.CountError{Err: errors.New("stream reset")},
		&dualresp.QueryError{Op: "sample", Err: errors.New("stream reset")},
	} {
		res := errorResult(&opError{what: "the query on dataset wg3w-h783", err: err}, false)
		var body errorBody
		if err := json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &body); err != nil {
			t.Fatal(err)
		}
		if want := "The request for the query on dataset wg3w-h783 failed: stream reset"; !strings.HasPrefix(body.Error, want) {
			t.Errorf("errorResult(%T).error = %q; want it to start %q", err, body.Error, want)
		}
	}
}
