// Package portal is the Socrata portals the tools talk to: a Registry
// resolves a tool's domain argument once (checked, allowed, its addresses
// public) into a *Target, the value that carries the portal's client (with
// its own app token, retries and back-off) and schema cache to whatever
// reads the portal. A Query (a portal, a dataset and a parsed tree) runs
// SoQL on it, now for a tool, and later, for pages and exports, as the
// Executor prepares it again from a stored dualresp.Query.
//
// It is imported by package datasf (the tools and the composition root)
// only; it is not a library API.
package portal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/datasf-mcp/datasf-mcp/schemacache"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Every portal tool takes a domain: the configured one (Config.Socrata's
// Domain, data.sf.gov by default) when the call names none, else any
// public Socrata portal, or only those of Config.Domains. A domain is
// checked before anything is sent (socrata.CheckDomain: a DNS host name
// and nothing else; then, where the portals are reached directly, its
// addresses must all be public, and the dialer checks each connection
// again, so a name that comes to resolve to a private address later is
// refused too). Each domain has its own socrata.Client (its own app token
// from Config.AppTokens, retries and 429 back-off) and its own schema
// cache; at most MaxDomains of them are kept, the least recently used
// going first.
//
// A portal that moved is followed here, never by an HTTP client (each
// follows no redirect): a known move (socrata.KnownMove, the old name of
// DataSF) is resolved before anything is sent, wherever a domain is named
// (the tool argument, the configured domain, the allowlist, the app
// tokens' keys, a stored query); a move a portal answers (a redirect to
// the same API on another host: the client reports a
// *socrata.MovedError and follows nothing) is followed by Run, which
// checks the new host as Get checks any domain (its name, the allowlist,
// public addresses), gives it its own client, limits and token, and runs
// the request again there. A tool's reads of a portal all follow a move
// that way: its first read through Run, every later one through a Reader
// (Run's loop: a Query's count, pages and stream, the hints, the null
// group's count, the column statistics, search's row counts). A move is
// remembered for the process (Get resolves the old name from
// then on), logged once, and an answer says it in one line (Moved).

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

// Target is one Socrata portal the tools talk to, resolved once by a
// Registry: its domain, its client (which holds the portal's app token) and
// its schema cache.
type Target struct {
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
	// Default is the configured portal: its Domain, Client and Schemas.
	// Nil, or without a Client: the registry makes it from Socrata (its
	// Domain, after a known move; its AppToken, else Tokens') as it makes
	// every other portal, so that it is reached the same way (the Host
	// header, the public-address dialer, proxies, moves followed).
	Default *Target
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
	def   *Target
	opts  Options
	allow map[string]bool // nil: any public portal
	// Catalog makes cross-portal Discovery requests (no app token).
	Catalog *socrata.Client
	log     *slog.Logger

	mu     sync.Mutex // serialises making a portal (not its address look-up)
	others *lru.Cache[string, *Target]

	// given is the configured domain as the configuration named it (an
	// old name, possibly).
	given string
	// moves are the moves portals answered (old name to new), learnt by
	// Run, for the process; guarded by movesMu.
	movesMu sync.Mutex
	moves   map[string]string
}

// New returns the Registry of opts.Default and the other portals opts
// allows.
func New(opts Options) (*Registry, error) {
	p := &Registry{opts: opts, log: opts.Logger, moves: map[string]string{}}
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
			// Either name of a portal that moved permits it.
			p.allow[current(checked)] = true
		}
		size = max(len(p.allow), 1)
	}
	tokens := map[string]string{}
	for d, tok := range opts.Tokens {
		checked, err := socrata.CheckDomain(d)
		if err != nil {
			return nil, fmt.Errorf("the app tokens by domain: %w", err)
		}
		if now := current(checked); now != checked {
			// An old name's token is the new name's, unless that has
			// its own.
			if _, own := opts.Tokens[now]; own {
				continue
			}
			checked = now
		}
		tokens[checked] = tok
	}
	p.opts.Tokens = tokens
	switch {
	case opts.Default != nil && opts.Default.Client != nil:
		p.def = opts.Default
		if p.def.Domain == "" {
			p.def.Domain = p.def.Client.Domain()
		}
		p.given = p.def.Domain
	default:
		p.given = cmp.Or(strings.TrimSpace(opts.Socrata.Domain), socrata.DefaultDomain)
		d, err := socrata.CheckDomain(p.given)
		if err != nil && opts.Socrata.BaseURL == "" {
			return nil, fmt.Errorf("the configured domain: %w", err)
		}
		if err != nil {
			d = strings.ToLower(p.given) // one server answers for it (tests)
		}
		d = current(d)
		p.def = p.newTarget(d, cmp.Or(opts.Socrata.AppToken, tokens[d]), schemacache.Options{})
		if old := strings.ToLower(p.given); old != d {
			p.log.Info("the configured portal has moved; using its new name", "domain", old, "moved_to", d)
		}
		if opts.Default != nil {
			*opts.Default = *p.def
			p.def = opts.Default
		}
	}
	p.def.Configured = true
	var err error
	p.others, err = lru.NewWithEvict(size, func(_ string, v *Target) {
		if v.transport != nil {
			v.transport.CloseIdleConnections()
		}
	})
	if err != nil {
		return nil, err
	}
	copts := p.opts.Socrata
	copts.AppToken = ""
	copts.Domain = p.def.Domain
	opts.Limits.Apply(&copts)
	p.Catalog = socrata.NewClient(copts)
	return p, nil
}

