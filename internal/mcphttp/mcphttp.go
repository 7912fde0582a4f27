// Package mcphttp serves an MCP server over Streamable HTTP beside a REST
// API, with the checks a server on a user's machine needs: a Host check
// against DNS rebinding, an Origin check for browsers, bearer tokens,
// bounded bodies, session ids that end when idle, and JSON-RPC batches where
// the protocol version has them.
//
// It is imported by package datasf (the composition root) only; it is not
// a library API.
package mcphttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/redis/go-redis/v9"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// Options configures New. Every zero field means the default.
type Options struct {
	// PublicURL is the base URL of the server as its clients reach it,
	// e.g. "http://127.0.0.1:8765": its host passes the Host check and its
	// origin the Origin check.
	PublicURL string
	// Auth, when set, identifies callers by bearer token (see
	// dualresp.BearerTokens): /mcp requires one, and the tool calls of a
	// caller run as its owner (dualresp.WithOwner).
	Auth func(*http.Request) (owner string, err error)
	// CORSOrigins are the browser origins allowed besides the server's own
	// ("*" for any).
	CORSOrigins []string
	// SessionIdleTimeout ends a session that sent nothing for this long
	// (default DefaultSessionIdleTimeout).
	SessionIdleTimeout time.Duration
	// MaxSessions bounds the live sessions (default DefaultMaxSessions);
	// past it, initialize is answered 429.
	MaxSessions int
	// MaxSessionsPerClient bounds the live sessions of one client, a bearer
	// token or else a remote address with its client key, and of one
	// identity (token or address) in all (default
	// DefaultMaxSessionsPerClient); past it, initialize is answered 429, or
	// ends the least recently used session of the same address's key
	// holding the most (see sessionfair.go). No initialize ends another
	// identity's session.
	MaxSessionsPerClient int
	// MaxEventStreams and MaxEventStreamsPerClient bound the open event
	// streams (GET /mcp) in all and of one client (defaults
	// DefaultMaxEventStreams, DefaultMaxEventStreamsPerClient).
	MaxEventStreams          int
	MaxEventStreamsPerClient int
	// BodyReadTimeout bounds the time to read a request's body (default
	// DefaultBodyReadTimeout): a body sent slower is cut off with the
	// connection. IdleTimeout closes a keep-alive connection that sent no
	// request for this long (default DefaultIdleTimeout). Neither cuts a
	// long response (an export, an event stream). Both apply to the
	// http.Server of HTTPServer.
	BodyReadTimeout time.Duration
	IdleTimeout     time.Duration
	// Redis, when set, keeps the MCP sessions there, so that every replica
	// sharing it accepts a session any of them started (see
	// redisSessions); nil keeps them in this process.
	Redis redis.UniversalClient
	// OnSessionEnd is called with the id of each session that ends.
	OnSessionEnd func(id string)
	// ContextFunc adds what a request says (its headers) to the context of
	// its MCP messages; nil adds nothing.
	ContextFunc server.HTTPContextFunc
	// Logger receives diagnostics (default: discard).
	Logger *slog.Logger
}

// Server is the HTTP transport of one MCP server. It is safe for
// concurrent use.
type Server struct {
	opts     Options
	log      *slog.Logger
	sessions sessionStore
}

