package datasf_test

import (
	stdcmp "cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// The portals of the multi-domain fake: the configured one and two more.
const (
	sfDomain  = "data.sf.gov"
	chiDomain = "data.cityofchicago.org"
	nycDomain = "data.cityofnewyork.us"
	// sharedID is a dataset id that exists on SF and on Chicago, with
	// other rows: a query that reaches the wrong portal counts wrong.
	sharedID = "abcd-1234"
)

// rowsOf are the rows of each portal's sharedID dataset (NYC has its own id).
var rowsOf = map[string]int{sfDomain: 12, chiDomain: 40, nycDomain: 25}

// wire counts and records what the product sends: every request that
// reaches the transport, with its Host and the app token it carried.
type wire struct {
	next http.RoundTripper
	n    atomic.Int64
	mu   sync.Mutex
	sent []sentRequest
}

type sentRequest struct {
	host, path, domains, token string
}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	w.n.Add(1)
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	w.mu.Lock()
	w.sent = append(w.sent, sentRequest{host: host, path: req.URL.Path, domains: req.URL.Query().Get("domains"), token: req.Header.Get("X-App-Token")})
	w.mu.Unlock()
	return w.next.RoundTrip(req)
}

func (w *wire) requests() []sentRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.sent)
}

// fakeDNS resolves the test's names: the three portals to public
// addresses, and names that point at addresses no portal may have.
var fakeDNS = map[string][]string{
	sfDomain:                  {"52.206.140.205"},
	chiDomain:                 {"52.206.140.199"},
	nycDomain:                 {"52.206.68.26", "2600:1f18:1cb5::1"},
	"rebind.example.com":      {"127.0.0.1"},
	"private.example.org":     {"93.184.216.34", "10.0.0.5"},
	"linklocal.example.org":   {"169.254.169.254"},
	"v6loopback.example.org":  {"::1"},
	"mapped.example.org":      {"::ffff:192.168.1.10"},
	"cgnat.example.org":       {"100.64.1.1"},
	"uniquelocal.example.org": {"fd00::5"},
}

func lookupFake(_ context.Context, host string) ([]netip.Addr, error) {
	addrs, ok := fakeDNS[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = netip.MustParseAddr(a)
	}
	return out, nil
}

// domainsEnv is the product over a fake that serves three portals.
type domainsEnv struct {
	fake *socratatest.Server
	wire *wire
	env  *datasftest.Env
	logs *socratatest.LogBuffer
}

