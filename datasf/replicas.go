package datasf

import (
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// sharedRedis opens the Redis that a redis:// store names, for what the
// replicas sharing it share besides results: MCP sessions, the lists of
// list_results and the upstream budget. Other stores share nothing: nil.
func sharedRedis(store string) (*redis.Client, error) {
	if !strings.HasPrefix(store, "redis://") && !strings.HasPrefix(store, "rediss://") {
		return nil, nil
	}
	opts, err := redis.ParseURL(store)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", store, err)
	}
	return redis.NewClient(opts), nil
}

// sharedMetrics shows at /metrics whether the upstream budget is shared:
// 1 while Redis answers, 0 while this replica keeps to its local share.
func (s *Service) sharedMetrics() {
	if s.shared == nil {
		return
	}
	s.metrics.Gauge("datasf_upstream_limits_shared",
		"1 while each portal's request limits are shared by every replica through Redis; 0 while Redis is unreachable and this replica keeps to its local share (the limits divided by --replicas).",
		func() float64 {
			if s.shared.Shared() {
				return 1
			}
			return 0
		})
	s.metrics.Gauge("datasf_upstream_local_share_turns",
		"Requests to the portals that took their turn from this replica's local share because Redis was unreachable, since start.",
		func() float64 { return float64(s.shared.Fallbacks()) })
}
