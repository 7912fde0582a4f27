package datasf

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
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

// ClientKeyHeader names the key a client without a bearer token sends so
// that the results it creates in one session are listed to it in the next:
// the command line sends a random key of the user's (kept in the user's
// cache directory) with every --server call. Without RESTTokens the key only
// groups results for list_results; it grants no access, as every result is
// readable by its link then. With RESTTokens the header is ignored: the
// token identifies the caller.
const ClientKeyHeader = "X-Datasf-Client-Key"

// ValidClientKey reports whether key is acceptable as a ClientKeyHeader:
// 16 to 128 letters, digits, '-' or '_'.
func ValidClientKey(key string) bool {
	if len(key) < 16 || len(key) > 128 {
		return false
	}
	for _, c := range key {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

type clientKeyCtx struct{}

// withClientKey records the caller's ClientKeyHeader in ctx, hashed so
// that the owner table never holds the key itself.
func withClientKey(ctx context.Context, key string) context.Context {
	sum := sha256.Sum256([]byte("datasf-client-key\x00" + key))
	return context.WithValue(ctx, clientKeyCtx{}, hex.EncodeToString(sum[:16]))
}

// resultsOwner is whom the results created in ctx are listed to: the bearer
// token's owner, else the client key, else the MCP session. It is "" when
// the caller has none (a client on the stateless protocol without a token
// or key): its results are then listed to no one.
func resultsOwner(ctx context.Context) string {
	if owner, ok := dualresp.OwnerFrom(ctx); ok && owner != "" {
		return "owner:" + owner
	}
	if key, ok := ctx.Value(clientKeyCtx{}).(string); ok {
		return "client:" + key
	}
	if sid := sessionID(ctx); sid != "" {
		return "session:" + sid
	}
	return ""
}

// recordOwner is the Owner a new result is stored under. With bearer
// tokens it is "" (dualresp stores the token's owner from ctx). Without
// tokens it names the caller — its client key, else its MCP session, else
// its remote address — hashed, so that the result store's per-owner bounds
// (stored results, pinned results) keep anonymous callers apart as they do
// tokens: one caller's burst evicts, or pins, only its own. It grants
// nothing: without tokens every result is readable by its link.
func recordOwner(ctx context.Context) string {
	if _, ok := dualresp.OwnerFrom(ctx); ok {
		return ""
	}
	key := resultsOwner(ctx)
	if key == "" {
		if client, ok := ctx.Value(httpClientKey{}).(string); ok && client != "" {
			key = "http:" + client
		}
	}
	if key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("datasf-anonymous-owner\x00" + key))
	return "anonymous:" + hex.EncodeToString(sum[:12])
}

func (r *sessionResults) add(ctx context.Context, id string) {
	key := resultsOwner(ctx)
	if key == "" {
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
	ids, _ := r.cache().Get(key)
	return slices.Clone(ids)
}

// forgetSession drops what a session that ended created from the lists.
func (r *sessionResults) forgetSession(sessionID string) {
	r.cache().Remove("session:" + sessionID)
}

type resultItem struct {
	ID         string   `json:"id"`
	URI        string   `json:"uri"`
	URL        string   `json:"url"`
	Name       string   `json:"name"`
	DatasetID  string   `json:"dataset_id,omitempty"`
	Domain     string   `json:"domain,omitempty"` // the portal, when not the configured one
	Query      string   `json:"query,omitempty"`
	TotalCount int64    `json:"total_count"`
	Columns    []string `json:"columns"`
	CreatedAt  string   `json:"created_at,omitempty"`
	ExpiresAt  *string  `json:"expires_at"`
	Pinned     bool     `json:"pinned"`
}

type listResultsOutput struct {
	Summary    string       `json:"summary"`
	Count      int          `json:"count"`
	Total      int          `json:"total"`
	Offset     int          `json:"offset"`
	NextOffset *int         `json:"next_offset"`
	Results    []resultItem `json:"results"`
}

func (s *toolServer) listResults(ctx context.Context, _ mcp.CallToolRequest, in *ListResultsInput) (*mcp.CallToolResult, error) {
	limit, offset := or(in.Limit, DefaultListResultsLimit), or(in.Offset, 0)
	out := listResultsOutput{Results: []resultItem{}, Offset: offset}
	ids := s.session.list(ctx)
	var live []*dualresp.Record
	for i := len(ids) - 1; i >= 0; i-- { // newest first
		rec, err := s.results.Resource(ctx, ids[i])
		if err != nil {
			continue // expired or deleted
		}
		live = append(live, rec)
	}
	out.Total = len(live)
	for i, rec := range live {
		if i < offset {
			continue
		}
		if len(out.Results) == limit {
			next := i
			out.NextOffset = &next
			break
		}
		it := resultItem{
			ID: rec.ID, URI: s.results.URI(rec.ID), URL: s.results.URL(rec.ID), Name: rec.Name, Query: rec.Query.Text,
			TotalCount: rec.TotalCount, Columns: make([]string, 0, len(rec.Columns)), CreatedAt: rec.CreatedAt.UTC().Format(time.RFC3339),
			Pinned: rec.Pinned, DatasetID: rec.Query.Params["dataset_id"], Domain: rec.Query.Params["domain"],
		}
		for _, c := range rec.Columns {
			it.Columns = append(it.Columns, c.Name)
		}
		if !rec.Pinned && !rec.ExpiresAt.IsZero() {
			e := rec.ExpiresAt.UTC().Format(time.RFC3339)
			it.ExpiresAt = &e
		}
		out.Results = append(out.Results, it)
	}
	out.Count = len(out.Results)
	switch {
	case resultsOwner(ctx) == "":
		out.Summary = "This connection has no session and no bearer token, so no results are listed to it; use the links that query_datasf returned."
	case out.NextOffset != nil:
		out.Summary = fmt.Sprintf("Results %d-%d of %d stored results of this session, newest first. More: offset %d.", offset+1, offset+out.Count, out.Total, *out.NextOffset)
	case offset == 0:
		out.Summary = fmt.Sprintf("%d stored results in this session, newest first.", out.Total)
	default:
		out.Summary = fmt.Sprintf("%d stored results in this session; %d shown from offset %d.", out.Total, out.Count, offset)
	}
	// Each row tells one result from the others: its dataset, its query
	// (shortened in the middle), its size and its age.
	var table strings.Builder
	table.WriteString("| dataset | query | rows | created | expires | url |\n|---|---|---|---|---|---|\n")
	for _, it := range out.Results {
		exp := "never"
		if it.ExpiresAt != nil {
			exp = shortTime(*it.ExpiresAt)
		}
		dataset := it.DatasetID
		if dataset == "" {
			dataset = it.Name
		}
		if it.Domain != "" {
			dataset += " on " + it.Domain
		}
		fmt.Fprintf(&table, "| %s | %s | %d | %s | %s | %s |\n", cell(dataset), cell(middleCut(it.Query, listQueryRunes)), it.TotalCount, shortTime(it.CreatedAt), exp, it.URL)
	}
	return render(responseFormat(ctx, in.Format), out, out.Summary, table.String()), nil
}

// listQueryRunes is how much of a query a list_results row shows.
const listQueryRunes = 72

// middleCut shortens s to n runes by cutting its middle, where a long
// query's least telling part is (the start says what it selects, the end
// how it filters, groups and orders).
func middleCut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := (n - 1) / 2
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// shortTime writes an RFC 3339 time as "2026-11-25 04:31:07Z".
func shortTime(t string) string {
	return strings.Replace(t, "T", " ", 1)
}