// newDomainsEnv starts the fake with SF, Chicago and NYC (each with a 311
// dataset) and the product over it with cfg (its Socrata client, DNS and
// logger set here).
func newDomainsEnv(t *testing.T, cfg datasf.Config) *domainsEnv {
	t.Helper()
	ctx := t.Context()
	fake := socratatest.NewServer(t)
	load := func(domain, id, name string, n int) {
		t.Helper()
		schema := socratatest.Schema{ID: id, Name: name, Category: "Service Requests", Description: "311 service requests of " + stdcmp.Or(domain, fake.Domain()),
			Columns: []socrata.Column{{Name: "Status", FieldName: "status", DataType: "text"}, {Name: "Ward", FieldName: "ward", DataType: "number"}}, Domain: domain}
		err := fake.AddGenerated(ctx, schema, n, func(i int) map[string]any {
			return map[string]any{"status": []string{"Open", "Closed", "Duplicate"}[i%3], "ward": i % 7}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	load("", sharedID, "311 Cases", rowsOf[sfDomain])
	for _, d := range []string{chiDomain, nycDomain} {
		if err := fake.AddDomain(d); err != nil {
			t.Fatal(err)
		}
		id := sharedID
		if d == nycDomain {
			id = "erm2-nwe9"
		}
		load(d, id, "311 Service Requests", rowsOf[d])
	}
	w := &wire{next: fake.Client().Transport}
	if w.next == nil {
		w.next = http.DefaultTransport
	}
	logs := &socratatest.LogBuffer{}
	cfg.Socrata.HTTPClient = &http.Client{Transport: w}
	cfg.Socrata.MaxRetries = -1
	cfg.LookupIP = lookupFake
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	env, err := datasftest.Start(ctx, datasftest.Options{PortalURL: fake.URL(), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Close() })
	return &domainsEnv{fake: fake, wire: w, env: env, logs: logs}
}

// call runs a tool and decodes its structured content (or its error text).
func (e *domainsEnv) call(t *testing.T, tool string, args map[string]any) (map[string]any, *mcp.CallToolResult) {
	t.Helper()
	res, err := e.env.Call(t.Context(), tool, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", tool, args, err)
	}
	var out map[string]any
	if res.IsError {
		if err := json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &out); err != nil {
			t.Fatalf("%s(%v): error text is not JSON: %v", tool, args, err)
		}
		return out, res
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out, res
}

func mustSucceed(t *testing.T, tool string, args map[string]any, out map[string]any, res *mcp.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s(%v) = error %v; want success", tool, args, out)
	}
}

// hitDomains maps each result's id to its domain.
func hitDomains(out map[string]any) map[string][]string {
	got := map[string][]string{}
	for _, r := range out["results"].([]any) {
		m := r.(map[string]any)
		d, _ := m["domain"].(string)
		got[d] = append(got[d], m["id"].(string))
	}
	for _, ids := range got {
		slices.Sort(ids)
	}
	return got
}

// A search spans several portals or all of them; each hit names its
// domain; list_datasf with domain "*" lists the portals.
func TestCrossPortalSearch(t *testing.T) {
	t.Parallel()
	e := newDomainsEnv(t, datasf.Config{})
	tests := []struct {
		name   string
		domain string
		want   map[string][]string
		// wantDomains is the domains= parameter the Discovery request carried.
		wantDomains string
	}{
		{"every portal", "*", map[string][]string{sfDomain: {sharedID}, chiDomain: {sharedID}, nycDomain: {"erm2-nwe9"}}, ""},
		{"two portals", chiDomain + ", " + nycDomain, map[string][]string{chiDomain: {sharedID}, nycDomain: {"erm2-nwe9"}}, chiDomain + "," + nycDomain},
		{"one other portal, any case", "Data.CityOfNewYork.US", map[string][]string{nycDomain: {"erm2-nwe9"}}, nycDomain},
		{"the configured portal, named", sfDomain, map[string][]string{sfDomain: {sharedID}}, sfDomain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"query": "311 service", "domain": tt.domain, "limit": 20}
			out, res := e.call(t, "search_datasf", args)
			mustSucceed(t, "search_datasf", args, out, res)
			if diff := cmp.Diff(tt.want, hitDomains(out)); diff != "" {
				t.Errorf("search_datasf(domain %q) hits by domain (-want +got):\n%s", tt.domain, diff)
			}
			text := res.Content[0].(mcp.TextContent).Text
			for d := range tt.want {
				if !strings.Contains(text, "| "+d+" | ") {
					t.Errorf("search_datasf(domain %q) text does not name %s in a row:\n%s", tt.domain, d, text)
				}
			}
			// The catalog request; row counts (views) may follow it.
			var last *socratatest.Request
			for _, r := range e.fake.Requests() {
				if r.Endpoint == "catalog" {
					last = &r
				}
			}
			if last == nil || last.Query.Get("domains") != tt.wantDomains {
				t.Errorf("search_datasf(domain %q): last catalog request %+v; want domains=%q", tt.domain, last, tt.wantDomains)
			}
		})
	}
	t.Run("portals", func(t *testing.T) {
		args := map[string]any{"domain": "*"}
		out, res := e.call(t, "list_datasf", args)
		mustSucceed(t, "list_datasf", args, out, res)
		got := map[string]float64{}
		for _, p := range out["portals"].([]any) {
			m := p.(map[string]any)
			got[m["domain"].(string)] = m["datasets"].(float64)
		}
		want := map[string]float64{sfDomain: 1, chiDomain: 1, nycDomain: 1}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("list_datasf(domain *) portals (-want +got):\n%s", diff)
		}
		if !strings.Contains(res.Content[0].(mcp.TextContent).Text, "| "+chiDomain+" | 1 |") {
			t.Errorf("list_datasf(domain *) text = %q; want a row for %s", res.Content[0].(mcp.TextContent).Text, chiDomain)
		}
	})
	t.Run("list one other portal", func(t *testing.T) {
		args := map[string]any{"domain": chiDomain}
		out, res := e.call(t, "list_datasf", args)
		mustSucceed(t, "list_datasf", args, out, res)
		if diff := cmp.Diff(map[string][]string{chiDomain: {sharedID}}, hitDomains(out)); diff != "" {
			t.Errorf("list_datasf(domain %s) (-want +got):\n%s", chiDomain, diff)
		}
	})
}