// current returns the name a portal has now: domain, or where the table
// of known moves says it went (a bounded chain).
func current(domain string) string {
	for range socrata.MaxMoves {
		to := socrata.KnownMove(domain)
		if to == "" {
			break
		}
		domain = to
	}
	return domain
}

// current returns the name a portal has now, after the known moves and
// those portals answered.
func (p *Registry) current(domain string) string {
	p.movesMu.Lock()
	defer p.movesMu.Unlock()
	for range socrata.MaxMoves {
		to := socrata.KnownMove(domain)
		if to == "" {
			to = p.moves[domain]
		}
		if to == "" {
			break
		}
		domain = to
	}
	return domain
}

// Run runs f on v, a portal Get gave, and returns the portal f last ran
// on. When f fails with a *socrata.MovedError (v answered that it moved),
// Run follows the move: it checks the new host as Get checks any domain,
// remembers the move for the process (logged once) and runs f again on
// the new host's portal, with its own client, token and limits. A new
// host that is refused is the *socrata.MovedError, its Refused set; a
// chain of more than socrata.MaxMoves moves, or a loop, is an error.
func (p *Registry) Run(ctx context.Context, v *Target, f func(*Target) error) (*Target, error) {
	t := p.Reader(v).Try()
	for {
		again, err := t.Next(ctx, f(t.Portal()))
		if !again {
			return t.Portal(), err
		}
	}
}

// Reader reads one portal through the registry: each request is a Try,
// so a move the portal answers to any request (a tool's first read of
// it, or a later one: a count, a page, a hint, a stored query's export)
// is followed as Run follows it, and the Reader's later requests go to
// the new host. It is safe for concurrent use.
type Reader struct {
	reg *Registry // nil: moves are not followed
	on  atomic.Pointer[Target]
}

// Reader returns the Reader of v, a portal Get or Run gave. On a nil
// Registry, a move is not followed: it is the *socrata.MovedError.
func (p *Registry) Reader(v *Target) *Reader {
	r := &Reader{reg: p}
	r.on.Store(v)
	return r
}

// Portal returns the portal r reads now: the one it was made for, or the
// one a move it followed led to.
func (r *Reader) Portal() *Target { return r.on.Load() }

// Query runs soql on a dataset of r's portal (socrata.Client.Query), a
// move followed.
func (r *Reader) Query(ctx context.Context, datasetID, soql string) (*socrata.Result, error) {
	t := r.Try()
	for {
		res, err := t.Portal().Client.Query(ctx, datasetID, soql)
		if again, err := t.Next(ctx, err); !again {
			return res, err
		}
	}
}

// Schema returns a dataset's schema through r's portal's cache
// (schemacache.Cache.Schema: cached reports whether it was kept), a move
// followed.
func (r *Reader) Schema(ctx context.Context, datasetID string) (*socrata.Schema, bool, error) {
	t := r.Try()
	for {
		sc, cached, err := t.Portal().Schemas.Schema(ctx, datasetID)
		if again, err := t.Next(ctx, err); !again {
			return sc, cached, err
		}
	}
}

// Try is one request through a Reader: sent to Portal and, after each
// move Next follows, sent again there. It is Run's loop without a
// function value, for the paths whose frames are counted (a query's
// sample and count, docs/architecture.md):
//
//	t := r.Try()
//	for again := true; again; {
//		res, err = t.Portal().Client.Query(ctx, id, soql)
//		again, err = t.Next(ctx, err)
//	}
type Try struct {
	r    *Reader
	at   *Target
	seen []string // the hosts tried, in order
}

// Try starts a request on r's portal.
func (r *Reader) Try() *Try {
	at := r.on.Load()
	return &Try{r: r, at: at, seen: []string{at.Domain}}
}

// Portal returns the portal to send the request to.
func (t *Try) Portal() *Target { return t.at }

// Next reads err, Portal's answer to the request. When it is a
// *socrata.MovedError the registry follows (the new host checked as Get
// checks any domain, the move remembered for the process and logged
// once), Portal becomes the new host's, as does the Reader's, and again
// is true: send the request again. Otherwise it returns err, or why the
// move was not followed: the *socrata.MovedError with Refused set, a
// chain of more than socrata.MaxMoves moves, a loop.
func (t *Try) Next(ctx context.Context, err error) (again bool, _ error) {
	var mv *socrata.MovedError
	reg := t.r.reg
	if reg == nil || !errors.As(err, &mv) || mv.Refused != nil {
		return false, err
	}
	if len(t.seen) > socrata.MaxMoves {
		return false, fmt.Errorf("portal: %s moved more than %d times in a row; not followed further: %w", t.seen[0], socrata.MaxMoves, err)
	}
	next, ferr := reg.Get(ctx, mv.To)
	if ferr != nil {
		refused := *mv // a copy: the error may be shared (a schema cache's)
		refused.Refused = ferr
		return false, &refused
	}
	if slices.Contains(t.seen, next.Domain) {
		return false, fmt.Errorf("portal: %s and %s redirect to each other; the portal cannot be reached: %w", t.at.Domain, mv.To, err)
	}
	reg.learn(t.at.Domain, next.Domain)
	t.r.on.CompareAndSwap(t.at, next) // a concurrent request may have moved it already
	t.seen = append(t.seen, next.Domain)
	t.at = next
	return true, nil
}

