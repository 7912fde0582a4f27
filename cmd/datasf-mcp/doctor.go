package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/portal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// doctor is what a user runs when the portal misbehaves: each check prints
// one line, "ok", "FAIL" (with the fix) or "skip" (with why), and the
// command exits 0 only when none failed. The checks follow what the live
// portals were seen to do: DataSF's move, its HTML 403 to queries on the old host, Discovery's
// search_context, empty-body 425 bursts, counts as strings, a possibly
// incomplete TLS chain.

// sfSample is the dataset doctor reads on data.sf.gov when --dataset is
// not given: police incidents, a dataset served live on data.sf.gov.
const sfSample = "wg3w-h783"

// checkLine is one check's outcome.
type checkLine struct {
	name   string
	status string // "ok", "FAIL" or "skip"
	detail string
	fix    string
}

func (c checkLine) String() string {
	s := fmt.Sprintf("%-4s  %-9s  %s", c.status, c.name, c.detail)
	if c.fix != "" {
		s += "; fix: " + c.fix
	}
	return s
}

// errDoctor is doctor's error when a check failed: the lines said why.
var errDoctor = errors.New("doctor: a check failed (see the FAIL lines above)")

// seen records the portal's statuses and Retry-After headers, for the
// limits line.
type seen struct {
	mu         sync.Mutex
	requests   int
	answered   int         // requests the portal answered (any HTTP status)
	throttled  map[int]int // status: count, for 425, 429 and 503
	retryAfter []string
}

