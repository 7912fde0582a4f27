package portal

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// A move a portal answers is followed by the registry, remembered for the
// process (the old name resolves to the new portal, whose client has its
// own token) and logged once; a known move is resolved before any request,
// for the configured domain, the allowlist and the tokens' keys alike.
func TestRegistryFollowsMoves(t *testing.T) {
	t.Parallel()
	fake := socratatest.NewServer(t, socratatest.WithDomain("api.us.socrata.com"))
	for _, d := range []string{"data.sf.gov", "data.new.example"} {
		if err := fake.AddDomain(d); err != nil {
			t.Fatal(err)
		}
		if err := fake.AddGenerated(t.Context(), socratatest.Schema{ID: "abcd-1234", Name: "x", Domain: d,
			Columns: []socratatest.Column{{Name: "A", FieldName: "a", DataType: "text"}}}, 3,
			func(i int) map[string]any { return map[string]any{"a": "v"} }); err != nil {
			t.Fatal(err)
		}
	}
	if err := fake.SetMoved("data.old.example", "data.new.example"); err != nil {
		t.Fatal(err)
	}
	var logs socratatest.LogBuffer
	reg, err := New(Options{
		Socrata: socrata.Options{Domain: "data.sfgov.org", BaseURL: fake.URL(), DiscoveryURL: fake.URL(), HTTPClient: fake.Client(), MaxRetries: -1},
		Allow:   []string{"data.sfgov.org", "data.old.example", "data.new.example"},
		Tokens:  map[string]string{"data.sfgov.org": "sf-token", "data.new.example": "new-token"},
		Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := reg.Default(); d.Domain != "data.sf.gov" || !reg.Permitted("data.sfgov.org") {
		t.Fatalf("configured data.sfgov.org: default portal %s, old name permitted %v; want data.sf.gov, true", d.Domain, reg.Permitted("data.sfgov.org"))
	}
	if _, note := reg.Moved(t.Context(), "", reg.Default()); note != "data.sfgov.org has moved to data.sf.gov; this ran there." {
		t.Errorf("Moved(configured) note %q", note)
	}
	old, err := reg.Get(t.Context(), "data.old.example")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if old, err = reg.Run(t.Context(), old, func(p *Target) error {
			_, err := p.Client.Schema(t.Context(), "abcd-1234")
			return err
		}); err != nil {
			t.Fatalf("Schema through the move: %v", err)
		}
	}
	now, note := reg.Moved(t.Context(), "data.old.example", old)
	if now.Domain != "data.new.example" || note != "data.old.example has moved to data.new.example; this ran there." {
		t.Errorf("Moved = %s, %q", now.Domain, note)
	}
	if again, _ := reg.Get(t.Context(), "data.old.example"); again != now {
		t.Errorf("Get(old name) after the move = %s; want the new portal", again.Domain)
	}
	if n := strings.Count(logs.String(), "domain=data.old.example moved_to=data.new.example"); n != 1 {
		t.Errorf("the move was logged %d times; want once:\n%s", n, logs.String())
	}
	sentSF, sentNew := false, false
	for _, r := range fake.Requests() {
		switch {
		case r.Host == "data.new.example" && r.AppTokenSent:
			sentNew = true
		case r.Host == "data.old.example" && r.AppTokenSent:
			t.Errorf("a token went to the old host %s", r.Path)
		}
	}
	if _, err := reg.Default().Client.Schema(t.Context(), "abcd-1234"); err != nil {
		t.Fatal(err)
	}
	for _, r := range fake.Requests() {
		if r.Host == "data.sf.gov" && r.AppTokenSent {
			sentSF = true
		}
		if r.Host == "data.sfgov.org" {
			t.Errorf("a request went to the old name data.sfgov.org: %s", r.Path)
		}
	}
	if !sentSF || !sentNew {
		t.Errorf("tokens: data.sf.gov got the old name's %v, data.new.example its own %v; want both", sentSF, sentNew)
	}
	// A result stored by an earlier version names data.sfgov.org: it runs
	// on data.sf.gov.
	before := len(fake.Requests())
	n, err := resolved(t, NewExecutor(reg, ExecutorOptions{}), dualresp.Query{Kind: QueryKind, Text: "SELECT a",
		Params: map[string]string{"dataset_id": "abcd-1234", "domain": "data.sfgov.org"}}).Count(t.Context())
	if err != nil || n != 3 {
		t.Fatalf("a stored query of data.sfgov.org counted %d, %v; want 3", n, err)
	}
	for _, r := range fake.Requests()[before:] {
		if r.Host != "data.sf.gov" {
			t.Errorf("the stored query sent a request to %s; want data.sf.gov", r.Host)
		}
	}
}

// Run follows a move a portal answers, once: the request is sent again to
// the new host, and the old name resolves to it from then on, so no later
// request goes to the old host. A new host the registry refuses is the
// *socrata.MovedError naming the refusal, and nothing is sent to it; two
// hosts that redirect to each other are an error after a few requests.
func TestRunFollowsMoves(t *testing.T) {
	t.Parallel()
	fake := socratatest.NewServer(t, socratatest.WithDomain("api.us.socrata.com"))
	if err := fake.AddDomain("data.new.example"); err != nil {
		t.Fatal(err)
	}
	if err := fake.AddGenerated(t.Context(), socratatest.Schema{ID: "abcd-1234", Name: "x", Domain: "data.new.example",
		Columns: []socratatest.Column{{Name: "A", FieldName: "a", DataType: "text"}}}, 37,
		func(i int) map[string]any { return map[string]any{"a": []string{"oak", "elm"}[i%2]} }); err != nil {
		t.Fatal(err)
	}
	if err := fake.SetMoved("data.old.example", "data.new.example"); err != nil {
		t.Fatal(err)
	}
	schema := func(sc **socrata.Schema) func(*Target) error {
		return func(p *Target) (err error) {
			*sc, err = p.Client.Schema(t.Context(), "abcd-1234")
			return err
		}
	}
	sopts := socrata.Options{Domain: "data.sf.gov", BaseURL: fake.URL(), DiscoveryURL: fake.URL(), HTTPClient: fake.Client(), MaxRetries: -1}

	t.Run("followed", func(t *testing.T) {
		reg, err := New(Options{Socrata: sopts})
		if err != nil {
			t.Fatal(err)
		}
		old, err := reg.Get(t.Context(), "data.old.example")
		if err != nil {
			t.Fatal(err)
		}
		var sc *socrata.Schema
		now, err := reg.Run(t.Context(), old, schema(&sc))
		if err != nil || now.Domain != "data.new.example" || sc.RowCount != 37 {
			t.Fatalf("Run(Schema) on data.old.example = %v, %v; want data.new.example's schema of 37 rows", now, err)
		}
		before := len(fake.Requests())
		again, err := reg.Get(t.Context(), "data.old.example")
		if err != nil || again != now {
			t.Fatalf("Get(old name) after the move = %v, %v; want the new portal", again, err)
		}
		if _, err := again.Client.Query(t.Context(), "abcd-1234", "SELECT a, count(*) AS n GROUP BY a ORDER BY a"); err != nil {
			t.Fatal(err)
		}
		if _, err := again.Client.Search(t.Context(), "x", 5); err != nil {
			t.Fatal(err)
		}
		for _, r := range fake.Requests()[before:] {
			if r.Host == "data.old.example" {
				t.Errorf("after the move a request went to the old host: %s %s", r.Method, r.Path)
			}
			// "Discovery scoped to data.sf.gov needs search_context" (id 69531768957).
			if r.Endpoint == "catalog" && (r.Query.Get("domains") != "data.new.example" || r.Query.Get("search_context") != "data.new.example") {
				t.Errorf("catalog request %v; want domains and search_context data.new.example", r.Query)
			}
		}
	})

	t.Run("refused", func(t *testing.T) {
		reg, err := New(Options{Socrata: sopts, Allow: []string{"data.old.example"}})
		if err != nil {
			t.Fatal(err)
		}
		old, err := reg.Get(t.Context(), "data.old.example")
		if err != nil {
			t.Fatal(err)
		}
		before := len(fake.Requests())
		var sc *socrata.Schema
		_, err = reg.Run(t.Context(), old, schema(&sc))
		var mv *socrata.MovedError
		var de *socrata.DomainError
		if !errors.As(err, &mv) || !errors.As(err, &de) || !strings.Contains(err.Error(), "has moved to data.new.example, which is refused") {
			t.Fatalf("Run(Schema) = %v; want a *MovedError wrapping the refusal", err)
		}
		for _, r := range fake.Requests()[before:] {
			if r.Host == "data.new.example" {
				t.Errorf("a request went to the refused host: %s", r.Path)
			}
		}
	})

	t.Run("loop", func(t *testing.T) {
		var hits atomic.Int32
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			other := map[string]string{"a.example.org": "b.example.org", "b.example.org": "a.example.org"}[r.Host]
			http.Redirect(w, r, "https://"+other+r.URL.RequestURI(), http.StatusMovedPermanently)
		}))
		t.Cleanup(ts.Close)
		reg, err := New(Options{Socrata: socrata.Options{Domain: "data.sf.gov", BaseURL: ts.URL, HTTPClient: ts.Client(), MaxRetries: -1}})
		if err != nil {
			t.Fatal(err)
		}
		a, err := reg.Get(t.Context(), "a.example.org")
		if err != nil {
			t.Fatal(err)
		}
		var sc *socrata.Schema
		if _, err = reg.Run(t.Context(), a, schema(&sc)); err == nil || !strings.Contains(err.Error(), "redirect to each other") {
			t.Fatalf("Run(Schema) = %v; want the loop named", err)
		}
		if n := hits.Load(); n > 2*(socrata.MaxMoves+1) {
			t.Errorf("%d requests for a redirect loop; want a bounded few", n)
		}
	})
}

