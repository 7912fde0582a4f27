package mcphttp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

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
// that whoever keeps it (an owner table) never holds the key itself.
func withClientKey(ctx context.Context, key string) context.Context {
	sum := sha256.Sum256([]byte("datasf-client-key\x00" + key))
	return context.WithValue(ctx, clientKeyCtx{}, hex.EncodeToString(sum[:16]))
}

// ClientKey returns the hashed ClientKeyHeader of the request whose
// messages run in ctx, if it sent one (and no bearer token was required).
func ClientKey(ctx context.Context) (string, bool) {
	key, ok := ctx.Value(clientKeyCtx{}).(string)
	return key, ok
}