// A query on a second domain runs there, and its result says so
// everywhere: the structured content, the resource name, the REST
// metadata, the export (re-executed on that portal) and list_results;
// with each result store.
func TestQueryOnSecondDomain(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"memory", "sqlite"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			cfg := datasf.Config{}
			if store == "sqlite" {
				cfg.Store = "sqlite:" + filepath.Join(t.TempDir(), "results.db")
			}
			e := newDomainsEnv(t, cfg)
			soqlText := "SELECT status, ward"
			uris := map[string]string{}
			for domain, want := range map[string]int{"": rowsOf[sfDomain], chiDomain: rowsOf[chiDomain]} {
				args := map[string]any{"dataset_id": sharedID, "soql": soqlText, "sample_size": 2}
				if domain != "" {
					args["domain"] = domain
				}
				out, res := e.call(t, "query_datasf", args)
				mustSucceed(t, "query_datasf", args, out, res)
				md := out["metadata"].(map[string]any)
				if got := int(md["total_count"].(float64)); got != want {
					t.Errorf("query_datasf(domain %q).total_count = %d; want %d", domain, got, want)
				}
				gotDomain, _ := md["domain"].(string)
				if gotDomain != domain {
					t.Errorf("query_datasf(domain %q).metadata.domain = %q; want %q", domain, gotDomain, domain)
				}
				resource := out["resource"].(map[string]any)
				// The result's name is said once, by its resource_link.
				var name string
				for _, c := range res.Content {
					if l, ok := c.(mcp.ResourceLink); ok {
						name = l.Name
					}
				}
				if domain != "" && !strings.Contains(name, domain) {
					t.Errorf("query_datasf(domain %q): resource_link name = %q; want it to name the domain", domain, name)
				}
				if domain == "" && (name == "" || strings.Contains(name, "(")) {
					t.Errorf("query_datasf on the configured portal: resource_link name = %q; want the dataset's name alone", name)
				}
				url := resource["url"].(string)
				uris[domain] = resource["uri"].(string)

				// The REST metadata names the domain, in the stored query.
				var info struct {
					Query struct {
						Params map[string]string `json:"params"`
					} `json:"query"`
					Metadata map[string]any `json:"metadata"`
				}
				getJSON(t, url, &info)
				if info.Query.Params["domain"] != domain || (domain != "" && info.Metadata["domain"] != domain) {
					t.Errorf("GET %s: query.params %v, metadata %v; want domain %q", url, info.Query.Params, info.Metadata, domain)
				}

				// The export re-executes on the domain's portal: its rows.
				before := len(e.wire.requests())
				body := getText(t, url+"/export?format=csv")
				rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				if len(rows)-1 != want {
					t.Errorf("export of the %q query: %d rows; want %d", domain, len(rows)-1, want)
				}
				// Every request names its portal in Host, the configured
				// one's too: one server answers for every domain.
				wantHost := stdcmp.Or(domain, sfDomain)
				for _, r := range e.wire.requests()[before:] {
					if r.host != wantHost {
						t.Errorf("export of the %q query sent a request to %s%s; want %s", domain, r.host, r.path, wantHost)
					}
				}
			}

			// analyze_results compares the two portals, each table from its own.
			args := map[string]any{"sql": "SELECT (SELECT count(*) FROM sf) AS sf, (SELECT count(*) FROM chi) AS chi",
				"results": map[string]any{"sf": uris[""], "chi": uris[chiDomain]}}
			out, res := e.call(t, "analyze_results", args)
			mustSucceed(t, "analyze_results", args, out, res)
			if got, want := fmt.Sprint(out["rows"]), fmt.Sprintf("[map[chi:%d sf:%d]]", rowsOf[chiDomain], rowsOf[sfDomain]); got != want {
				t.Errorf("analyze_results rows = %s; want %s", got, want)
			}
			tableDomains := map[string]string{}
			for _, tb := range out["tables"].([]any) {
				m := tb.(map[string]any)
				d, _ := m["domain"].(string)
				tableDomains[m["name"].(string)] = d
			}
			if diff := cmp.Diff(map[string]string{"sf": "", "chi": chiDomain}, tableDomains); diff != "" {
				t.Errorf("analyze_results tables' domains (-want +got):\n%s", diff)
			}

			out, res = e.call(t, "list_results", map[string]any{})
			mustSucceed(t, "list_results", nil, out, res)
			var domains []string
			for _, r := range out["results"].([]any) {
				d, _ := r.(map[string]any)["domain"].(string)
				domains = append(domains, d)
			}
			if diff := cmp.Diff([]string{"", chiDomain}, slices.Sorted(slices.Values(domains))); diff != "" {
				t.Errorf("list_results domains (-want +got):\n%s", diff)
			}
			if text := res.Content[0].(mcp.TextContent).Text; !strings.Contains(text, sharedID+" on "+chiDomain) {
				t.Errorf("list_results text does not name %s on %s:\n%s", sharedID, chiDomain, text)
			}
		})
	}
}

