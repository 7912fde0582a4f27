package localportal

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Column statistics in Views documents. The real Views API gives each
// column "cachedContents": non_null and null counts, and the top values
// with their counts (up to 20, most frequent first). The portal fills them
// the same way for loaded datasets, computed once per dataset (one scan for
// the counts, one grouped query per text column, at most maxStatsColumns
// of them) and kept until the dataset is replaced. A catalog entry without
// data, or a dataset not made yet (they are made on first query), has
// none, as a portal whose statistics are not computed yet.
const (
	maxStatsColumns = 40
	statsTop        = 20
)

// columnStats is one column's cachedContents.
type columnStats struct {
	NonNull int64      `json:"non_null"`
	Null    int64      `json:"null"`
	Top     []topValue `json:"top,omitempty"`
}

type topValue struct {
	Item  string `json:"item"`
	Count int64  `json:"count"`
}

// statsCache keeps each loaded dataset's column statistics.
type statsCache struct {
	mu   sync.Mutex
	byDS map[*dataset]map[string]*columnStats // by field name
}

// columnStatsOf returns ds's column statistics by field name, computing
// them on first use. An error (a cancelled request) leaves them to the
// next call.
func (s *Portal) columnStatsOf(ctx context.Context, ds *dataset) (map[string]*columnStats, error) {
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	if st, ok := s.stats.byDS[ds]; ok {
		return st, nil
	}
	st, err := s.computeStats(ctx, ds)
	if err != nil {
		return nil, err
	}
	if s.stats.byDS == nil {
		s.stats.byDS = map[*dataset]map[string]*columnStats{}
	}
	// Datasets replaced since are dropped: their pointers are no longer
	// the portal's.
	s.mu.RLock()
	for old := range s.stats.byDS {
		if s.datasets[old.schema.ID] != old {
			delete(s.stats.byDS, old)
		}
	}
	s.mu.RUnlock()
	s.stats.byDS[ds] = st
	return st, nil
}

func (s *Portal) computeStats(ctx context.Context, ds *dataset) (map[string]*columnStats, error) {
	s.ddlMu.RLock()
	defer s.ddlMu.RUnlock()
	db := ds.db
	if db == nil {
		db = s.db
	}
	cols := ds.cols
	if len(cols) > maxStatsColumns {
		cols = cols[:maxStatsColumns]
	}
	if len(cols) == 0 {
		return map[string]*columnStats{}, nil
	}
	var sel strings.Builder
	sel.WriteString("SELECT count(*)")
	for _, c := range cols {
		sel.WriteString(", count(" + c.sqlName + ")")
	}
	sel.WriteString(" FROM " + ds.table)
	counts := make([]int64, len(cols)+1)
	ptrs := make([]any, len(counts))
	for i := range counts {
		ptrs[i] = &counts[i]
	}
	if err := db.QueryRowContext(ctx, sel.String()).Scan(ptrs...); err != nil {
		return nil, fmt.Errorf("localportal: column statistics of %s: %w", ds.schema.ID, err)
	}
	out := make(map[string]*columnStats, len(cols))
	for i, c := range cols {
		st := &columnStats{NonNull: counts[i+1], Null: counts[0] - counts[i+1]}
		out[c.FieldName] = st
		if c.kind != kindText || st.NonNull == 0 {
			continue
		}
		q := fmt.Sprintf("SELECT %[1]s, count(*) AS n FROM %[2]s WHERE %[1]s IS NOT NULL GROUP BY %[1]s ORDER BY n DESC, %[1]s LIMIT %[3]d",
			c.sqlName, ds.table, statsTop)
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("localportal: top values of %s.%s: %w", ds.schema.ID, c.FieldName, err)
		}
		for rows.Next() {
			var v any
			var n int64
			if err := rows.Scan(&v, &n); err != nil {
				rows.Close()
				return nil, err
			}
			st.Top = append(st.Top, topValue{Item: fmt.Sprint(v), Count: n})
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
