// Package portal is the Socrata portals the tools talk to: a Registry
// resolves a tool's domain argument once (checked, allowed, its addresses
// public) into a *Portal, the value that carries the portal's client (with
// its own app token, retries and back-off) and schema cache to whatever
// reads the portal, and the Executor runs SoQL queries on them: a Query
// (a portal, a dataset and a parsed tree) now, and a stored
// dualresp.Query later, for pages and exports.
//
// It is imported by package datasf (the tools and the composition root)
// only; it is not a library API.
package portal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/datasf-mcp/datasf-mcp/schemacache"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Every portal tool takes a domain: the configured one (Config.Socrata's
// Domain, data.sfgov.org by default) when the call names none, else any
// public Socrata portal, or only those of Config.Domains. A domain is
// checked before anything is sent (socrata.CheckDomain: a DNS host name
// and nothing else; then, where the portals are reached directly, its
// addresses must all be public, and the dialer checks each connection
// again, so a name that comes to resolve to a private address later is
// refused too). Each domain has its own socrata.Client (its own app token
// from Config.AppTokens, retries and 429 back-off) and its own schema
// cache; at most MaxDomains of them are kept, the least recently used
// going first.

// MaxDomains bounds the other portals whose clients and schema caches a
// server keeps at once (without an allowlist).
const MaxDomains = 32

// MaxSearchPortals bounds the domains one search_datasf call names.
const MaxSearchPortals = 20

// MaxSearchDomains is the number of characters of search_datasf's domain
// argument: a few domains separated by commas.
const MaxSearchDomains = 1000

// domainSchemaCacheSize bounds each other portal's schema cache.
const domainSchemaCacheSize = 64

// Portal is one Socrata portal the tools talk to, resolved once by a
// Registry: its domain, its client (which holds the portal's app token) and
// its schema cache.
type Portal struct {
	Domain  string
	Client  *socrata.Client
	Schemas *schemacache.Cache
	// Configured is true for the configured portal (Options.Default):
	// answers name only the other portals, and a stored query names its
	// domain only for them.
	Configured bool
	// transport is the client's own when the portal is reached directly
	// (nil for the configured portal and when one server answers for
	// every domain); its idle connections are closed on eviction.
	transport *http.Transport
}

// Options configures New.
type Options struct {
	// Default is the configured portal (required): its Domain, Client and
	// Schemas.
	Default *Portal
	// Socrata is the configured client's options: the other portals'
	// clients copy their timeouts, retries, user agent, logger and
	// Discovery URL. When BaseURL is set (offline mode, tests, a proxy),
	// every domain is reached there, named by the request's Host header,
	// through HTTPClient; otherwise each at https://DOMAIN through a
	// client that connects only to public addresses.
	Socrata socrata.Options
	// Allow, when not empty, is the allowlist of domains (the default is
	// always allowed).
	Allow []string
	// Tokens are app tokens by domain.
	Tokens map[string]string
	// LookupIP resolves a domain's addresses for the check that they are
	// all public; nil skips it.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// Served, when set, says whether the local portal serves a domain
	// (offline mode): a domain it does not serve is refused without a
	// request, as a name that does not resolve.
	Served func(domain string) bool
	// Limits are each portal's politeness limits (resolved).
	Limits Limits
	Logger *slog.Logger
}

// Registry is the registry of the portals the tools may talk to. It is
// safe for concurrent use.
type Registry struct {
	def   *Portal
	opts  Options
	allow map[string]bool // nil: any public portal
	// Catalog makes cross-portal Discovery requests (no app token).
	Catalog *socrata.Client
	log     *slog.Logger

	mu     sync.Mutex // serialises making a portal (not its address look-up)
	others *lru.Cache[string, *Portal]
}

// New returns the Registry of opts.Default and the other portals opts
// allows.
func New(opts Options) (*Registry, error) {
	if opts.Default == nil || opts.Default.Client == nil {
		return nil, errors.New("portal: Options.Default with a Client is required")
	}
	opts.Default.Configured = true
	if opts.Default.Domain == "" {
		opts.Default.Domain = opts.Default.Client.Domain()
	}
	p := &Registry{def: opts.Default, opts: opts, log: opts.Logger}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	size := MaxDomains
	if len(opts.Allow) > 0 {
		p.allow = map[string]bool{}
		for _, d := range opts.Allow {
			checked, err := socrata.CheckDomain(d)
			if err != nil {
				return nil, fmt.Errorf("the allowlist of domains: %w", err)
			}
			p.allow[checked] = true
		}
		size = max(len(p.allow), 1)
	}
	for d := range opts.Tokens {
		if _, err := socrata.CheckDomain(d); err != nil {
			return nil, fmt.Errorf("the app tokens by domain: %w", err)
		}
	}
	var err error
	p.others, err = lru.NewWithEvict(size, func(_ string, v *Portal) {
		if v.transport != nil {
			v.transport.CloseIdleConnections()
		}
	})
	if err != nil {
		return nil, err
	}
	copts := opts.Socrata
	copts.AppToken = ""
	copts.Domain = opts.Default.Domain
	opts.Limits.Apply(&copts)
	p.Catalog = socrata.NewClient(copts)
	return p, nil
}

// Default returns the configured portal.
func (p *Registry) Default() *Portal { return p.def }

// allowed lists the allowlist, sorted; nil without one.
func (p *Registry) allowed() []string {
	if p.allow == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(p.allow))
}