// New returns the transport that opts describe.
func New(opts Options) *Server {
	s := &Server{opts: opts, log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.sessions = newSessionStore(opts, s.log)
	return s
}

// HTTPServer returns the http.Server that serves handler (see Handler)
// with the transport's connection bounds: the header and body read
// timeouts (a body's deadline is cleared once it is read, so a long
// response is never cut) and the idle timeout of keep-alive connections.
func (s *Server) HTTPServer(handler http.Handler) *http.Server {
	return &http.Server{
		Handler:           bodyDeadline(handler, positiveOr(s.opts.BodyReadTimeout, DefaultBodyReadTimeout)),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       positiveOr(s.opts.IdleTimeout, DefaultIdleTimeout),
	}
}

// RequireToken serves h to callers with a bearer token when Options.Auth
// is set (401 otherwise), to anyone without.
func (s *Server) RequireToken(h http.Handler) http.Handler {
	if s.opts.Auth == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.opts.Auth(r); err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="datasf-mcp"`)
			writeHTTPJSON(w, http.StatusUnauthorized, "unauthorized", "send Authorization: Bearer <token>")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Sessions returns the number of live MCP sessions.
func (s *Server) Sessions() int { return s.sessions.Len() }

// Defaults of the Streamable HTTP transport.
const (
	// DefaultSessionIdleTimeout ends an MCP session that sent nothing for
	// this long.
	DefaultSessionIdleTimeout = 30 * time.Minute
	// DefaultMaxSessions bounds the live MCP sessions; past it, starting one
	// ends the one idle the longest.
	DefaultMaxSessions = 10_000
	// DefaultMaxSessionsPerClient bounds the live MCP sessions of one
	// client (a bearer token, or a remote address and client key without
	// tokens) and of one token or address in all; past it, initialize is
	// answered 429 until the client ends or idles out one (or, for another
	// key of the same address, ends the oldest session of the key holding
	// the most).
	DefaultMaxSessionsPerClient = 1_000
	// DefaultMaxEventStreams bounds the open event streams (GET /mcp) of
	// the server; DefaultMaxEventStreamsPerClient those of one client.
	// Past them, GET /mcp is answered 429.
	DefaultMaxEventStreams          = 1_000
	DefaultMaxEventStreamsPerClient = 100
	// MaxBatchMessages is the most messages a JSON-RPC batch may hold.
	MaxBatchMessages = 100
	// MaxMCPRequestBody is the largest POST /mcp body read; larger ones
	// are answered 413.
	MaxMCPRequestBody = 1 << 20
)

// Handler serves mcpServer over Streamable HTTP at /mcp, GET /healthz,
// and every other path with rest (the REST API, the metrics). Call shutdown to end the MCP
// sessions.
//
// Every request passes the same checks: a request that reached a loopback
// address must name a loopback host (or the PublicURL's host) in Host, so
// that DNS rebinding cannot reach the server from a browser. On /mcp, a
// browser request's Origin must be the server's own or one of CORSOrigins
// (403 otherwise), as on the REST API's changes (PUT, DELETE, POST); bodies are bounded by MaxMCPRequestBody (413); sessions
// are issued by initialize, refused when unknown, and end on DELETE or when
// idle; a JSON-RPC batch is accepted where the negotiated protocol version
// (2025-03-26) has them and answered -32600 where it does not. With
// Auth, /mcp requires a bearer token too and the calls run as its owner.
func (s *Server) Handler(mcpServer *server.MCPServer, rest http.Handler) (handler http.Handler, shutdown func(context.Context) error) {
	auth := s.opts.Auth
	opts := []server.StreamableHTTPOption{
		server.WithEndpointPath("/mcp"),
		server.WithStreamableHTTPLogger(s.log),
		// CheckHost guards /mcp as it guards the REST API, and also lets in
		// the PublicURL's host (a proxy on this machine), which mcp-go's own
		// check would refuse.
		server.WithDisableLocalhostProtection(true),
		server.WithSessionIdManagerResolver(sessionResolver{s.sessions}),
		server.WithSessionIdleTTL(s.sessions.idleTimeout()),
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			if s.opts.ContextFunc != nil {
				ctx = s.opts.ContextFunc(ctx, r)
			}
			if auth != nil {
				if owner, err := auth(r); err == nil {
					return dualresp.WithOwner(ctx, owner)
				}
				return ctx
			}
			ctx = dualresp.Unauthenticated(ctx)
			if key := r.Header.Get(ClientKeyHeader); key != "" {
				return withClientKey(ctx, key) // checked by mcpHandler
			}
			return ctx
		}),
	}
	streamable := server.NewStreamableHTTPServer(mcpServer, opts...)
	mcpHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth != nil {
			if _, err := auth(r); err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="datasf-mcp"`)
				writeHTTPJSON(w, http.StatusUnauthorized, "unauthorized", "send Authorization: Bearer <token>")
				return
			}
		}
		if key := r.Header.Get(ClientKeyHeader); auth == nil && key != "" && !ValidClientKey(key) {
			writeHTTPJSON(w, http.StatusBadRequest, "invalid_client_key",
				ClientKeyHeader+" must be 16 to 128 letters, digits, '-' or '_'")
			return
		}
		if !s.allowedOrigin(r) {
			writeHTTPJSON(w, http.StatusForbidden, "forbidden_origin",
				fmt.Sprintf("Origin %q is not allowed; allowed: requests without Origin, the server's own origin and --cors-origins", r.Header.Get("Origin")))
			return
		}
		owner := ""
		if auth != nil {
			owner, _ = auth(r)
		}
		client := httpClient(r, owner)
		ctx := context.WithValue(r.Context(), httpClientKey{}, client)
		sc := sessionClient(r, client, auth != nil)
		r = r.WithContext(context.WithValue(ctx, sessionClientKey{}, sc))
		if !s.ownSession(w, r, sc) {
			return
		}
		switch r.Method {
		case http.MethodPost:
			body, ok := readBounded(w, r, MaxMCPRequestBody)
			if !ok {
				return
			}
			if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
				serveBatch(w, r, trimmed, streamable)
				return
			}
			if isInitialize(body) {
				if err := s.sessions.admit(sc); err != nil {
					w.Header().Set("Retry-After", "60")
					writeHTTPJSON(w, sessionStoreStatus(err), "too_many_sessions", err.Error())
					return
				}
			}
		case http.MethodGet:
			if !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
				s.serveEventStream(w, r, client, streamable)
				return
			}
		}
		streamable.ServeHTTP(w, r)
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpHandler)
	mux.Handle("/", s.changesFromOwnOrigin(rest))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	return s.CheckHost(mux), streamable.Shutdown
}