func (s *seen) roundTrip(next http.RoundTripper, host string) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if host != "" {
			r = r.Clone(r.Context())
			r.Host = host // one server answers for every domain (--base-url)
		}
		resp, err := next.RoundTrip(r)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests++
		if resp != nil {
			s.answered++
			switch resp.StatusCode {
			case http.StatusTooEarly, http.StatusTooManyRequests, http.StatusServiceUnavailable:
				s.throttled[resp.StatusCode]++
				if ra := resp.Header.Get("Retry-After"); ra != "" {
					s.retryAfter = append(s.retryAfter, ra)
				}
			}
		}
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// runDoctor checks the portal cfg names (--domain) and prints a line per
// check to cfg.Stdout.
func runDoctor(ctx context.Context, cfg config, log *slog.Logger) error {
	if cfg.Offline {
		return errors.New("doctor checks a live portal; --offline has none to check (drop --offline)")
	}
	failed := false
	add := func(name, status, detail, fix string) {
		failed = failed || status == "FAIL"
		fmt.Fprintln(cfg.Stdout, checkLine{name, status, detail, fix})
	}
	result := func() error {
		if failed {
			return errDoctor
		}
		return nil
	}

	// 1. The name.
	domain, err := socrata.CheckDomain(cfg.Domain)
	if err != nil {
		add("name", "FAIL", err.Error(), "give the portal's host name with --domain, e.g. "+socrata.DefaultDomain)
		return errDoctor
	}
	switch {
	case cfg.BaseURL != "":
		add("name", "skip", domain+" is not looked up: --base-url "+cfg.BaseURL+" answers for every domain", "")
	default:
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		addrs, err := net.DefaultResolver.LookupNetIP(lctx, "ip", domain)
		cancel()
		var private []string
		for _, a := range addrs {
			if !socrata.PublicAddr(a) {
				private = append(private, a.String())
			}
		}
		switch {
		case err != nil:
			add("name", "FAIL", domain+" does not resolve: "+err.Error(), "check the name and this machine's DNS (or its proxy: HTTPS_PROXY)")
		case len(private) > 0:
			add("name", "FAIL", domain+" resolves to "+strings.Join(private, ", ")+", not a public address; datasf-mcp refuses it", "use the portal's public name")
		default:
			add("name", "ok", fmt.Sprintf("%s resolves to %s", domain, nouns(int64(len(addrs)), "public address", "public addresses")), "")
		}
	}

	// 2. TLS.
	add(checkTLS(ctx, domain, cfg.BaseURL))

	// The client: no retries beyond the product's, every request recorded.
	rec := &seen{throttled: map[int]int{}}
	client := func(d string) *socrata.Client {
		host := ""
		if cfg.BaseURL != "" {
			host = d
		}
		// The token the server would send: the one token for every
		// portal, else the portal's own (internal/portal's rule).
		opts := socrata.Options{Domain: d, BaseURL: cfg.BaseURL, DiscoveryURL: cfg.DiscoveryURL, AppToken: cmp.Or(cfg.AppToken, cfg.AppTokens[d]),
			Timeout: cfg.UpstreamTimeout, Logger: log, MaxRetryWait: 20 * time.Second,
			HTTPClient: &http.Client{Transport: rec.roundTrip(http.DefaultTransport, host)}}
		limits := portal.Limits{MaxConcurrent: cfg.UpstreamConcurrency, Rate: cfg.UpstreamRate, MaxWait: cfg.UpstreamWait}.Resolve(false)
		limits.Apply(&opts)
		return socrata.NewClient(opts)
	}

	// 3. Moves: a known one, then the portal's own answer.
	dataset := cfg.Dataset
	if to := socrata.KnownMove(domain); to != "" {
		add("moved", "FAIL", domain+" has moved to "+to+" (its old host refuses queries with an HTML 403); the checks below are of "+to,
			"use --domain "+to+" (DATASF_DOMAIN="+to+"); datasf-mcp already sends "+domain+"'s requests there")
		domain = to
	}
	c := client(domain)
	if dataset == "" && domain == socrata.DefaultDomain {
		dataset = sfSample
	}

	// 4. Discovery, with search_context.
	ds, derr := c.List(ctx, "", 1)
	switch {
	case derr != nil:
		add("discovery", "FAIL", "the Discovery API did not list "+domain+"'s datasets: "+trimPrefix(derr), "check --discovery-url and the network; run again later")
	case len(ds) == 0:
		add("discovery", "FAIL", "the Discovery API lists no dataset of "+domain+" (domains and search_context="+domain+")",
			"check the domain: a portal that left Socrata, or an old name, has none")
	default:
		add("discovery", "ok", fmt.Sprintf("lists %s's datasets (search_context=%s), e.g. %s", domain, domain, ds[0].ID), "")
		if dataset == "" {
			dataset = ds[0].ID
		}
	}
	if dataset == "" {
		add("schema", "skip", "no dataset to read: Discovery gave none", "name one with --dataset ID")
		finishDoctor(cfg, rec, add, cmp.Or(cfg.AppToken, cfg.AppTokens[domain]), domain, derr)
		return result()
	}

	// 5. Schema: the Views document (and the move, if the host answers
	// that it moved).
	sc, serr := c.Schema(ctx, dataset)
	var mv *socrata.MovedError
	switch {
	case errors.As(serr, &mv):
		add("moved", "FAIL", fmt.Sprintf("%s answers that it has moved to %s (HTTP %d)", mv.Domain, mv.To, mv.StatusCode),
			"use --domain "+mv.To+"; datasf-mcp follows the move by itself when the new host is allowed")
		add("schema", "skip", "not read: the portal moved", "")
	case serr != nil:
		if socrata.KnownMove(cfg.Domain) == "" {
			add("moved", "skip", "not known: the schema read failed for another reason", "")
		}
		add("schema", "FAIL", "reading "+dataset+": "+trimPrefix(serr), fixFor(serr, domain))
	default:
		if socrata.KnownMove(cfg.Domain) == "" {
			add("moved", "ok", domain+" answered itself (no redirect)", "")
		}
		add("schema", "ok", fmt.Sprintf("%s (%s): %s", sc.Name, dataset, nouns(int64(len(sc.Columns)), "column", "")), "")
	}

	// 6. A small query and a count.
	var qerr error
	if serr == nil {
		res, err := c.Query(ctx, dataset, "SELECT * LIMIT 1")
		qerr = err
		switch {
		case err != nil:
			add("query", "FAIL", "SELECT * LIMIT 1 on "+dataset+": "+trimPrefix(err), fixFor(err, domain))
		case res.Stale:
			add("query", "ok", nouns(int64(len(res.Rows)), "row", "")+"; the replica says its data is out of date (X-SODA2-Data-Out-Of-Date)", "")
		default:
			add("query", "ok", nouns(int64(len(res.Rows)), "row", "")+", "+nouns(int64(len(res.Fields)), "field", ""), "")
		}
		res, err = c.Query(ctx, dataset, "SELECT count(*) AS n")
		if qerr == nil {
			qerr = err
		}
		switch {
		case err != nil:
			add("count", "FAIL", "SELECT count(*) on "+dataset+": "+trimPrefix(err), fixFor(err, domain))
		case len(res.Rows) == 1:
			rows := "rows"
			if fmt.Sprint(res.Rows[0]["n"]) == "1" {
				rows = "row"
			}
			add("count", "ok", fmt.Sprintf("%v %s (sent as %T)", res.Rows[0]["n"], rows, res.Rows[0]["n"]), "")
		default:
			add("count", "FAIL", fmt.Sprintf("the count query answered %d rows, want 1", len(res.Rows)), "report it: the portal's answer is not Socrata's")
		}
	}
	finishDoctor(cfg, rec, add, cmp.Or(cfg.AppToken, cfg.AppTokens[domain]), domain, errors.Join(derr, serr, qerr))
	return result()
}