// learn remembers that the portal from moved to to, logging it the first
// time.
func (p *Registry) learn(from, to string) {
	p.movesMu.Lock()
	known := p.moves[from] == to
	p.moves[from] = to
	p.movesMu.Unlock()
	if !known {
		p.log.Warn("a portal answered that it has moved; following it for the rest of this process",
			"domain", from, "moved_to", to)
	}
}

// Moved returns the portal a tool's domain argument given ("" for the
// configured portal) runs on now, and the one line its answer says when
// that portal has moved ("data.sfgov.org has moved to data.sf.gov; this
// ran there."), else "". v is the portal Run ran on for given: a move
// another call learnt since is resolved here.
func (p *Registry) Moved(ctx context.Context, given string, v *Target) (*Target, string) {
	name := strings.ToLower(strings.TrimSpace(given))
	if name == "" {
		name = strings.ToLower(p.given)
	}
	if p.current(v.Domain) != v.Domain {
		if now, err := p.Get(ctx, given); err == nil {
			v = now
		}
	}
	if name == v.Domain {
		return v, ""
	}
	return v, name + " has moved to " + v.Domain + "; this ran there."
}

// Default returns the configured portal.
func (p *Registry) Default() *Target { return p.def }

// Known lists the portals this server knows without asking Discovery:
// the configured portal, then the allowlist's, sorted.
func (p *Registry) Known() []string {
	out := []string{p.def.Domain}
	for _, d := range p.allowed() {
		if d != p.def.Domain {
			out = append(out, d)
		}
	}
	return out
}

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
	d := p.def.Domain
	if domain != "" {
		checked, err := socrata.CheckDomain(domain)
		if err != nil {
			return "", err
		}
		d = checked
	}
	if d = p.current(d); d == p.def.Domain {
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
func (p *Registry) Get(ctx context.Context, domain string) (*Target, error) {
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
	v := p.newTarget(d, p.opts.Tokens[d], schemacache.Options{Size: domainSchemaCacheSize})
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

// newTarget makes the client and schema cache of domain d, with token.
func (p *Registry) newTarget(d, token string, cache schemacache.Options) *Target {
	copts := p.opts.Socrata
	copts.Domain = d
	copts.AppToken = token
	p.opts.Limits.Apply(&copts)
	v := &Target{Domain: d}
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
		tr := directTransport()
		copts.HTTPClient = directClient(copts, tr)
		v.transport = tr
	}
	v.Client = socrata.NewClient(copts)
	v.Schemas = schemacache.New(v.Client, cache)
	return v
}

// directTransport is the transport of a portal reached over the network:
// HTTPS_PROXY, HTTP_PROXY and NO_PROXY apply (http.ProxyFromEnvironment),
// and every connection the server itself makes to a portal goes to a
// public address only (socrata.PublicDialContext), checked after DNS,
// so a name that comes to resolve to a private address is refused. A
// connection to the proxy the environment names is the user's choice and
// is not checked: the proxy reaches the portal.
func directTransport() *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	public := socrata.PublicDialContext(d)
	var proxies sync.Map // "host:port" of the proxies the environment named
	return &http.Transport{
		Proxy: func(req *http.Request) (*url.URL, error) {
			u, err := http.ProxyFromEnvironment(req)
			if u != nil {
				proxies.Store(proxyAddr(u), true)
			}
			return u, err
		},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if _, ok := proxies.Load(addr); ok {
				return d.DialContext(ctx, network, addr)
			}
			return public(ctx, network, addr)
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// proxyAddr is the "host:port" a transport dials for proxy u.
func proxyAddr(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	switch u.Scheme {
	case "https":
		port = "443"
	case "socks5", "socks5h":
		port = "1080"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// directClient is the HTTP client of a portal reached over the network
// through tr, with copts' timeout (socrata.NewClient makes it follow no
// redirect: a move is followed by Run, never by the client).
func directClient(copts socrata.Options, tr *http.Transport) *http.Client {
	timeout := copts.Timeout
	if timeout <= 0 && copts.HTTPClient != nil {
		timeout = copts.HTTPClient.Timeout
	}
	return &http.Client{Transport: tr, Timeout: timeout}
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
	d = p.current(strings.ToLower(d))
	return p.allow == nil || d == p.def.Domain || p.allow[d]
}

// clip cuts s to at most n characters, marking the cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}