// check returns the domain in canonical form when the tools may talk to
// it; the error is a *socrata.DomainError. Nothing is sent anywhere.
func (p *Registry) check(domain string) (string, error) {
	if domain == "" {
		return p.def.Domain, nil
	}
	d, err := socrata.CheckDomain(domain)
	if err != nil {
		return "", err
	}
	if d == p.def.Domain {
		return d, nil
	}
	if p.allow != nil && !p.allow[d] {
		allowed := append([]string{p.def.Domain}, p.allowed()...)
		return "", &socrata.DomainError{Domain: domain, NotServed: true,
			Reason: "this server serves only " + strings.Join(clipList(allowed, 20), ", ")}
	}
	if p.opts.Served != nil && !p.opts.Served(d) {
		return "", &socrata.DomainError{Domain: domain, NotServed: true, Reason: "the offline portal does not serve it (--data DOMAIN=FILE adds a domain)"}
	}
	return d, nil
}

// clipList keeps the first n entries of a list, saying how many more.
func clipList(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	return append(slices.Clip(list[:n]), fmt.Sprintf("and %d more", len(list)-n))
}

// Get returns the portal of domain ("" for the configured one), making
// its client on first use. A refused domain is a *socrata.DomainError and
// nothing was sent to it.
func (p *Registry) Get(ctx context.Context, domain string) (*Portal, error) {
	d, err := p.check(domain)
	if err != nil {
		return nil, err
	}
	if d == p.def.Domain {
		return p.def, nil
	}
	if v, ok := p.others.Get(d); ok {
		return v, nil
	}
	// The look-up is outside the lock: a slow resolver for one new portal
	// does not hold up the others (two first calls may both look up).
	if p.opts.LookupIP != nil {
		if err := p.lookup(ctx, domain, d); err != nil {
			return nil, err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.others.Get(d); ok {
		return v, nil
	}
	v := p.newPortal(d)
	p.others.Add(d, v)
	p.log.Debug("datasf: portal client made", "domain", d)
	return v, nil
}

// lookup checks that every address of d is public.
func (p *Registry) lookup(ctx context.Context, given, d string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	addrs, err := p.opts.LookupIP(ctx, d)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return &socrata.DomainError{Domain: given, Reason: "no such host"}
		}
		return &socrata.DomainError{Domain: given, Reason: "its addresses could not be looked up: " + err.Error()}
	}
	if len(addrs) == 0 {
		return &socrata.DomainError{Domain: given, Reason: "no such host"}
	}
	for _, a := range addrs {
		if !socrata.PublicAddr(a) {
			return &socrata.DomainError{Domain: given, Reason: "it resolves to " + a.String() + ", which is not a public address"}
		}
	}
	return nil
}

// newPortal makes the client and schema cache of domain d.
func (p *Registry) newPortal(d string) *Portal {
	copts := p.opts.Socrata
	copts.Domain = d
	copts.AppToken = p.opts.Tokens[d]
	p.opts.Limits.Apply(&copts)
	v := &Portal{Domain: d}
	if copts.BaseURL != "" {
		// One server answers for every domain (offline, tests): the
		// request names the domain in its Host header; no DNS.
		base := copts.HTTPClient
		if base == nil {
			base = &http.Client{Timeout: 30 * time.Second} // socrata's default
		}
		hc := *base
		next := hc.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		hc.Transport = hostTransport{host: d, next: next}
		copts.HTTPClient = &hc
	} else {
		tr := &http.Transport{
			DialContext:           socrata.PublicDialContext(&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}),
			ForceAttemptHTTP2:     true,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		}
		timeout := copts.Timeout
		if timeout <= 0 && copts.HTTPClient != nil {
			timeout = copts.HTTPClient.Timeout
		}
		copts.HTTPClient = &http.Client{Transport: tr, Timeout: timeout,
			// A portal's redirect must not lead the client to another host.
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) >= 5 || req.URL.Hostname() != d || req.URL.Scheme != "https" {
					return http.ErrUseLastResponse
				}
				return nil
			}}
		v.transport = tr
	}
	v.Client = socrata.NewClient(copts)
	v.Schemas = schemacache.New(v.Client, schemacache.Options{Size: domainSchemaCacheSize})
	return v
}

// hostTransport sends every request with its Host header set to host.
type hostTransport struct {
	host string
	next http.RoundTripper
}

func (t hostTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Host = t.host
	return t.next.RoundTrip(r)
}

// Domains returns the checked domains of a search's domain argument: one
// domain, several separated by commas, or "*" (every portal: the
// allowlist's, or all the Discovery API knows, nil). Each is checked as
// get checks it (its addresses too), though only the Discovery API is asked.
func (p *Registry) Domains(ctx context.Context, arg string) ([]string, error) {
	if len(arg) > MaxSearchDomains || strings.Count(arg, ",") >= MaxSearchPortals {
		return nil, &socrata.DomainError{Domain: clip(arg, 60),
			Reason: fmt.Sprintf("a search names at most %d domains (%d characters); use \"*\" for all", MaxSearchPortals, MaxSearchDomains)}
	}
	if strings.TrimSpace(arg) == "*" {
		if p.allow == nil {
			return nil, nil
		}
		return append([]string{p.def.Domain}, p.allowed()...), nil
	}
	var out []string
	for _, part := range strings.Split(arg, ",") {
		if strings.TrimSpace(part) == "" {
			return nil, &socrata.DomainError{Domain: arg, Reason: "it has an empty entry between commas"}
		}
		v, err := p.Get(ctx, strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, v.Domain) {
			out = append(out, v.Domain)
		}
	}
	return out, nil
}

// Permitted reports whether the tools may show a dataset of domain d.
func (p *Registry) Permitted(d string) bool {
	d = strings.ToLower(d)
	return p.allow == nil || d == p.def.Domain || p.allow[d]
}

// clip cuts s to at most n characters, marking the cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}