// refusedDomains are domain arguments that are no public portal's host
// name, each refused before any connection.
var refusedDomains = []string{
	// schemes, ports, userinfo, paths
	"https://data.cityofchicago.org", "http://data.cityofchicago.org", "//data.cityofchicago.org",
	"data.cityofchicago.org:443", "data.cityofchicago.org:8080", "user@data.cityofchicago.org", "user:pw@data.cityofchicago.org",
	"data.cityofchicago.org/api", "data.cityofchicago.org?x=1", "data.cityofchicago.org#f", `data.cityofchicago.org\x`,
	// IPv4 in every form inet_aton reads
	"127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.1", "0x7f000001", "127.1", "10.0.0.1", "169.254.169.254", "0.0.0.0",
	// IPv6, with and without brackets and zone ids
	"::1", "[::1]", "fe80::1%eth0", "[fe80::1%25eth0]", "::ffff:127.0.0.1", "[::ffff:7f00:1]",
	// local names
	"localhost", "LOCALHOST", "localhost.", "portal.localhost", "printer.local", "metadata.google.internal", "nas.lan",
	"1.0.0.127.in-addr.arpa",
	// not a plain DNS name
	"data.cityofchicago.org.", "données.example.fr", "data..org", "-data.example.org", "data_x.example.org", "data example.org",
	strings.Repeat("a", 64) + ".example.org",
	// names that resolve where no portal may be (the dialer would also refuse them)
	"rebind.example.com", "private.example.org", "linklocal.example.org", "v6loopback.example.org", "mapped.example.org",
	"cgnat.example.org", "uniquelocal.example.org",
	// names that do not resolve
	"nxdomain.example.com",
}

