package datasf

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// sharedResultLists keeps sessionResults' lists in Redis: one list of
// result ids per owner key (a session, a client key, a token's owner), the
// newest MaxResultsPerOwner, expiring sharedListTTL after the last result
// was added. A session's list follows it to whichever replica serves its
// next call, and ends with it (DELETE /mcp) or by expiry.
type sharedResultLists struct {
	rdb redis.UniversalClient
	log *slog.Logger
}

// sharedListTTL is how long a list outlives its last addition: longer
// than any result lives without being read again, so a list never loses
// a live result by expiring first.
const sharedListTTL = 24 * time.Hour

// redisTimeout bounds one Redis call of the lists.
const redisTimeout = 2 * time.Second

func (l *sharedResultLists) key(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return "datasf:results-of:" + hex.EncodeToString(sum[:16])
}

func (l *sharedResultLists) add(ctx context.Context, owner, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), redisTimeout)
	defer cancel()
	k := l.key(owner)
	pipe := l.rdb.TxPipeline()
	pipe.RPush(ctx, k, id)
	pipe.LTrim(ctx, k, -MaxResultsPerOwner, -1)
	pipe.Expire(ctx, k, sharedListTTL)
	if _, err := pipe.Exec(ctx); err != nil {
		l.log.Warn("list_results: Redis failed recording a result in its owner's list; the result is stored and its link works, but list_results will not show it", "error", err.Error())
	}
}

func (l *sharedResultLists) list(ctx context.Context, owner string) []string {
	ctx, cancel := context.WithTimeout(ctx, redisTimeout)
	defer cancel()
	ids, err := l.rdb.LRange(ctx, l.key(owner), 0, -1).Result()
	if err != nil {
		l.log.Warn("list_results: Redis failed reading the caller's list", "error", err.Error())
		return nil
	}
	return ids
}

func (l *sharedResultLists) forget(owner string) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	_ = l.rdb.Del(ctx, l.key(owner)).Err()
}