// finishDoctor adds the token and limits lines; err is the checks'
// failures.
func finishDoctor(cfg config, rec *seen, add func(name, status, detail, fix string), token, domain string, err error) {
	var api *socrata.APIError
	switch {
	case token == "":
		// Nothing to check: skip, not ok (a check that did not run never says ok).
		add("token", "skip", "none set: anonymous requests, which portals throttle harder", "")
	case errors.As(err, &api) && (api.Code == "permission_denied" || strings.Contains(strings.ToLower(api.Message), "app_token")):
		add("token", "FAIL", "the portal refused the app token: "+api.Message, "check SOCRATA_APP_TOKEN (or DATASF_APP_TOKENS) for "+domain)
	case err == nil:
		add("token", "ok", "accepted", "")
	default:
		add("token", "skip", "not known: the requests failed for another reason", "")
	}
	limits := portal.Limits{MaxConcurrent: cfg.UpstreamConcurrency, Rate: cfg.UpstreamRate, MaxWait: cfg.UpstreamWait}.Resolve(false)
	detail := fmt.Sprintf("this server sends at most %d requests at once and %g a second to %s", limits.MaxConcurrent, limits.Rate, domain)
	if token != "" {
		detail += fmt.Sprintf(" (x%g with the token)", limits.TokenFactor)
	}
	rec.mu.Lock()
	var throttled []string
	for _, st := range []int{http.StatusTooEarly, http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		if n := rec.throttled[st]; n > 0 {
			throttled = append(throttled, fmt.Sprintf("HTTP %d to %d", st, n))
		}
	}
	retry := "no Retry-After"
	if len(rec.retryAfter) > 0 {
		retry = "Retry-After " + strings.Join(rec.retryAfter, ", ")
	}
	requests, answered := rec.requests, rec.answered
	rec.mu.Unlock()
	var rl *socrata.RateLimitError
	switch {
	case answered == 0:
		// No answer, no throttling seen: that says nothing of the limits.
		add("limits", "skip", fmt.Sprintf("%s; not known: the portal answered none of %s", detail, nouns(int64(requests), "request", "")), "")
	case errors.As(err, &rl):
		add("limits", "FAIL", fmt.Sprintf("%s; the portal kept refusing: %s of %s, %s", detail, strings.Join(throttled, " and "), nouns(int64(requests), "request", ""), retry),
			"wait a minute and run again; lower --upstream-rate (DataSF answers bursts with 425, token or not)")
	case len(throttled) > 0:
		add("limits", "ok", fmt.Sprintf("%s; the portal answered %s of %s, retried (%s)", detail, strings.Join(throttled, " and "), nouns(int64(requests), "request", ""), retry), "")
	default:
		add("limits", "ok", fmt.Sprintf("%s; no throttling in %s", detail, nouns(int64(answered), "answered request", "")), "")
	}
}