// Defaults of the connections of Serve.
const (
	// DefaultBodyReadTimeout bounds the time to read a request's body.
	DefaultBodyReadTimeout = 30 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection idle this long.
	DefaultIdleTimeout = 60 * time.Second
)

// bodyDeadline gives the reading of a request's body timeout: a client
// that sends its body slower (a byte every few seconds, to hold a
// connection) gets a read error and loses the connection. The deadline is
// the connection's read deadline, set for this request only; net/http
// clears it once the body has been read (it starts its background read of
// the connection then), so it never cuts the response that follows: an
// export or an event stream may last for hours, which a server-wide
// WriteTimeout would cut.
func bodyDeadline(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			// An error means a writer without deadlines (not net/http's).
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		}
		next.ServeHTTP(w, r)
	})
}

// ownSession answers 404 to a request naming a live session that another
// identity started (a bearer token's owner, else a remote address: see
// clientIdentity), as to a request naming no live session, and reports
// whether the request may go on. A session id is a secret only until it
// leaks (a log, a proxy, a shared machine); with this check a leaked id
// is still of no use to anyone but its creator, for a call, an event
// stream or a DELETE, on every replica sharing the Redis store.
func (s *Server) ownSession(w http.ResponseWriter, r *http.Request, client string) bool {
	id := r.Header.Get(server.HeaderKeySessionID)
	if id == "" {
		return true
	}
	owner, live, err := s.sessions.ownerOf(id)
	if err != nil {
		w.Header().Set("Retry-After", "5")
		writeHTTPJSON(w, http.StatusServiceUnavailable, "session_store_unavailable", err.Error())
		return false
	}
	if !live || clientIdentity(owner) == clientIdentity(client) {
		return true
	}
	writeHTTPJSON(w, http.StatusNotFound, "unknown_session",
		"no live session has this Mcp-Session-Id (ended, idle too long, or never issued): send initialize again")
	return false
}

