package socratatest

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
)

// Request is one request the server received, as recorded by the request log.
// The app token itself is never recorded, only whether one was sent.
type Request struct {
	Endpoint     string // "catalog", "views", "resource", "query" (SODA3) or "other"
	Host         string // the Host it was sent to: a portal domain, or the server's address
	Method       string
	Path         string
	Query        url.Values
	Header       http.Header // X-App-Token is replaced by "[redacted]"
	AppTokenSent bool
}

// Fault is how the server answers a request it fails on purpose.
type Fault struct {
	Status int
	// RetryAfter, when positive, is sent as Retry-After, rounded up to
	// whole seconds.
	RetryAfter time.Duration
	// Body is the kind of body sent (default BodySocrata).
	Body Body
}

// Body is the kind of body of a Fault.
type Body int

const (
	// BodySocrata is Socrata's JSON error envelope for the status.
	BodySocrata Body = iota
	// BodyEmpty is no body at all, as a CDN in front of the portal
	// answers: "DataSF answers empty-body HTTP 425 under bursts"
	// (evidence burst-425).
	BodyEmpty
	// BodyNginxHTML is a bare nginx error page (text/html), as the old
	// host of a moved portal answers (evidence moves-select-403).
	BodyNginxHTML
	// BodyAuthRequired is the JSON of an anonymous request refused:
	// {"code":"authentication_required","error":true,"message":...},
	// how some portals throttle requests without an app token
	// (evidence soda3-token-required, anon-throttle-403).
	BodyAuthRequired
)

// controls holds the test controls and the request log.
type controls struct {
	mu       sync.Mutex
	failLeft int
	fail     Fault
	// burstPass requests pass, then burstFail are answered an empty 425,
	// over and over (SetBurst); burstN counts the cycle.
	burstPass, burstFail, burstN int
	stale                        bool
	latency                      time.Duration
	cutAfter                     int // -1: no cut; only the next response
	cutArmed                     bool
	token                        string
	total                        int            // requests since the last reset
	counts                       map[string]int // requests by endpoint since the last reset
	log                          requestLog
}

// requestLog keeps the newest max requests in a ring.
type requestLog struct {
	max  int
	reqs []Request // oldest at next once len(reqs) == max
	next int
}

func (l *requestLog) add(r Request) {
	switch {
	case l.max <= 0:
	case len(l.reqs) < l.max:
		l.reqs = append(l.reqs, r)
	default:
		l.reqs[l.next] = r
		l.next = (l.next + 1) % l.max
	}
}

// all returns the kept requests, oldest first.
func (l *requestLog) all() []Request {
	out := make([]Request, 0, len(l.reqs))
	out = append(out, l.reqs[l.next:]...)
	return append(out, l.reqs[:l.next]...)
}

func (l *requestLog) last() (Request, bool) {
	if len(l.reqs) == 0 {
		return Request{}, false
	}
	return l.reqs[(l.next+len(l.reqs)-1)%len(l.reqs)], true
}

// reset clears the controls and the log, whose size becomes maxRequests.
func (c *controls) reset(maxRequests int) {
	c.failLeft = 0
	c.burstPass, c.burstFail, c.burstN = 0, 0, 0
	c.stale = false
	c.latency = 0
	c.cutArmed = false
	c.token = ""
	c.total = 0
	c.counts = map[string]int{}
	c.log = requestLog{max: maxRequests}
}

// decision is what the controls decided for one request.
type decision struct {
	fail         *Fault
	stale        bool
	latency      time.Duration
	cutAfter     int
	tokenMissing bool
	tokenWrong   bool // a token was sent, not the one required
}

func (c *controls) record(r *http.Request, endpoint string) decision {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := r.Header.Clone()
	tok := h.Get("X-App-Token")
	if tok != "" {
		h.Set("X-App-Token", "[redacted]")
	}
	c.total++
	c.counts[endpoint]++
	c.log.add(Request{Endpoint: endpoint, Host: r.Host, Method: r.Method, Path: r.URL.Path,
		Query: r.URL.Query(), Header: h, AppTokenSent: tok != ""})
	d := decision{latency: c.latency, cutAfter: -1, stale: c.stale}
	if c.failLeft > 0 {
		c.failLeft--
		f := c.fail
		d.fail = &f
		return d
	}
	if c.burstFail > 0 && endpoint != localportal.EndpointCatalog {
		n := c.burstN
		c.burstN = (c.burstN + 1) % (c.burstPass + c.burstFail)
		if n >= c.burstPass {
			d.fail = &Fault{Status: http.StatusTooEarly, Body: BodyEmpty}
			return d
		}
	}
	if c.token != "" && tok != c.token {
		d.tokenMissing, d.tokenWrong = true, tok != ""
	}
	if c.cutArmed {
		c.cutArmed = false
		d.cutAfter = c.cutAfter
	}
	return d
}

