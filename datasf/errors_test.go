package datasf

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
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
			res := upstreamError(tc.err, "dataset wg3w-h783", "")
			var body toolError
			if err := json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &body); err != nil {
				t.Fatal(err)
			}
			if !res.IsError || body.Code != "portal_unreachable" || body.ErrorType != errAPI || body.Details["host"] != tc.host {
				t.Errorf("upstreamError(%v) = code %q, type %q, details %v; want portal_unreachable, api_error, host %s", tc.err, body.Code, body.ErrorType, body.Details, tc.host)
			}
			if !strings.Contains(body.Error, "Could not reach the portal") || !strings.Contains(body.Error, tc.host) || !strings.Contains(body.Error, tc.wantText) {
				t.Errorf("upstreamError(%v).error = %q; want it to say the portal at %s could not be reached (%s)", tc.err, body.Error, tc.host, tc.wantText)
			}
		})
	}
}