// Every refused domain is a validation error (code domain_refused) of
// every portal tool, and nothing was sent anywhere: neither the product's
// transport nor the fake saw a request.
func TestDomainRefused(t *testing.T) {
	t.Parallel()
	e := newDomainsEnv(t, datasf.Config{})
	for _, domain := range refusedDomains {
		t.Run(domain, func(t *testing.T) {
			calls := []struct {
				tool string
				args map[string]any
			}{
				{"get_schema", map[string]any{"dataset_id": sharedID, "domain": domain}},
				{"query_datasf", map[string]any{"dataset_id": sharedID, "soql": "SELECT status", "domain": domain}},
				{"list_datasf", map[string]any{"domain": domain}},
				{"search_datasf", map[string]any{"query": "311", "domain": domain}},
				{"search_datasf", map[string]any{"query": "311", "domain": chiDomain + "," + domain}},
			}
			for _, c := range calls {
				sentBefore, seenBefore := e.wire.n.Load(), e.fake.RequestCount("")
				out, res := e.call(t, c.tool, c.args)
				if !res.IsError || out["error_type"] != "validation" {
					t.Errorf("%s(domain %q) = %v; want a validation error", c.tool, domain, out)
					continue
				}
				if out["code"] != datasf.CodeDomainRefused && out["code"] != "invalid_argument" {
					t.Errorf("%s(domain %q).code = %v; want %s", c.tool, domain, out["code"], datasf.CodeDomainRefused)
				}
				if msg, _ := out["error"].(string); !strings.Contains(msg, "domain") {
					t.Errorf("%s(domain %q).error = %q; want it to name the domain argument", c.tool, domain, msg)
				}
				// The subtests run one after the other on this test's own
				// fake, so any change is this call's.
				if sent, seen := e.wire.n.Load(), e.fake.RequestCount(""); sent != sentBefore || seen != seenBefore {
					t.Errorf("%s(domain %q): %d requests sent, %d seen by the portal; want none", c.tool, domain, sent-sentBefore, seen-seenBefore)
				}
			}
		})
	}
}

// With an allowlist, only the configured portal and the listed ones are
// served; "*" means them.
func TestDomainAllowlist(t *testing.T) {
	t.Parallel()
	e := newDomainsEnv(t, datasf.Config{Domains: []string{chiDomain}})
	args := map[string]any{"dataset_id": sharedID, "domain": chiDomain}
	out, res := e.call(t, "get_schema", args)
	mustSucceed(t, "get_schema", args, out, res)
	if out["domain"] != chiDomain {
		t.Errorf("get_schema(domain %s).domain = %v", chiDomain, out["domain"])
	}

	before := e.wire.n.Load()
	out, res = e.call(t, "get_schema", map[string]any{"dataset_id": "erm2-nwe9", "domain": nycDomain})
	if !res.IsError || out["code"] != datasf.CodeDomainRefused || !strings.Contains(out["error"].(string), chiDomain) {
		t.Errorf("get_schema(domain %s) = %v; want domain_refused naming the allowed domains", nycDomain, out)
	}
	// A well-formed name that is not served gets no other name "e.g." to try.
	if msg, _ := out["error"].(string); strings.Contains(msg, "e.g.") {
		t.Errorf("get_schema(domain %s): %q offers an example host name; want only the served ones", nycDomain, msg)
	}
	if n := e.wire.n.Load() - before; n != 0 {
		t.Errorf("get_schema on a domain outside the allowlist sent %d requests; want none", n)
	}

	out, res = e.call(t, "search_datasf", map[string]any{"query": "311", "domain": "*", "limit": 20})
	mustSucceed(t, "search_datasf", nil, out, res)
	if diff := cmp.Diff(map[string][]string{sfDomain: {sharedID}, chiDomain: {sharedID}}, hitDomains(out)); diff != "" {
		t.Errorf("search_datasf(domain *) with an allowlist (-want +got):\n%s", diff)
	}
	out, res = e.call(t, "list_datasf", map[string]any{"domain": "*"})
	mustSucceed(t, "list_datasf", nil, out, res)
	var portals []string
	for _, p := range out["portals"].([]any) {
		portals = append(portals, p.(map[string]any)["domain"].(string))
	}
	slices.Sort(portals)
	if diff := cmp.Diff([]string{chiDomain, sfDomain}, portals); diff != "" {
		t.Errorf("list_datasf(domain *) with an allowlist (-want +got):\n%s", diff)
	}
}