// serveEventStream opens the event stream of a live session (GET /mcp):
// a GET without the session id that initialize issued opens none (400), as
// the transport allows for servers that require sessions, and the streams
// open at once are bounded per client and in all (429).
func (s *Server) serveEventStream(w http.ResponseWriter, r *http.Request, client string, next http.Handler) {
	id := r.Header.Get(server.HeaderKeySessionID)
	if id == "" {
		writeHTTPJSON(w, http.StatusBadRequest, "missing_session",
			"GET /mcp opens the event stream of a session: send the Mcp-Session-Id header that initialize returned")
		return
	}
	if term, err := s.sessions.Validate(id); err != nil || term {
		writeHTTPJSON(w, http.StatusNotFound, "unknown_session",
			"no live session has this Mcp-Session-Id (ended, idle too long, or never issued): send initialize again")
		return
	}
	done, err := s.sessions.openStream(client, positiveOr(s.opts.MaxEventStreamsPerClient, DefaultMaxEventStreamsPerClient),
		positiveOr(s.opts.MaxEventStreams, DefaultMaxEventStreams))
	if err != nil {
		w.Header().Set("Retry-After", "60")
		writeHTTPJSON(w, http.StatusTooManyRequests, "too_many_streams", err.Error())
		return
	}
	defer done()
	next.ServeHTTP(w, r)
}

// positiveOr returns v, or def when v is not positive.
func positiveOr[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// isInitialize reports whether a JSON-RPC message is an initialize request.
func isInitialize(msg []byte) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method == string(mcp.MethodInitialize)
}

// writeHTTPJSON answers status with {"error": code, "message": msg}.
func writeHTTPJSON(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "message": msg})
}

