package datasf

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// The REST API of an instance with a StoreSecret (stdio's) serves a result
// only to whoever holds its link or the secret. Its links carry a key, a
// MAC of the result's id under the secret (LinkKey), in their path:
// /k/KEY/resources/ID. Every instance of the user reads the same secret
// (the 0700 cache directory), so a link one instance handed out works on
// any other that serves the same store, and a process of another user
// that knows an id (a resource:// URI, a log line) but not the key reads
// nothing. The user's own programs may send the secret instead
// (StoreSecretHeader).

// StoreSecretHeader carries Config.StoreSecret to the REST API: a request
// with it may read any result by its id, without the key of its link.
const StoreSecretHeader = "X-Datasf-Store-Secret"

// LinkKey is the key of the link of result id under the store's secret:
// the first 64 bits of HMAC-SHA-256, in hex. 64 bits are out of reach of
// guessing through a loopback listener (at a million tries a second,
// half a million years for one link), and every link the model reads
// carries the key: 128 bits cost the eight everyday tasks about 140
// tokens more (TestEverydayTokens: 8,732 against 8,588 to 8,629).
func LinkKey(secret, id string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("datasf-link\x00" + id))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// storeGate serves rest (the REST API at /resources/) to the links that
// carry their key (at /k/KEY/resources/ID…, stripped of /k/KEY) and to
// requests carrying the secret; everything else gets the 404 of a result
// that does not exist, so that a refusal tells nothing.
type storeGate struct {
	secret string
	rest   http.Handler
}

func (g storeGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/k/") {
		rest, ok := dualresp.CheckLink(r.URL.Path, func(id string) string { return LinkKey(g.secret, id) })
		if !ok {
			notFound(w)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = rest, ""
		g.rest.ServeHTTP(w, r2)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.Header.Get(StoreSecretHeader)), []byte(g.secret)) != 1 {
		notFound(w)
		return
	}
	g.rest.ServeHTTP(w, r)
}

// notFound answers as dualresp does for an id it does not hold.
func notFound(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": "not_found", "message": "no resource with this id (it may have expired and been removed)"})
}
