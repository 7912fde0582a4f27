package localportal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// An Emulator can serve several portal domains at once, as the Socrata
// platform does: [Emulator.AddDomain] gives it an empty portal for another
// domain, loaded like any other. Requests are routed by their Host: the
// Views and Resource APIs of a domain answer for that domain's datasets
// only; a request to the listener's own address (an IP or localhost) is
// the first domain's; a host that is served by none is answered 404. The
// Discovery API (/api/catalog/v1) of the first portal answers for all of
// them, as api.us.socrata.com does: each result carries its domain in
// metadata.domain, the domains= filter picks portals (none: all), and
// /api/catalog/v1/domains lists the domains with their dataset counts.

// domainSet is the portals of the other domains an Emulator serves.
type domainSet struct {
	mu     sync.RWMutex
	byName map[string]*Emulator
}

// Domain returns the portal's domain (Options.Domain).
func (s *Emulator) Domain() string { return s.opts.Domain }

// AddDomain returns the portal of another domain that s serves too,
// making it (empty, not listening: s serves it) on first use. Load data
// into it with its own loaders; s.Close closes it.
func (s *Emulator) AddDomain(domain string) (*Emulator, error) {
	domain = strings.ToLower(strings.TrimSpace(domain))
	if domain == "" || strings.ContainsAny(domain, "/:@ ") {
		return nil, fmt.Errorf("localportal: AddDomain: %q is not a host name", domain)
	}
	if domain == s.opts.Domain {
		return nil, fmt.Errorf("localportal: AddDomain: %s is this portal's own domain", domain)
	}
	s.srvMu.Lock()
	if s.closed {
		s.srvMu.Unlock()
		return nil, errors.New("localportal: AddDomain after Close")
	}
	if s.others == nil {
		s.others = &domainSet{byName: map[string]*Emulator{}}
	}
	set := s.others
	s.srvMu.Unlock()
	set.mu.Lock()
	defer set.mu.Unlock()
	if p, ok := set.byName[domain]; ok {
		return p, nil
	}
	p, err := New(Options{Domain: domain, Logger: s.log, Now: s.opts.Now})
	if err != nil {
		return nil, err
	}
	set.byName[domain] = p
	return p, nil
}

// Domains returns the domains s serves: its own first, then the others
// in alphabetical order.
func (s *Emulator) Domains() []string {
	out := []string{s.opts.Domain}
	for _, p := range s.otherPortals() {
		out = append(out, p.opts.Domain)
	}
	return out
}

// DomainPortal returns the portal that serves domain: s itself or one
// made by AddDomain.
func (s *Emulator) DomainPortal(domain string) (*Emulator, bool) {
	domain = strings.ToLower(domain)
	if domain == s.opts.Domain {
		return s, true
	}
	set := s.otherSet()
	if set == nil {
		return nil, false
	}
	set.mu.RLock()
	defer set.mu.RUnlock()
	p, ok := set.byName[domain]
	return p, ok
}

func (s *Emulator) otherSet() *domainSet {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	return s.others
}

// otherPortals returns the portals AddDomain made, by domain.
func (s *Emulator) otherPortals() []*Emulator {
	set := s.otherSet()
	if set == nil {
		return nil
	}
	set.mu.RLock()
	out := make([]*Emulator, 0, len(set.byName))
	for _, p := range set.byName {
		out = append(out, p)
	}
	set.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Emulator) int { return strings.Compare(a.opts.Domain, b.opts.Domain) })
	return out
}

// federation is every portal whose datasets s's Discovery API answers
// for: s, then the other domains'.
func (s *Emulator) federation() []*Emulator {
	return append([]*Emulator{s}, s.otherPortals()...)
}

// route returns the portal that answers r (by its Host), or nil when no
// served domain has that host.
func (s *Emulator) route(r *http.Request) *Emulator {
	if s.otherSet() == nil {
		return s
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if p, ok := s.DomainPortal(host); ok {
		return p
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil || host == "localhost" || host == "" {
		return s // the listener's own address
	}
	return nil
}

// closeOthers closes the portals AddDomain made.
func (s *Emulator) closeOthers() {
	for _, p := range s.otherPortals() {
		p.Close()
	}
}

// serveDomains answers /api/catalog/v1/domains: every served domain with
// the number of datasets it publishes, most first, in the Discovery API's
// shape ({"results":[{"domain":…,"count":…}],"resultSetSize":…}).
func (s *Emulator) serveDomains(w http.ResponseWriter, _ *http.Request) {
	type entry struct {
		Domain string `json:"domain"`
		Count  int    `json:"count"`
	}
	var results []entry
	for _, p := range s.federation() {
		p.mu.RLock()
		n := len(p.order)
		p.mu.RUnlock()
		results = append(results, entry{p.opts.Domain, n})
	}
	slices.SortStableFunc(results, func(a, b entry) int { return b.Count - a.Count })
	writeJSON(w, http.StatusOK, map[string]any{
		"results":       results,
		"resultSetSize": len(results),
		"timings":       map[string]any{"serviceMillis": 1, "searchMillis": []int{0, 0}},
	})
}

// SplitDomainSpec reads the domain of a --data argument: "DOMAIN=SPEC"
// places SPEC ("FILE", "DIR" or "ID=FILE", see ParseDataSpec) on the
// portal DOMAIN (a host name with a dot, such as data.cityofchicago.org);
// anything else is SPEC on the default domain (domain "").
func SplitDomainSpec(spec string) (domain, rest string) {
	before, after, ok := strings.Cut(spec, "=")
	if !ok || after == "" || isDatasetID(before) || !looksLikeDomain(before) {
		return "", spec
	}
	domain = strings.ToLower(before)
	if to := socrata.KnownMove(domain); to != "" {
		domain = to // a portal's old name is its new one's
	}
	return domain, after
}

// looksLikeDomain reports whether s is a host name with at least two
// labels whose last begins with a letter (so no file name with a
// directory, and no IP address).
func looksLikeDomain(s string) bool {
	labels := strings.Split(strings.ToLower(s), ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" {
			return false
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	tld := labels[len(labels)-1]
	return tld[0] >= 'a' && tld[0] <= 'z'
}

// startOtherDomains gives s a portal for each domain of byDomain with its
// data files: loaded now with strict, else registered as loading and
// loaded in the background. They are built in memory (no cache files).
func (s *Emulator) startOtherDomains(ctx context.Context, byDomain map[string][]string, strict bool) error {
	domains := make([]string, 0, len(byDomain))
	for d := range byDomain {
		domains = append(domains, d)
	}
	slices.Sort(domains)
	for _, d := range domains {
		p, err := s.AddDomain(d)
		if err != nil {
			return err
		}
		files, reports, err := p.planFiles(ctx, byDomain[d])
		s.addReports(reports...)
		if err != nil {
			if strict {
				return fmt.Errorf("domain %s: %w", d, err)
			}
			s.log.Error("localportal: some data could not be read", "domain", d, "err", err)
		}
		if strict {
			if err := p.loadStrict(ctx, files); err != nil {
				return fmt.Errorf("domain %s: %w", d, err)
			}
			s.addReports(p.FileReports()...)
			continue
		}
		for _, f := range files {
			p.addPendingFile(f)
		}
		go p.loadBackground(files)
		s.log.Info("offline portal serves another domain", "domain", d, "data_files", len(files))
	}
	return nil
}