// CheckHost refuses requests that reached a loopback address under a Host
// that is not a loopback name, nor the PublicURL's host: a page on another
// site resolving its name to 127.0.0.1 (DNS rebinding) cannot use the
// server.
func (s *Server) CheckHost(next http.Handler) http.Handler {
	public := ""
	if u, err := url.Parse(s.opts.PublicURL); err == nil {
		public = strings.ToLower(u.Host)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		// A balancer's health check names no host of ours; /healthz tells
		// nothing but "up", so it answers any Host.
		if ok && local != nil && r.URL.Path != "/healthz" && isLoopback(local.String()) && !isLoopback(r.Host) && strings.ToLower(r.Host) != public {
			writeHTTPJSON(w, http.StatusForbidden, "forbidden_host", fmt.Sprintf("Host %q is not allowed on a loopback address", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopback reports whether hostport names a loopback host.
func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// allowedOrigin reports whether a request's Origin may use /mcp: none
// (not a browser), the server's own, or one of CORSOrigins ("*": any).
func (s *Server) allowedOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if slices.Contains(s.opts.CORSOrigins, "*") || slices.Contains(s.opts.CORSOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	own := strings.EqualFold(u.Host, r.Host)
	if pu, err := url.Parse(s.opts.PublicURL); err == nil && strings.EqualFold(u.Host, pu.Host) && u.Scheme == pu.Scheme {
		own = true
	}
	return own
}

// changesFromOwnOrigin refuses, with 403, a request to the REST API that
// changes something (any method but GET, HEAD and OPTIONS: a pin, a
// DELETE, a page by POST) from a browser page of a foreign Origin, as /mcp
// does: such a page may send the request (a simple DELETE needs no
// preflight to be sent), even when CORS keeps the answer from it.
func (s *Server) changesFromOwnOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if !s.allowedOrigin(r) {
				writeHTTPJSON(w, http.StatusForbidden, "forbidden_origin",
					fmt.Sprintf("Origin %q is not allowed to change results; allowed: requests without Origin, the server's own origin and --cors-origins", r.Header.Get("Origin")))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// readBounded reads r's body, at most limit bytes, and puts it back for the
// next handler. A larger body is answered 413 and ok is false.
func readBounded(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, ok bool) {
	if r.ContentLength > limit {
		writeHTTPJSON(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("request body of %d bytes; at most %d", r.ContentLength, limit))
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		writeHTTPJSON(w, http.StatusBadRequest, "bad_body", "reading the request body: "+err.Error())
		return nil, false
	}
	if int64(len(body)) > limit {
		writeHTTPJSON(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("request body over %d bytes", limit))
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return body, true
}

// batchVersion is the one protocol version with JSON-RPC batches: they came
// in 2025-03-26 and went in 2025-06-18. A request without the protocol
// version header is taken to be of 2025-03-26, as the transport says.
const batchVersion = "2025-03-26"

// serveBatch answers a JSON-RPC batch: each message goes to next on its own,
// and the answers to its requests come back as one JSON array (202 when
// there is none). Where the negotiated version has no batches, it is a
// -32600 invalid request.
func serveBatch(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler) {
	version := r.Header.Get(mcp.HeaderProtocolVersion)
	if version != "" && version != batchVersion {
		writeRPCError(w, http.StatusBadRequest, mcp.INVALID_REQUEST,
			fmt.Sprintf("JSON-RPC batches are not part of protocol version %s (only %s); send one message per request", version, batchVersion))
		return
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(body, &msgs); err != nil {
		writeRPCError(w, http.StatusBadRequest, mcp.PARSE_ERROR, "the batch is not valid JSON: "+err.Error())
		return
	}
	if len(msgs) == 0 {
		writeRPCError(w, http.StatusBadRequest, mcp.INVALID_REQUEST, "an empty batch")
		return
	}
	if len(msgs) > MaxBatchMessages {
		writeRPCError(w, http.StatusBadRequest, mcp.INVALID_REQUEST,
			fmt.Sprintf("a batch of %d messages; at most %d, or send them one per request", len(msgs), MaxBatchMessages))
		return
	}
	for _, msg := range msgs {
		if isInitialize(msg) {
			// MCP 2025-03-26, Lifecycle: "The initialize request MUST NOT
			// be part of a JSON-RPC batch".
			writeRPCError(w, http.StatusBadRequest, mcp.INVALID_REQUEST,
				"initialize must not be part of a JSON-RPC batch; send it alone, then use the session it starts")
			return
		}
	}
	var answers []json.RawMessage
	for _, msg := range msgs {
		sub := r.Clone(r.Context())
		sub.Body = io.NopCloser(bytes.NewReader(msg))
		sub.ContentLength = int64(len(msg))
		sub.Header.Set("Accept", "application/json, text/event-stream")
		rec := &responseRecorder{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(rec, sub)
		if sid := rec.header.Get(server.HeaderKeySessionID); sid != "" {
			w.Header().Set(server.HeaderKeySessionID, sid)
		}
		answers = append(answers, rec.answers()...)
	}
	if len(answers) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answers)
}

// writeRPCError answers a JSON-RPC error without an id.
func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg},
	})
}

// responseRecorder keeps what one message of a batch was answered.
type responseRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *responseRecorder) Header() http.Header         { return r.header }
func (r *responseRecorder) WriteHeader(status int)      { r.status = status }
func (r *responseRecorder) Write(p []byte) (int, error) { return r.body.Write(p) }
func (r *responseRecorder) Flush()                      {}

// answers returns the JSON-RPC responses in the recorded answer: the JSON
// body, or the responses among the events of an event stream.
func (r *responseRecorder) answers() []json.RawMessage {
	body := bytes.TrimSpace(r.body.Bytes())
	if len(body) == 0 || r.status == http.StatusAccepted {
		return nil
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		if json.Valid(body) {
			return []json.RawMessage{json.RawMessage(body)}
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": mcp.INTERNAL_ERROR, "message": fmt.Sprintf("HTTP %d: %s", r.status, body)}})
		return []json.RawMessage{b}
	}
	var out []json.RawMessage
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		data = strings.TrimSpace(data)
		if json.Unmarshal([]byte(data), &msg) == nil && msg.Method == "" && len(msg.ID) > 0 {
			out = append(out, json.RawMessage(data))
		}
	}
	return out
}

// sessions issues and checks the MCP session ids of the Streamable HTTP
// transport: an id is valid from the initialize that issued it until DELETE
// or until it has been idle for idle. Sessions are bounded per client
// (maxPerClient) and in all (maxLive); past either bound a new session is
// refused (admit), never made by ending another client's session. It is a
// server.SessionIdManager; forClient gives the one that records which
// client a new session belongs to.
type sessions struct {
	idle         time.Duration
	now          func() time.Time
	onEnd        func(id string)
	maxLive      int
	maxPerClient int

	mu        sync.Mutex
	live      *lru.Cache[string, liveSession]
	ended     *lru.Cache[string, struct{}] // recently ended ids, to say "terminated"
	perClient map[string]int               // live sessions by client
	perID     map[string]int               // live sessions by client identity (see sessionfair.go)
	streams   map[string]int               // open event streams by client
	nStreams  int
}

// liveSession is what sessions keeps of a live session.
type liveSession struct {
	client string
	last   time.Time
}

func newSessions(idle time.Duration, maxLive int, now func() time.Time, onEnd func(id string)) *sessions {
	if idle <= 0 {
		idle = DefaultSessionIdleTimeout
	}
	if maxLive <= 0 {
		maxLive = DefaultMaxSessions
	}
	if now == nil {
		now = time.Now
	}
	s := &sessions{idle: idle, now: now, onEnd: onEnd, maxLive: maxLive, maxPerClient: DefaultMaxSessionsPerClient,
		perClient: map[string]int{}, perID: map[string]int{}, streams: map[string]int{}}
	s.ended, _ = lru.New[string, struct{}](maxLive) // only fails for a size <= 0
	// The cache's own bound is never reached (admit refuses first) but
	// for a race of initializes; its eviction ends a session as Remove does.
	s.live, _ = lru.NewWithEvict(maxLive+maxLive/10+1, func(id string, e liveSession) {
		s.ended.Add(id, struct{}{})
		if s.perClient[e.client]--; s.perClient[e.client] <= 0 {
			delete(s.perClient, e.client)
		}
		if id := clientIdentity(e.client); s.perID[id] <= 1 {
			delete(s.perID, id)
		} else {
			s.perID[id]--
		}
		if s.onEnd != nil {
			s.onEnd(id)
		}
	})
	return s
}

// errTooManySessions is returned by admit when the client, or the server,
// has as many live sessions as allowed.
type errTooManySessions struct {
	perClient bool
	max       int
}

func (e *errTooManySessions) Error() string {
	if e.perClient {
		return fmt.Sprintf("this client already has %d live MCP sessions, the most allowed; end unused ones with DELETE /mcp, or reuse a session", e.max)
	}
	return fmt.Sprintf("the server already has %d live MCP sessions, the most it keeps; retry after idle sessions end", e.max)
}

// admit reports whether client may start one more session: an error
// *errTooManySessions when it, its identity, or the server, is at its
// bound (see sessionfair.go for the identity's). Sessions idle past the
// timeout are ended first, so they make room.
func (s *sessions) admit(client string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	identity := clientIdentity(client)
	if s.perClient[client] < s.maxPerClient && s.perID[identity] < s.maxPerClient && s.live.Len() < s.maxLive {
		return nil
	}
	now := s.now()
	for _, id := range s.live.Keys() { // oldest first
		if e, ok := s.live.Peek(id); ok && now.Sub(e.last) > s.idle {
			s.live.Remove(id)
		}
	}
	switch {
	case s.perClient[client] >= s.maxPerClient:
		return &errTooManySessions{perClient: true, max: s.maxPerClient}
	case s.perID[identity] >= s.maxPerClient && !s.makeRoom(client):
		return &errTooManySessions{perClient: true, max: s.maxPerClient}
	case s.live.Len() >= s.maxLive:
		return &errTooManySessions{max: s.maxLive}
	}
	return nil
}

// Generate issues the id of a new session of no known client (the
// server.SessionIdManager of callers that forClient does not name).
func (s *sessions) Generate() string { return s.generate("") }

func (s *sessions) generate(client string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails
	id := "mcp-session-" + hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live.Add(id, liveSession{client: client, last: s.now()})
	s.perClient[client]++
	s.perID[clientIdentity(client)]++
	return id
}

// Validate accepts the id of a live session (and counts the request as a
// use), reports an ended one as terminated, and refuses any other.
func (s *sessions) Validate(id string) (isTerminated bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.live.Get(id)
	switch {
	case ok && s.now().Sub(e.last) > s.idle:
		s.live.Remove(id) // ended: the eviction callback records it
		return true, nil
	case ok:
		e.last = s.now()
		s.live.Add(id, e)
		return false, nil
	case s.ended.Contains(id):
		return true, nil
	case id == "":
		return false, errors.New("missing Mcp-Session-Id: send initialize first")
	default:
		return false, fmt.Errorf("unknown session id %q: send initialize first", id)
	}
}

// ownerOf is the client of a live session.
func (s *sessions) ownerOf(id string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.live.Peek(id)
	return e.client, ok, nil
}

// Terminate ends a session (DELETE /mcp, or the idle sweep).
func (s *sessions) Terminate(id string) (isNotAllowed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live.Remove(id)
	return false, nil
}

// Len returns the number of live sessions.
func (s *sessions) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live.Len()
}

// openStream counts one more open event stream (GET /mcp) of client, or
// returns an error when the client, or the server, has as many as allowed.
// The caller calls the returned function when the stream ends.
func (s *sessions) openStream(client string, maxPerClient, maxAll int) (done func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.streams[client] >= maxPerClient:
		return nil, fmt.Errorf("this client already has %d open event streams (GET /mcp), the most allowed; close one first", maxPerClient)
	case s.nStreams >= maxAll:
		return nil, fmt.Errorf("the server already has %d open event streams (GET /mcp), the most it holds; retry later", maxAll)
	}
	s.streams[client]++
	s.nStreams++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.nStreams--
			if s.streams[client]--; s.streams[client] <= 0 {
				delete(s.streams, client)
			}
		})
	}, nil
}