// An app token goes only with its own domain's requests, and never shows
// in a tool result or a log line.
func TestAppTokenOnlyToItsDomain(t *testing.T) {
	t.Parallel()
	const chiToken, sfToken = "chi-secret-app-token-1234", "sf-secret-app-token-5678"
	e := newDomainsEnv(t, datasf.Config{
		Socrata:   socrata.Options{AppToken: sfToken},
		AppTokens: map[string]string{chiDomain: chiToken},
	})
	var texts []string
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"search_datasf", map[string]any{"query": "311"}},
		{"search_datasf", map[string]any{"query": "311", "domain": chiDomain}},
		{"search_datasf", map[string]any{"query": "311", "domain": nycDomain}},
		{"search_datasf", map[string]any{"query": "311", "domain": "*"}},
		{"list_datasf", map[string]any{"domain": "*"}},
		{"get_schema", map[string]any{"dataset_id": sharedID, "domain": chiDomain}},
		{"get_schema", map[string]any{"dataset_id": "erm2-nwe9", "domain": nycDomain}},
		{"query_datasf", map[string]any{"dataset_id": sharedID, "soql": "SELECT status", "domain": chiDomain}},
		{"query_datasf", map[string]any{"dataset_id": "erm2-nwe9", "soql": "SELECT status", "domain": nycDomain}},
		{"query_datasf", map[string]any{"dataset_id": sharedID, "soql": "SELECT status"}},
		{"get_schema", map[string]any{"dataset_id": "nope-0000", "domain": chiDomain}}, // an error answer
	} {
		res, err := e.env.Call(t.Context(), c.tool, c.args)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		texts = append(texts, string(b))
	}
	ownHost := strings.TrimPrefix(e.fake.URL(), "http://")
	tokenOf := map[string]string{chiDomain: chiToken, sfDomain: sfToken, ownHost: sfToken}
	counts := map[string]int{}
	for _, r := range e.wire.requests() {
		want := tokenOf[r.host]
		if r.path == "/api/catalog/v1" || r.path == "/api/catalog/v1/domains" {
			// Discovery: one portal's search carries that portal's token;
			// a search of several, or the list of portals, none.
			switch {
			case r.domains == chiDomain:
				want = chiToken
			case r.domains == sfDomain:
				want = sfToken
			default:
				want = ""
			}
		}
		if r.token != want {
			t.Errorf("request to %s%s (domains=%q) carried token %q; want %q", r.host, r.path, r.domains, mask(r.token), mask(want))
		}
		counts[stdcmp.Or(r.token, "none")]++
	}
	if counts[chiToken] == 0 || counts[sfToken] == 0 || counts["none"] == 0 {
		t.Errorf("requests by token: %d with Chicago's, %d with SF's, %d with none; want some of each", counts[chiToken], counts[sfToken], counts["none"])
	}
	// The fake's own log agrees: a token only on requests for SF and Chicago.
	for _, r := range e.fake.Requests() {
		if r.AppTokenSent && r.Host != chiDomain && r.Host != sfDomain {
			t.Errorf("the portal saw a token on a request for %s %s", r.Host, r.Path)
		}
		if r.Host == nycDomain && r.AppTokenSent {
			t.Errorf("the portal saw a token on a request for %s", nycDomain)
		}
	}
	for _, text := range append(texts, e.logs.String()) {
		for _, tok := range []string{chiToken, sfToken} {
			if strings.Contains(text, tok) {
				t.Errorf("a token shows in a tool result or the log: %s", clip(text, 300))
			}
		}
	}
}