// checkTLS checks that the portal's certificate verifies.
func checkTLS(ctx context.Context, domain, baseURL string) (name, status, detail, fix string) {
	if baseURL != "" {
		if !strings.HasPrefix(baseURL, "https://") {
			return "tls", "skip", "--base-url " + baseURL + " is not https", ""
		}
		return "tls", "skip", "not checked through --base-url", ""
	}
	if os.Getenv("HTTPS_PROXY") != "" || os.Getenv("https_proxy") != "" {
		return "tls", "skip", "not checked: requests go through HTTPS_PROXY", ""
	}
	return tlsCheck(ctx, domain, net.JoinHostPort(domain, "443"), nil, time.Now)
}

// tlsCheck is checkTLS's handshake with addr as domain, trusting roots
// (nil: the system's) at now's time.
func tlsCheck(ctx context.Context, domain, addr string, roots *x509.CertPool, now func() time.Time) (name, status, detail, fix string) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := (&tls.Dialer{Config: &tls.Config{ServerName: domain, RootCAs: roots, Time: now}}).DialContext(dctx, "tcp", addr)
	if err == nil {
		conn.Close()
		return "tls", "ok", "the certificate of " + domain + " verifies", ""
	}
	var (
		unknown x509.UnknownAuthorityError
		invalid x509.CertificateInvalidError
		host    x509.HostnameError
	)
	switch {
	case errors.As(err, &unknown):
		// "UNVERIFIED: data.sf.gov may send an incomplete TLS chain"
		// (evidence tls-chain-unverified): Go does not fetch
		// a missing intermediate.
		return "tls", "FAIL", "the certificate chain of " + domain + " does not verify (" + err.Error() + "): the server may send its certificate without the intermediate, which Go does not fetch",
			"install the missing intermediate certificate in this system's trust store, and tell the portal's operators"
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return "tls", "FAIL", "the certificate of " + domain + " is expired or not yet valid at this machine's time (" + now().UTC().Format(time.RFC3339) + ")",
			"check this machine's clock"
	case errors.As(err, &host):
		return "tls", "FAIL", err.Error(), "check the domain: the certificate is another host's"
	}
	return "tls", "FAIL", "no TLS connection to " + domain + ":443: " + err.Error(), "check the network (and HTTPS_PROXY)"
}

// fixFor is the fix of a failed request.
func fixFor(err error, domain string) string {
	var (
		rl  *socrata.RateLimitError
		api *socrata.APIError
	)
	switch {
	case errors.As(err, &rl):
		return "wait a minute and run again; see the limits line"
	case errors.As(err, &api) && api.Code == "permission_denied":
		return "check SOCRATA_APP_TOKEN (or DATASF_APP_TOKENS) for " + domain
	case errors.Is(err, socrata.ErrNotFound):
		return "name a dataset of " + domain + " with --dataset ID"
	case errors.As(err, &api) && (api.Code == "html_response" || api.Code == "empty_response" || api.Code == "redirect"):
		return "something other than Socrata's API answered: check the domain, --base-url and HTTPS_PROXY"
	case errors.As(err, &api):
		return "see the portal's message"
	}
	return "check the network, HTTPS_PROXY and the portal's status; run again later"
}

// trimPrefix drops the "socrata: " of an error text.
func trimPrefix(err error) string {
	return strings.TrimPrefix(err.Error(), "socrata: ")
}