// forClient returns the server.SessionIdManager that issues sessions to
// client.
func (s *sessions) forClient(client string) server.SessionIdManager {
	return clientSessions{s, client}
}

// clientSessions is sessions as seen by one client: Generate records the
// new session as the client's.
type clientSessions struct {
	*sessions
	client string
}

func (c clientSessions) Generate() string { return c.generate(c.client) }

// sessionResolver gives mcp-go the SessionIdManager of each request's
// client (put in its context by the /mcp handler).
type sessionResolver struct{ s sessionStore }

func (r sessionResolver) ResolveSessionIdManager(req *http.Request) server.SessionIdManager {
	if req == nil { // mcp-go's own calls (the idle sweep, shutdown)
		return r.s.sweeper()
	}
	client, _ := req.Context().Value(sessionClientKey{}).(string)
	return r.s.forClient(client)
}

type httpClientKey struct{}

// Client returns the client (see httpClient) of the request whose MCP
// messages run in ctx: "owner:…" with bearer tokens, else "ip:…".
func Client(ctx context.Context) (string, bool) {
	c, ok := ctx.Value(httpClientKey{}).(string)
	return c, ok && c != ""
}

// httpClient names the client of an HTTP request for the per-client bounds
// on sessions and event streams: the bearer token's owner with tokens,
// else the remote IP address (a client key is the client's own choice, so
// it cannot bound anything).
func httpClient(r *http.Request, owner string) string {
	if owner != "" {
		return "owner:" + owner
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "ip:" + host
}