// A stored query follows a move its portal answers after the query was
// stored: its count, its pages and its stream (exports, analyses) run
// through the registry, so the move is resolved once, logged once, and
// every later request of the query goes to the new host. The old host
// answers a query (a SODA3 POST, sent with the app token) with a 301,
// as the fake plays a moved portal (evidence moves-301).
func TestStoredQueryFollowsMove(t *testing.T) {
	t.Parallel()
	const oldHost, newHost = "data.old.example", "data.new.example"
	fake := socratatest.NewServer(t, socratatest.WithDomain("api.us.socrata.com"))
	for _, d := range []string{oldHost, newHost} {
		if err := fake.AddDomain(d); err != nil {
			t.Fatal(err)
		}
		if err := fake.AddGenerated(t.Context(), socratatest.Schema{ID: "abcd-1234", Name: "x", Domain: d,
			Columns: []socratatest.Column{{Name: "N", FieldName: "n", DataType: "number"}}}, 37,
			func(i int) map[string]any { return map[string]any{"n": i} }); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		read func(t *testing.T, q *Query) (int, error)
	}{
		{"count", func(t *testing.T, q *Query) (int, error) {
			n, err := q.Count(t.Context())
			return int(n), err
		}},
		{"page", func(t *testing.T, q *Query) (int, error) {
			res, err := q.Page(t.Context(), dualresp.PageRequest{Offset: 30, Limit: 10})
			return len(res.Rows), err
		}},
		{"stream", func(t *testing.T, q *Query) (int, error) {
			n := 0
			err := q.Stream(t.Context(), dualresp.PageRequest{Offset: 5}, func(json.RawMessage) error { n++; return nil })
			return n, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := fake.SetMoved(oldHost, ""); err != nil { // each reader starts on the old host, before the move
				t.Fatal(err)
			}
			var logs socratatest.LogBuffer
			reg, err := New(Options{
				Socrata: socrata.Options{Domain: "data.sf.gov", BaseURL: fake.URL(), DiscoveryURL: fake.URL(), HTTPClient: fake.Client(), MaxRetries: -1},
				Tokens:  map[string]string{oldHost: "old-token", newHost: "new-token"},
				Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			exec := NewExecutor(reg, ExecutorOptions{Backoff: func(int) time.Duration { return 0 }})
			q := resolved(t, exec, dualresp.Query{Kind: QueryKind, Text: "SELECT n ORDER BY n, :id",
				Params: map[string]string{"dataset_id": "abcd-1234", "domain": oldHost}})
			if err := fake.SetMoved(oldHost, newHost); err != nil {
				t.Fatal(err)
			}
			before := len(fake.Requests())
			want := map[string]int{"count": 37, "page": 7, "stream": 32}[tc.name]
			for i := range 2 {
				got, err := tc.read(t, q)
				if err != nil || got != want {
					t.Fatalf("%s #%d of a query stored on %s, after it moved: %d rows, %v; want %d", tc.name, i+1, oldHost, got, err, want)
				}
			}
			old := 0
			for _, r := range fake.Requests()[before:] {
				if r.Host == oldHost {
					old++
				}
			}
			if old != 1 {
				t.Errorf("%s: %d requests went to the old host; want 1 (its answer is the move)", tc.name, old)
			}
			if n := strings.Count(logs.String(), "domain="+oldHost+" moved_to="+newHost); n != 1 {
				t.Errorf("%s: the move was logged %d times; want once:\n%s", tc.name, n, logs.String())
			}
		})
	}
}