func mask(tok string) string {
	if tok == "" {
		return ""
	}
	return tok[:4] + "…"
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// --offline with --data DOMAIN=ID=FILE serves the file on that domain;
// the configured domain keeps the built-in snapshot; a domain the local
// portal does not serve is refused without a request.
func TestOfflineOtherDomain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("status,ward\n")
	for i := range 9 {
		fmt.Fprintf(&b, "%s,%d\n", []string{"Open", "Closed", "Open"}[i%3], i)
	}
	file := filepath.Join(dir, "chicago-311.csv")
	if err := writeFile(file, b.String()); err != nil {
		t.Fatal(err)
	}
	env, err := datasftest.Start(t.Context(), datasftest.Options{PortalURL: "offline", Config: datasf.Config{
		Offline: &datasf.OfflineConfig{NoCache: true, Strict: true, Data: []string{chiDomain + "=v6vf-nfxy=" + file}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Close() })
	e := &domainsEnv{env: env}

	args := map[string]any{"dataset_id": "v6vf-nfxy", "soql": "SELECT status, count(*) AS n GROUP BY status ORDER BY status", "domain": chiDomain}
	out, res := e.call(t, "query_datasf", args)
	mustSucceed(t, "query_datasf", args, out, res)
	got, _ := json.Marshal(out["results"])
	if want := `[{"n":"3","status":"Closed"},{"n":"6","status":"Open"}]`; string(got) != want {
		t.Errorf("query_datasf(%v).results = %s; want %s", args, got, want)
	}
	out, res = e.call(t, "list_datasf", map[string]any{"domain": "*"})
	mustSucceed(t, "list_datasf", nil, out, res)
	var portals []string
	for _, p := range out["portals"].([]any) {
		portals = append(portals, p.(map[string]any)["domain"].(string))
	}
	if !slices.Contains(portals, chiDomain) || !slices.Contains(portals, sfDomain) {
		t.Errorf("list_datasf(domain *) offline = %v; want %s and %s", portals, sfDomain, chiDomain)
	}
	out, res = e.call(t, "get_schema", map[string]any{"dataset_id": "erm2-nwe9", "domain": nycDomain})
	if !res.IsError || out["code"] != datasf.CodeDomainRefused {
		t.Errorf("get_schema on a domain the offline portal does not serve = %v; want domain_refused", out)
	}
	// The configured domain still has the snapshot: listed (a search
	// would read the top hits' row counts, and so build the 250,000-row
	// sample incidents, which this test does not need).
	args = map[string]any{"category": "Public Safety", "limit": 100}
	out, res = e.call(t, "list_datasf", args)
	mustSucceed(t, "list_datasf", args, out, res)
	if ids := hitDomains(out)[""]; !slices.Contains(ids, "wg3w-h783") {
		t.Errorf("list_datasf(%v) on the configured domain offline = %v; want the snapshot's wg3w-h783", args, ids)
	}
}

func writeFile(path, text string) error { return os.WriteFile(path, []byte(text), 0o600) }

// Discovery answers 404 to its list of portals ("Discovery has no
// /domains listing endpoint (404)", evidence discovery-no-domains-endpoint):
// list_datasf with domain "*" then names the portals this server knows,
// says that their counts are unknown, and says how to reach any other.
func TestListPortalsWithoutDiscoveryList(t *testing.T) {
	t.Parallel()
	e := newDomainsEnv(t, datasf.Config{Domains: []string{chiDomain}})
	e.fake.Fail(1, socratatest.Fault{Status: http.StatusNotFound})
	out, res := e.call(t, "list_datasf", map[string]any{"domain": "*"})
	mustSucceed(t, "list_datasf", nil, out, res)
	var portals []string
	for _, p := range out["portals"].([]any) {
		item := p.(map[string]any)
		if _, ok := item["datasets"]; ok {
			t.Errorf("list_datasf(domain *) without Discovery's list: %v carries a dataset count; want none (unknown)", item)
		}
		portals = append(portals, item["domain"].(string))
	}
	if diff := cmp.Diff([]string{sfDomain, chiDomain}, portals); diff != "" {
		t.Errorf("list_datasf(domain *) without Discovery's list (-want +got):\n%s", diff)
	}
	text := res.Content[0].(mcp.TextContent).Text
	for _, want := range []string{"no longer lists portals", chiDomain, `search_datasf with domain "*"`} {
		if !strings.Contains(text, want) {
			t.Errorf("list_datasf(domain *) text %q; want it to say %q", text, want)
		}
	}
}
