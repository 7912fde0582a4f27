package mcphttp

import (
	"context"
	"net/http"
	"strings"
)

// Sessions under a flood. A session belongs to a client written
// "identity" or "identity/label": the identity is what the client cannot
// choose (its bearer token, else its remote address: httpClient), the
// label its client key (ClientKeyHeader) when it sends one without tokens.
// Each client (identity and label) has at most maxPerClient live sessions,
// and so has each identity in all: labels subdivide an identity's share,
// never multiply it. Past a client's own bound its initialize is refused
// (429). Past its identity's bound, the least recently used session of the
// identity's labels holding the most sessions ends to make room, when they
// hold more than the client does; else the client is refused. So a
// client that floods initialize ends only its own oldest sessions, or is
// refused, while other keys of its address, other addresses and other
// tokens still open theirs; no initialize ever ends another identity's
// session.

// clientIdentity is the identity of a session's client (see above).
func clientIdentity(client string) string {
	identity, _, _ := strings.Cut(client, "/")
	return identity
}

// sessionClient names the client of a new session requested by r: client
// (httpClient's identity), labelled with the hash of its client key when
// tokens are not required and it sent one.
func sessionClient(r *http.Request, client string, tokens bool) string {
	key := r.Header.Get(ClientKeyHeader)
	if tokens || key == "" {
		return client
	}
	hashed, _ := ClientKey(withClientKey(context.Background(), key))
	return client + "/" + hashed
}

type sessionClientKey struct{}

// makeRoom ends, for client over its identity's bound, the least recently
// used session among those of the identity's labels holding the most
// sessions, and reports whether it did: it does not when no label of the
// identity holds more sessions than client. s.mu must be held.
func (s *sessions) makeRoom(client string) bool {
	identity := clientIdentity(client)
	most := s.perClient[client]
	for c, k := range s.perClient {
		if k > most && clientIdentity(c) == identity {
			most = k
		}
	}
	if most == s.perClient[client] {
		return false
	}
	for _, id := range s.live.Keys() { // least recently used first
		if e, ok := s.live.Peek(id); ok && clientIdentity(e.client) == identity && s.perClient[e.client] == most {
			s.live.Remove(id) // the eviction callback ends it
			return true
		}
	}
	return false
}
