package reliability

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// A distinctive app token never appears in any tool response, error, REST
// answer or log line (at debug level) of a full session, while every
// upstream request carries it.
func TestAppTokenNeverLeaks(t *testing.T) {
	t.Parallel()
	const token = "SECRET-app-token-7f3a9c1e-do-not-print"
	st := newStack(t, stackOptions{appToken: token, maxRetries: -1, generated: 300, fixtures: true})

	var seen strings.Builder
	record := func(s string) { seen.WriteString(s + "\n") }
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"search_datasf", map[string]any{"query": "mobile food"}},
		{"search_datasf", map[string]any{"query": ""}},
		{"list_datasf", map[string]any{"limit": 3}},
		{"list_datasf", map[string]any{"category": "Public Safety", "limit": 2}},
		{"get_schema", map[string]any{"dataset_id": "rqzj-sfat"}},
		{"get_schema", map[string]any{"dataset_id": "zzzz-9999"}},
		{"get_schema", map[string]any{"dataset_id": "BAD"}},
		{"query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT applicant, facilitytyp WHERE status = 'APPROVED'"}},
		{"query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT nosuchcolumn", "auto_correct": false}},
		{"query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT WHERE FROM"}},
		{"query_datasf", map[string]any{"dataset_id": st.gen, "soql": "SELECT grp, count(*) AS c GROUP BY grp"}},
	}
	var urls []string
	for _, c := range calls {
		res, raw := st.call(t, c.tool, c.args)
		record(raw)
		if !res.IsError && c.tool == "query_datasf" {
			sc := res.StructuredContent.(map[string]any)
			urls = append(urls, sc["resource"].(map[string]any)["url"].(string))
		}
	}
	// Upstream failures with the token set.
	st.proxy.set(faultStatus, 5, 429, "3")
	_, raw := st.call(t, "query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT count(*)"})
	record(raw)
	st.proxy.set(faultHTML, 5, 0, "")
	_, raw = st.call(t, "query_datasf", map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT status"})
	record(raw)
	st.proxy.set(faultNone, 0, 0, "")

	// REST: metadata, pages, export, errors.
	if len(urls) == 0 {
		t.Fatal("no successful query to read over REST")
	}
	for _, u := range append(urls, urls[0]+"x", st.restURL+"/resources/ffffffffffffffffffffffffffffffff") {
		for _, suffix := range []string{"", "?offset=0&limit=5", "/export?format=csv", "?offset=-1"} {
			resp, err := http.Get(u + suffix)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			record(string(b))
			for k, v := range resp.Header {
				record(k + ": " + strings.Join(v, ","))
			}
		}
	}

	for _, r := range st.fake.Requests() {
		if !r.AppTokenSent {
			t.Errorf("upstream request %s %s was sent without the app token", r.Method, r.Path)
		}
	}
	all := seen.String() + st.logs.String()
	if strings.Contains(all, token) {
		i := strings.Index(all, token)
		t.Fatalf("the app token appears in the session's output: …%s…", all[max(0, i-200):min(len(all), i+100)])
	}
	if !strings.Contains(st.logs.String(), "level=DEBUG") {
		t.Error("no debug log lines were captured; the check would prove nothing")
	}
	t.Logf("token absent from %d bytes of tool results, REST answers and headers, and %d bytes of debug logs; %d upstream requests all carried it",
		seen.Len(), len(st.logs.String()), len(st.fake.Requests()))
}
