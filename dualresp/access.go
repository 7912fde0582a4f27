package dualresp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strings"
)

// Access control. When a caller is identified (WithOwner), records created
// for another owner are invisible to it: every method answers as if they did
// not exist (ErrNotFound, REST 404), so ids cannot be probed.

type ownerKey struct{}

// WithOwner returns a context identifying the caller as owner. CreateResponse
// stores it as the record's Owner when the Spec names none, and Resource,
// Access, Pin and Delete treat records of other owners as not found.
func WithOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner)
}

// OwnerFrom returns the caller identified by WithOwner.
func OwnerFrom(ctx context.Context) (string, bool) {
	o, ok := ctx.Value(ownerKey{}).(string)
	return o, ok
}

// visible reports whether the caller of ctx may see r. A record of a
// token's owner (TokenOwner) is that owner's only, also on a REST API
// without Authenticate: a store that a server with bearer tokens filled,
// opened again by one without them, does not serve their results to
// anyone who asks.
func visible(ctx context.Context, r *Record) bool {
	owner, ok := OwnerFrom(ctx)
	if !ok {
		return !(unauthenticated(ctx) && strings.HasPrefix(r.Owner, tokenOwnerPrefix))
	}
	return r.Owner == "" || r.Owner == owner
}

type unauthenticatedKey struct{}

// Unauthenticated returns a context marking its caller as one that no
// credentials identified (a server without bearer tokens): records of a
// token's owner are not found for it (see WithOwner). The REST handler
// marks its requests so when Options.Authenticate is nil; a server that
// reads results for such callers by other ways (MCP tools) marks their
// contexts with it.
func Unauthenticated(ctx context.Context) context.Context {
	return context.WithValue(ctx, unauthenticatedKey{}, true)
}

// unauthenticated reports whether ctx is marked by Unauthenticated.
func unauthenticated(ctx context.Context) bool {
	v, _ := ctx.Value(unauthenticatedKey{}).(bool)
	return v
}

// ErrUnauthorized is returned by an Authenticate function for a request
// without valid credentials; the REST handler answers 401.
var ErrUnauthorized = errors.New("dualresp: missing or invalid credentials")

// BearerTokens returns an Authenticate function (see Options.Authenticate)
// that accepts "Authorization: Bearer T" for any of tokens and identifies the
// caller by TokenOwner(T). Tokens are compared in constant time.
func BearerTokens(tokens ...string) func(*http.Request) (string, error) {
	keys := make([][]byte, 0, len(tokens))
	for _, t := range tokens {
		if t != "" {
			keys = append(keys, []byte(t))
		}
	}
	return func(r *http.Request) (string, error) {
		got, ok := BearerToken(r)
		if !ok {
			return "", ErrUnauthorized
		}
		match := 0
		for _, k := range keys {
			match |= subtle.ConstantTimeCompare([]byte(got), k)
		}
		if match != 1 {
			return "", ErrUnauthorized
		}
		return TokenOwner(got), nil
	}
}

// BearerToken returns the token of an "Authorization: Bearer" header.
func BearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// TokenOwner is the owner identity of a token: a hash, so records never hold
// the token itself. It is not keyed: whoever reads a store whose owners are
// TokenOwners can check guessed tokens against them. Servers whose store
// has an OwnerKey use KeyedTokenOwner.
func TokenOwner(token string) string {
	sum := sha256.Sum256([]byte("dualresp-owner\x00" + token))
	return tokenOwnerPrefix + hex.EncodeToString(sum[:12])
}

// KeyedTokenOwner is the owner identity of a token under key (see
// OwnerKeyer): HMAC-SHA-256 of the token, so that records never hold the
// token, and a copy of the records without the key cannot tell whether a
// guessed token is one of their owners.
func KeyedTokenOwner(key []byte, token string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("dualresp-owner\x00" + token))
	return tokenOwnerPrefix + hex.EncodeToString(m.Sum(nil)[:12])
}

// KeyedBearerTokens is BearerTokens identifying the caller by
// KeyedTokenOwner(key, T).
func KeyedBearerTokens(key []byte, tokens ...string) func(*http.Request) (string, error) {
	check := BearerTokens(tokens...)
	return func(r *http.Request) (string, error) {
		if _, err := check(r); err != nil {
			return "", err
		}
		got, _ := BearerToken(r)
		return KeyedTokenOwner(key, got), nil
	}
}

// OwnerKeyer is a Store that keeps a secret key beside its records, for
// KeyedTokenOwner: the servers sharing the store read the same key, so
// they identify a token's owner alike.
type OwnerKeyer interface {
	OwnerKey(ctx context.Context) ([]byte, error)
}

// OwnerRenamer is a Store that can give the records of owners'
// identities (see OwnerIdentity) to others: RenameOwners changes the owner
// of every record whose owner is a key of renames, or KEY/LABEL, to its
// value (VALUE/LABEL), and returns how many it changed. A server moving
// from TokenOwner to KeyedTokenOwner renames the owners of the tokens it
// knows, so that their results stay theirs.
//
// Each rename is made once per store: the store records the new identity
// of every rename it has made, and a later call leaves out the renames to
// an identity it has recorded, reading no record when it leaves them all
// out. A server may so call it at every start (a store may have to read
// every record to rename: redisstore scans them). Each new identity must
// therefore be the rename of one old identity only, and a record stored
// under an old identity after its rename keeps that owner.
type OwnerRenamer interface {
	RenameOwners(ctx context.Context, renames map[string]string) (int, error)
}

// NewOwnerKey returns a new random key for KeyedTokenOwner, 32 bytes as 64
// hex digits (the form the stores keep it in).
func NewOwnerKey() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return []byte(hex.EncodeToString(b))
}

// tokenOwnerPrefix starts every TokenOwner.
const tokenOwnerPrefix = "token:"

// withAccess wraps the REST handler with authentication and CORS.
func (s *Server) withAccess(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && len(s.cors) > 0 {
			if slices.Contains(s.cors, origin) || slices.Contains(s.cors, "*") {
				h := w.Header()
				h.Set("Access-Control-Allow-Origin", origin)
				h.Add("Vary", "Origin")
				h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept")
				h.Set("Access-Control-Max-Age", "600")
				if r.Method == http.MethodOptions {
					w.WriteHeader(http.StatusNoContent)
					return
				}
			}
		}
		if s.authenticate != nil {
			owner, err := s.authenticate(r)
			if err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="dualresp"`)
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized", "message": "send Authorization: Bearer <token> with a token this server accepts"})
				return
			}
			r = r.WithContext(WithOwner(r.Context(), owner))
		} else {
			r = r.WithContext(Unauthenticated(r.Context()))
		}
		next.ServeHTTP(w, r)
	})
}
