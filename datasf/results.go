package datasf

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/mcphttp"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/mark3labs/mcp-go/server"
)

// sessionResults remembers which results each MCP session (or, with
// bearer tokens, each token) created, so list_results shows a caller its own
// results and no one else's. Ids are kept per owner, the newest
// MaxResultsPerOwner of each; owners are kept least recently used first, at
// most maxResultOwners; the records themselves live in the result store.
type sessionResults struct {
	once sync.Once
	mu   sync.Mutex // makes add's read-append-write one step
	ids  *lru.Cache[string, []string]
	// shared, when set, keeps the lists in Redis instead, so that every
	// replica lists a session's results wherever they were made.
	shared *sharedResultLists
}

// maxResultOwners bounds the sessions and tokens whose result ids are
// remembered.
const maxResultOwners = 10_000

func (r *sessionResults) cache() *lru.Cache[string, []string] {
	r.once.Do(func() {
		r.ids, _ = lru.New[string, []string](maxResultOwners) // only fails for a size <= 0
	})
	return r.ids
}

func sessionID(ctx context.Context) string {
	if s := server.ClientSessionFromContext(ctx); s != nil {
		return s.SessionID()
	}
	return ""
}

// resultsOwner is whom the results created in ctx are listed to: the bearer
// token's owner, else the client key, else the MCP session. It is "" when
// the caller has none (a client on the stateless protocol without a token
// or key): its results are then listed to no one.
func resultsOwner(ctx context.Context) string {
	if owner, ok := dualresp.OwnerFrom(ctx); ok && owner != "" {
		return "owner:" + owner
	}
	if key, ok := mcphttp.ClientKey(ctx); ok {
		return "client:" + key
	}
	if sid := sessionID(ctx); sid != "" {
		return "session:" + sid
	}
	return ""
}

// recordOwner is the Owner a new result is stored under. With bearer
// tokens it is "" (dualresp stores the token's owner from ctx). Without
// tokens it names the caller as identity/label (see
// dualresp.OwnerIdentity), hashed: the identity is the remote address, the
// one thing a client cannot choose; the label is its client key, else its
// MCP session. The result store's bounds (stored results, pinned results,
// the order of eviction) and the analyses at once apply per identity, so
// a client minting keys gets no more room than one key, and one caller's
// burst evicts, or pins, only its own. It grants nothing: without tokens
// every result is readable by its link.
func recordOwner(ctx context.Context) string {
	if _, ok := dualresp.OwnerFrom(ctx); ok {
		return ""
	}
	hash := func(s string) string {
		sum := sha256.Sum256([]byte("datasf-anonymous-owner\x00" + s))
		return hex.EncodeToString(sum[:12])
	}
	label := resultsOwner(ctx)
	client, ok := mcphttp.Client(ctx)
	switch {
	case ok && label != "":
		return "anonymous:" + hash("http:"+client) + "/" + hash(label)
	case ok:
		return "anonymous:" + hash("http:"+client)
	case label != "":
		return "anonymous:" + hash(label)
	}
	return ""
}

func (r *sessionResults) add(ctx context.Context, id string) {
	key := resultsOwner(ctx)
	if key == "" {
		return
	}
	if r.shared != nil {
		r.shared.add(ctx, key, id)
		return
	}
	c := r.cache()
	r.mu.Lock()
	defer r.mu.Unlock()
	ids, _ := c.Get(key)
	ids = append(slices.Clip(ids), id)
	if len(ids) > MaxResultsPerOwner {
		ids = ids[len(ids)-MaxResultsPerOwner:]
	}
	c.Add(key, ids)
}

func (r *sessionResults) list(ctx context.Context) []string {
	key := resultsOwner(ctx)
	if key == "" {
		return nil
	}
	if r.shared != nil {
		return r.shared.list(ctx, key)
	}
	ids, _ := r.cache().Get(key)
	return slices.Clone(ids)
}

// forgetSession drops what a session that ended created from the lists.
func (r *sessionResults) forgetSession(sessionID string) {
	if r.shared != nil {
		r.shared.forget("session:" + sessionID)
		return
	}
	r.cache().Remove("session:" + sessionID)
}
