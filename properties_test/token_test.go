package properties_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

var sessionCounter atomic.Int64

// tokenSession is a stack whose Socrata client sends a generated app token,
// with a User-Agent of its own (to pick its requests out of the fake's log)
// and every log line at debug level captured.
type tokenSession struct {
	*stack
	token, userAgent string
	logs             *socratatest.LogBuffer
	seen             strings.Builder // every response, error text and body
}

func newTokenSession(t *rapid.T, e *env) *tokenSession {
	ts := &tokenSession{
		token:     "Zq" + rapid.StringMatching(`[A-Za-z0-9]{22}`).Draw(t, "token"),
		userAgent: fmt.Sprintf("properties-token-%d", sessionCounter.Add(1)),
		logs:      &socratatest.LogBuffer{},
	}
	logger := slog.New(slog.NewTextHandler(ts.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, closeAll, err := newStack(e.fake, stackOptions{appToken: ts.token, userAgent: ts.userAgent, logger: logger})
	t.Cleanup(closeAll)
	if err != nil {
		t.Fatalf("building a session: %v", err)
	}
	ts.stack = st
	return ts
}

// callRecorded runs a tool and records its serialized result (or error).
func (ts *tokenSession) callRecorded(t *rapid.T, tool string, args map[string]any) (ok bool, res map[string]any) {
	r, err := ts.call(t.Context(), tool, args)
	if err != nil {
		ts.seen.WriteString(err.Error() + "\n")
		return false, nil
	}
	raw, v := resultJSON(t, r)
	ts.seen.Write(raw)
	ts.seen.WriteString("\n")
	if r.IsError {
		return false, v
	}
	return true, v
}

// restRecorded makes a REST request and records the response body.
func (ts *tokenSession) restRecorded(t *rapid.T, method, url, body string) int {
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.seen.WriteString(err.Error() + "\n")
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	ts.seen.Write(b)
	for k, vs := range resp.Header {
		ts.seen.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
	}
	return resp.StatusCode
}

// workload runs a random mix of tool calls that succeed and fail (unknown
// dataset, unknown column, syntax error), and REST requests on the result.
// It returns how many tool calls were expected to succeed and did not.
func (ts *tokenSession) workload(t *rapid.T, e *env) (failedValid []string) {
	ids := allDatasetIDs(e)
	for i := range rapid.IntRange(1, 4).Draw(t, "calls") {
		var (
			tool  string
			args  map[string]any
			valid bool
		)
		kinds := 6
		if i == 0 {
			kinds = 3 // the first call reaches the portal
		}
		switch rapid.IntRange(0, kinds).Draw(t, "call") {
		case 0:
			tool, args, valid = "search_datasf", map[string]any{"query": rapid.SampledFrom(e.words).Draw(t, "word")}, true
		case 1:
			tool, args, valid = "list_datasf", map[string]any{"limit": rapid.IntRange(1, 5).Draw(t, "limit")}, true
		case 2:
			tool, args, valid = "get_schema", map[string]any{"dataset_id": rapid.SampledFrom(ids).Draw(t, "id")}, true
		case 3:
			tool, args, valid = "query_datasf", map[string]any{"dataset_id": peopleID, "soql": genPeopleQuery(t), "sample_size": 3}, true
		case 4:
			tool, args = "query_datasf", map[string]any{"dataset_id": peopleID, "soql": "SELECT no_such_column_xyz"}
		case 5:
			tool, args = "get_schema", map[string]any{"dataset_id": "zzzz-9999"}
		default:
			tool, args = "query_datasf", map[string]any{"dataset_id": peopleID, "soql": "SELECT n WHERE"}
		}
		ok, res := ts.callRecorded(t, tool, args)
		if valid && !ok {
			failedValid = append(failedValid, fmt.Sprintf("%s(%v)", tool, args))
		}
		if ok && tool == "query_datasf" {
			sc, _ := res["structuredContent"].(map[string]any)
			p := dualresp.ParseStructured(sc)
			if p == nil {
				t.Fatalf("query_datasf(%v): not a dual response", args)
			}
			ts.restRecorded(t, http.MethodGet, p.ResourceURL+"?offset=0&limit=5", "")
			ts.restRecorded(t, http.MethodGet, p.ResourceURL, "")
			ts.restRecorded(t, http.MethodPost, p.ResourceURL, `{"offset":0,"limit":3,"sort":{"field":"x; DROP","order":"asc"}}`)
			ts.restRecorded(t, http.MethodGet, p.ResourceURL+"/export?format=ndjson", "")
			ts.restRecorded(t, http.MethodGet, ts.RESTURL()+"/resources/0123456789abcdef0123456789abcdef", "")
		}
	}
	return failedValid
}

// sessionRequests returns the requests of ts's session in the fake's log
// (picked by its User-Agent), failing when there are none: a property over
// them would hold vacuously.
func (ts *tokenSession) sessionRequests(t *rapid.T, e *env) []socratatest.Request {
	var out []socratatest.Request
	for _, r := range e.fake.Requests() {
		if r.Header.Get("User-Agent") == ts.userAgent {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		t.Fatalf("the session made no upstream request")
	}
	return out
}

// checkNeverShown fails when ts's token appears in what the session
// showed (responses, error texts, REST bodies and headers) or logged, or
// when nothing was logged. It returns how many bytes it searched.
func (ts *tokenSession) checkNeverShown(t *rapid.T) int {
	all := ts.seen.String() + ts.logs.String()
	if i := strings.Index(all, ts.token); i >= 0 {
		t.Fatalf("the app token appears in what the session showed: …%s…", all[max(0, i-200):min(len(all), i+len(ts.token)+50)])
	}
	if ts.logs.String() == "" {
		t.Fatalf("no log line was captured; the property would hold vacuously")
	}
	return len(all)
}

// Property 12 when the portal rejects the token: it wants another one, so
// every request is a 403, and the token still never appears in a tool
// response, error text, REST response or log line. Every request of the
// session still carries a token (property 11; that it is the session's is
// checked where the portal accepts it, in TestAppTokenOnEveryRequest).
// (Not parallel, as TestAppTokenOnEveryRequest.)
func TestAppTokenNeverShownWhenRejected(t *testing.T) {
	e := sharedEnv(t)
	var bytesSeen int
	rapid.Check(t, func(t *rapid.T) {
		ts := newTokenSession(t, e)
		e.fake.RequireAppToken("other" + ts.token)
		defer e.fake.Reset()
		ts.workload(t, e)
		for _, r := range ts.sessionRequests(t, e) {
			if !r.AppTokenSent {
				t.Fatalf("request %s %s?%s was sent without X-App-Token", r.Method, r.Path, r.Query.Encode())
			}
		}
		bytesSeen += ts.checkNeverShown(t)
	})
	t.Logf("bytes of responses, bodies and logs checked: %d", bytesSeen)
}
