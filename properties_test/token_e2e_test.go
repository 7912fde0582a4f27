//go:build e2e

package properties_test

import (
	"testing"

	"pgregory.net/rapid"
)

// Properties 11 and 12 with a portal that accepts the token.
//
// Property 11: when an app token is set, every upstream request carries
// X-App-Token with that value. The fake portal requires exactly that token
// during the check (any other value or none is a 403, so valid calls would
// fail), and its request log shows the token on every request of the
// session.
//
// Property 12: the app token never appears in any serialized tool response
// (success or error), error text, REST response (body and headers) or log
// line (every logger at debug level). Checked here on the same session,
// and with a portal that rejects the token in
// TestAppTokenNeverShownWhenRejected.
//
// Each check builds its own product, since the token is part of its
// configuration. (Not parallel: RequireAppToken applies to the whole
// shared fake.)
func TestAppTokenOnEveryRequest(t *testing.T) {
	e := sharedEnv(t)
	var requests, bytesSeen int
	rapid.Check(t, func(t *rapid.T) {
		ts := newTokenSession(t, e)
		e.fake.RequireAppToken(ts.token)
		defer e.fake.Reset()
		if failed := ts.workload(t, e); len(failed) > 0 {
			t.Fatalf("with the fake requiring the session's token, valid calls failed: %v", failed)
		}
		reqs := ts.sessionRequests(t, e)
		for _, r := range reqs {
			if !r.AppTokenSent {
				t.Fatalf("request %s %s?%s was sent without X-App-Token", r.Method, r.Path, r.Query.Encode())
			}
		}
		requests += len(reqs)
		bytesSeen += ts.checkNeverShown(t)
	})
	t.Logf("upstream requests checked: %d; bytes of responses, bodies and logs checked: %d", requests, bytesSeen)
}
