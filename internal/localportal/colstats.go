package localportal

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/datasf-mcp/datasf-mcp/internal/soqlsqlite"
)

// Column statistics in Views documents. The real Views API gives each
// column "cachedContents": non_null and null counts, and the top values
// with their counts (up to 20, most frequent first). The portal fills them
// the same way for loaded datasets, computed once per dataset (one scan for
// the counts, one grouped scan per text column, at most maxStatsColumns
// of them) and kept until the dataset is replaced: while a small dataset
// loads, or in the background for a large one (statsSyncRows). A catalog
// entry without data, or a dataset made on first use and not made yet,
// has none, as a portal whose statistics are not computed yet.
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

// The statistics of a cache file's dataset are kept beside the file, in
// NAME.stats.json with the file's key, once computed: the next start of
// the offline portal, or another process on the same cache, reads them
// instead of scanning the rows again (3 CPU-s for the 250,000 rows of
// wg3w-h783, which every process describing it spent). A file that does
// not read, or has another key (the cache file was rebuilt for other
// data), is ignored and rewritten.
const statsFileSuffix = ".stats.json"

type statsFile struct {
	Key   string                  `json:"key"`
	Stats map[string]*columnStats `json:"stats"`
}

// readStats returns the statistics kept for ds's cache file, or nil.
func readStats(ds *dataset) map[string]*columnStats {
	if ds.statsPath == "" {
		return nil
	}
	b, err := os.ReadFile(ds.statsPath)
	if err != nil {
		return nil
	}
	var f statsFile
	if err := json.Unmarshal(b, &f); err != nil || f.Key != ds.statsKey || f.Stats == nil {
		return nil
	}
	return f.Stats
}

// writeStats keeps st beside ds's cache file (best effort: the statistics
// are computed again when it fails).
func (s *Emulator) writeStats(ds *dataset, st map[string]*columnStats) {
	if ds.statsPath == "" {
		return
	}
	b, err := json.Marshal(statsFile{Key: ds.statsKey, Stats: st})
	if err == nil {
		tmp := ds.statsPath + ".tmp-" + rand.Text()[:10]
		if err = os.WriteFile(tmp, b, 0o644); err == nil {
			if err = os.Rename(tmp, ds.statsPath); err != nil {
				os.Remove(tmp) //nolint:errcheck // best effort
			}
		}
	}
	if err != nil {
		s.log.Debug("localportal: column statistics not kept", "file", ds.statsPath, "err", err)
	}
}

// statsCache keeps each loaded dataset's column statistics.
type statsCache struct {
	mu        sync.Mutex
	byDS      map[*dataset]map[string]*columnStats // by field name
	computing map[*dataset]bool
}

// statsSyncRows bounds the datasets whose statistics are computed while
// they load (so that their first Views document has them); a larger one
// gets them in the background after a Views request first asks, as a real
// portal computes cachedContents after an upload. A Views request never
// waits for them.
const statsSyncRows = 50000

// statsAfterLoad computes a just-published dataset's statistics when it
// is small.
func (s *Emulator) statsAfterLoad(ctx context.Context, ds *dataset) {
	if st := readStats(ds); st != nil {
		s.storeStats(ds, st)
		return
	}
	db := ds.db
	if db == nil {
		db = s.db
	}
	var n int64
	s.ddlMu.RLock()
	err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+ds.table).Scan(&n)
	s.ddlMu.RUnlock()
	if err == nil && n <= statsSyncRows {
		s.computeAndStore(ctx, ds)
	}
}

// storedStats returns ds's column statistics by field name, or nil when
// they are not computed yet; then it starts computing them in the
// background (once).
func (s *Emulator) storedStats(ds *dataset) map[string]*columnStats {
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	if st, ok := s.stats.byDS[ds]; ok {
		return st
	}
	if !s.stats.computing[ds] {
		if st := readStats(ds); st != nil {
			s.storeStatsLocked(ds, st)
			return st
		}
		if s.stats.computing == nil {
			s.stats.computing = map[*dataset]bool{}
		}
		s.stats.computing[ds] = true
		go s.computeAndStore(context.Background(), ds)
	}
	return nil
}

// computeAndStore computes ds's statistics and keeps them. An error (the
// portal closing) leaves them to a later Views request.
func (s *Emulator) computeAndStore(ctx context.Context, ds *dataset) {
	st, err := s.computeStats(ctx, ds)
	if err == nil {
		s.writeStats(ds, st)
	}
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	delete(s.stats.computing, ds)
	if err != nil {
		s.log.Debug("localportal: column statistics not computed", "dataset", ds.schema.ID, "err", err)
		return
	}
	s.storeStatsLocked(ds, st)
}

// storeStats keeps st as ds's statistics.
func (s *Emulator) storeStats(ds *dataset, st map[string]*columnStats) {
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	s.storeStatsLocked(ds, st)
}

// storeStatsLocked is storeStats with s.stats.mu held.
func (s *Emulator) storeStatsLocked(ds *dataset, st map[string]*columnStats) {
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
}

func (s *Emulator) computeStats(ctx context.Context, ds *dataset) (map[string]*columnStats, error) {
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
	var text []*column
	for i, c := range cols {
		st := &columnStats{NonNull: counts[i+1], Null: counts[0] - counts[i+1]}
		out[c.FieldName] = st
		if c.kind == soqlsqlite.KindText && st.NonNull > 0 {
			text = append(text, c)
		}
	}
	if len(text) == 0 {
		return out, nil
	}
	// The top values of each text column: one grouped scan per column, in
	// a statement of its own, so that SQLite holds one GROUP BY's sorter at
	// a time. (One statement of all columns, a UNION ALL ranked by a
	// window function, held every column's sorter until it ended: about
	// 8 MiB each, 110 MiB more for the 250,000 rows of wg3w-h783, while
	// this runs in the background beside exports; issue 52, item 7.)
	for _, c := range text {
		q := fmt.Sprintf("SELECT %s AS v, count(*) AS n FROM %s WHERE %s IS NOT NULL GROUP BY %s ORDER BY n DESC, v LIMIT %d",
			c.sqlName, ds.table, c.sqlName, c.sqlName, statsTop)
		if err := topValues(ctx, db, q, out[c.FieldName]); err != nil {
			return nil, fmt.Errorf("localportal: top values of %s: %w", ds.schema.ID, err)
		}
	}
	return out, nil
}

// topValues appends the values and counts q returns to st.Top, in order.
func topValues(ctx context.Context, db *sql.DB, q string, st *columnStats) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var v any
		var n int64
		if err := rows.Scan(&v, &n); err != nil {
			return err
		}
		st.Top = append(st.Top, topValue{Item: fmt.Sprint(v), Count: n})
	}
	return rows.Err()
}