// FailNext makes the next n requests (to any endpoint) fail with status
// and Socrata's JSON envelope. A 429 carries a Retry-After header of
// retryAfter rounded up to whole seconds (when retryAfter > 0). A later
// call replaces an earlier one.
func (s *Server) FailNext(n int, status int, retryAfter time.Duration) {
	if status != http.StatusTooManyRequests {
		retryAfter = 0
	}
	s.Fail(n, Fault{Status: status, RetryAfter: retryAfter})
}

// Fail makes the next n requests (to any endpoint) fail as f says. A later
// call replaces an earlier one, and FailNext's.
func (s *Server) Fail(n int, f Fault) {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	s.ctl.failLeft = n
	s.ctl.fail = f
}

// SetBurst makes the server answer as DataSF's CDN does under bursts:
// of every pass+fail requests to the portal's APIs (not Discovery), the
// first pass are served and the next fail answer HTTP 425 with an empty
// body ("DataSF answers empty-body HTTP 425 under bursts, even with an
// app token", evidence burst-425). The cycle counts
// requests, not time, so tests do not depend on the clock. fail 0 turns
// it off.
func (s *Server) SetBurst(pass, fail int) {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	s.ctl.burstPass, s.ctl.burstFail, s.ctl.burstN = max(pass, 0), max(fail, 0), 0
}

// SetStale makes every answer carry X-SODA2-Data-Out-Of-Date: true, as a
// stale replica's do (evidence stale-replica-header).
func (s *Server) SetStale(stale bool) {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	s.ctl.stale = stale
}

// SetLatency delays every response by d (0 turns it off). A request whose
// context ends during the delay gets no response.
func (s *Server) SetLatency(d time.Duration) {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	s.ctl.latency = d
}

// CutBodyAfter makes the next response send only its first n body bytes and
// then close the connection, as a dropped connection would.
func (s *Server) CutBodyAfter(n int) {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	s.ctl.cutAfter = max(n, 0)
	s.ctl.cutArmed = true
}

// RequireAppToken makes every request without exactly this X-App-Token
// header fail with 403: without one, "You must be logged in to access this
// resource"; with another, Socrata's answer to an invalid token,
// {"code":"permission_denied","error":true,"message":"Invalid app_token
// specified"} (evidence error-shapes). An empty token removes the
// requirement.
func (s *Server) RequireAppToken(token string) {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	s.ctl.token = token
}

// RequestCount returns how many requests reached endpoint ("catalog",
// "views", "resource", "query", "other") since the server started or was Reset; ""
// counts all of them. It counts requests the log no longer keeps.
func (s *Server) RequestCount(endpoint string) int {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	if endpoint == "" {
		return s.ctl.total
	}
	return s.ctl.counts[endpoint]
}

// Requests returns a copy of the request log, oldest first: the newest
// Options.MaxRequests requests.
func (s *Server) Requests() []Request {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	return s.ctl.log.all()
}

// LastRequest returns the most recent request and whether there was one.
func (s *Server) LastRequest() (Request, bool) {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	return s.ctl.log.last()
}

// Reset clears the test controls (failures, latency, cut, token
// requirement), the request log and the request counts. Loaded data is
// kept.
func (s *Server) Reset() {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	s.ctl.reset(s.ctl.log.max)
}

func writeFailure(w http.ResponseWriter, f Fault) {
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(f.RetryAfter.Seconds()))))
	}
	switch f.Body {
	case BodyEmpty:
		w.WriteHeader(f.Status)
		return
	case BodyNginxHTML:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(f.Status)
		text := fmt.Sprintf("%d %s", f.Status, http.StatusText(f.Status))
		fmt.Fprintf(w, "<html>\r\n<head><title>%s</title></head>\r\n<body>\r\n<center><h1>%s</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n", text, text)
		return
	case BodyAuthRequired:
		localportal.WriteJSON(w, f.Status, map[string]any{"code": "authentication_required", "error": true,
			"message": "This request must be authenticated or have an application token"})
		return
	}
	body := map[string]any{"error": true, "message": http.StatusText(f.Status)}
	switch f.Status {
	case http.StatusTooManyRequests:
		body = map[string]any{"error": true, "message": "Too many requests"}
	case http.StatusInternalServerError:
		body = map[string]any{"error": true, "message": "Internal error", "status": 500}
	case http.StatusAccepted:
		body = map[string]any{"message": "Processing, please retry"}
	}
	localportal.WriteJSON(w, f.Status, body)
}
