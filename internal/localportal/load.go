package localportal

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/soqlsqlite"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// catalogEntry is one dataset's catalog metadata (from LoadCatalog or a load).
type catalogEntry struct {
	schema Schema
	link   string
	added  time.Time // when the catalog was loaded

	// empty is what a query of the entry reads while no data is loaded for
	// it: the entry's columns and no rows (newEmptyDataset), made on the
	// first query (a catalog of hundreds of entries loads at start);
	// emptyErr says why the entry's schema makes no dataset.
	emptyOnce sync.Once
	empty     *dataset
	emptyErr  error
}

// emptyDataset returns the entry's dataset without rows.
func (e *catalogEntry) emptyDataset() (*dataset, error) {
	e.emptyOnce.Do(func() { e.empty, e.emptyErr = newEmptyDataset(e.schema, e.added) })
	return e.empty, e.emptyErr
}

var tableSeq atomic.Int64

// install creates a table for schema plus the extra columns, fills it
// from next and publishes it, replacing any dataset with the same id. Bad
// values go to bad (nil: they fail the load). With into, the table is made
// in the cache file being built instead, and not published (the cache
// publishes it once the file is in place). It returns the row count and
// the dataset.
func (s *Emulator) install(ctx context.Context, schema Schema, extra []socrata.Column, next func() (map[string]any, bool, error), bad badValue, into *builder) (int64, *dataset, error) {
	ds, err := newDataset(schema, s.opts.Now())
	if err != nil {
		return 0, nil, err
	}
	for _, c := range extra {
		if _, ok := ds.byKey[fieldKey(c.FieldName)]; !ok && !isSystemField(c.FieldName) {
			ds.addColumn(c)
		}
	}
	if into != nil {
		if _, err := into.db.ExecContext(ctx, ds.createSQL()); err != nil {
			return 0, nil, fmt.Errorf("localportal: dataset %s: creating table: %w", schema.ID, err)
		}
		n, err := insertRows(ctx, into.db, ds, next, bad)
		if err != nil {
			return n, nil, fmt.Errorf("localportal: dataset %s: loading rows: %w", schema.ID, err)
		}
		into.ds, into.meta.Rows = ds, n
		return n, ds, nil
	}
	ds.table = soqlsqlite.QuoteIdent(fmt.Sprintf("ds_%s_%d", strings.ReplaceAll(schema.ID, "-", "_"), tableSeq.Add(1)))
	if err := s.changeSchema(ctx, ds.createSQL()); err != nil {
		return 0, nil, fmt.Errorf("localportal: dataset %s: creating table: %w", schema.ID, err)
	}
	s.ddlMu.RLock()
	n, err := insertRows(ctx, s.db, ds, next, bad)
	s.ddlMu.RUnlock()
	if err != nil {
		s.changeSchema(context.WithoutCancel(ctx), "DROP TABLE "+ds.table) //nolint:errcheck // best-effort cleanup
		return n, nil, fmt.Errorf("localportal: dataset %s: loading rows: %w", schema.ID, err)
	}
	s.publish(ctx, ds)
	s.log.Debug("localportal: loaded dataset", "id", schema.ID, "rows", n, "columns", len(ds.cols))
	return n, ds, nil
}

// publish makes ds the dataset of its id, retiring the one it replaces.
func (s *Emulator) publish(ctx context.Context, ds *dataset) {
	id := ds.schema.ID
	s.mu.Lock()
	old := s.datasets[id]
	s.datasets[id] = ds
	if _, ok := s.catalog[id]; !ok && old == nil && s.pending[id] == nil {
		s.order = append(s.order, id)
	}
	s.mu.Unlock()
	s.statsAfterLoad(context.WithoutCancel(ctx), ds)
	if old == nil {
		return
	}
	if old.db != nil {
		old.db.Close() //nolint:errcheck // read-only cache file
		return
	}
	s.changeSchema(context.WithoutCancel(ctx), "DROP TABLE "+old.table) //nolint:errcheck // best-effort cleanup
}

// changeSchema runs a CREATE or DROP TABLE statement while no query runs.
func (s *Emulator) changeSchema(ctx context.Context, stmt string) error {
	s.ddlMu.Lock()
	defer s.ddlMu.Unlock()
	_, err := s.db.ExecContext(ctx, stmt)
	return err
}

// completeSchema fills schema's empty fields from the catalog entry of its id.
func (s *Emulator) completeSchema(schema Schema) Schema {
	s.mu.RLock()
	e := s.catalog[schema.ID]
	s.mu.RUnlock()
	if e == nil {
		return schema
	}
	c := e.schema
	if schema.Name == "" {
		schema.Name = c.Name
	}
	if schema.Description == "" {
		schema.Description = c.Description
	}
	if schema.Category == "" {
		schema.Category = c.Category
	}
	if schema.Department == "" {
		schema.Department = c.Department
	}
	if schema.UpdatedAt.IsZero() {
		schema.UpdatedAt = c.UpdatedAt
	}
	if schema.Signals.Tags == nil && schema.Signals.PageViews == 0 && schema.Signals.Downloads == 0 {
		schema.Signals = c.Signals
	}
	if len(schema.Columns) == 0 {
		schema.Columns = append([]socrata.Column(nil), c.Columns...)
	}
	return schema
}

// idFromFileName returns the 4x4 id a fixture file name starts with.
func idFromFileName(path string) string {
	base := filepath.Base(path)
	if len(base) >= 9 && isDatasetID(base[:9]) {
		return base[:9]
	}
	return ""
}

// viewDoc is the part of a Views API document the fake reads.
type viewDoc struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Description   string `json:"description"`
	Category      string `json:"category"`
	RowsUpdatedAt int64  `json:"rowsUpdatedAt"`
	Columns       []struct {
		Name         string `json:"name"`
		FieldName    string `json:"fieldName"`
		DataTypeName string `json:"dataTypeName"`
		Description  string `json:"description"`
	} `json:"columns"`
}

func (v *viewDoc) schema() Schema {
	sc := Schema{ID: v.ID, Name: v.Name, Description: v.Description, Category: v.Category}
	if v.RowsUpdatedAt > 0 {
		sc.UpdatedAt = time.Unix(v.RowsUpdatedAt, 0).UTC()
	}
	for _, c := range v.Columns {
		sc.Columns = append(sc.Columns, socrata.Column{Name: c.Name, FieldName: c.FieldName, DataType: c.DataTypeName, Description: c.Description})
	}
	return sc
}

// LoadCatalog reads a catalog JSONL file, plain or gzip-compressed: one
// dataset per line with
// "endpoint" (or "id"), "title" (or "name"), "description", "category"
// (or "domain_category"), "publishing_department", "rows_updated_at", "url",
// "columns":[{name, fieldName, dataTypeName, description, position}] and,
// where the catalog has them, what Discovery says of the dataset's use:
// "tags", "page_views_total" and "download_count" (Signals).
// Catalog entries appear in Discovery results, are served by the Views API,
// give schemas to datasets loaded later, and can be queried as empty
// datasets until data is loaded for them.
func (s *Emulator) LoadCatalog(ctx context.Context, jsonlPath string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := os.Open(jsonlPath)
	if err != nil {
		return fmt.Errorf("localportal: LoadCatalog: %w", err)
	}
	defer f.Close()
	return s.LoadCatalogFrom(ctx, jsonlPath, f)
}

// LoadCatalogFrom is LoadCatalog reading the catalog from r; name names
// it in errors and logs.
func (s *Emulator) LoadCatalogFrom(ctx context.Context, name string, r io.Reader) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	jsonlPath := name
	// A gzip-compressed catalog (catalog.jsonl.gz, as testdata/ ships it)
	// is read as it is, known by its first bytes rather than its name.
	br := bufio.NewReader(r)
	r = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("localportal: LoadCatalog %s: not a readable gzip file: %w", jsonlPath, err)
		}
		defer zr.Close()
		r = zr
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line, skipped := 0, 0
	var entries []*catalogEntry
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		// One decoding of the line: the scalar fields as any (a catalog may
		// give a number or null where a string is usual), the columns typed.
		var e struct {
			Endpoint             any      `json:"endpoint"`
			ID                   any      `json:"id"`
			Title                any      `json:"title"`
			Name                 any      `json:"name"`
			Description          any      `json:"description"`
			Category             any      `json:"category"`
			DomainCategory       any      `json:"domain_category"`
			PublishingDepartment any      `json:"publishing_department"`
			Department           any      `json:"department"`
			RowsUpdatedAt        any      `json:"rows_updated_at"`
			UpdatedAt            any      `json:"updatedAt"`
			URL                  any      `json:"url"`
			Link                 any      `json:"link"`
			Tags                 []string `json:"tags"`
			PageViews            float64  `json:"page_views_total"`
			Downloads            float64  `json:"download_count"`
			Columns              []struct {
				Name         string `json:"name"`
				FieldName    string `json:"fieldName"`
				DataTypeName string `json:"dataTypeName"`
				Description  string `json:"description"`
				Position     int    `json:"position"`
			} `json:"columns"`
		}
		if err := json.Unmarshal([]byte(text), &e); err != nil {
			return fmt.Errorf("localportal: LoadCatalog %s line %d: %w", jsonlPath, line, err)
		}
		str := func(vals ...any) string {
			for _, v := range vals {
				if v != nil {
					return strings.TrimSpace(fmt.Sprint(v))
				}
			}
			return ""
		}
		id := str(e.Endpoint, e.ID)
		if !isDatasetID(id) {
			skipped++
			s.log.Warn("localportal: catalog line skipped: endpoint is not a 4x4 dataset id", "file", jsonlPath, "line", line, "endpoint", id)
			continue
		}
		schema := Schema{ID: id, Name: str(e.Title, e.Name), Description: str(e.Description),
			Category: cmp.Or(str(e.Category), str(e.DomainCategory)), Department: str(e.PublishingDepartment, e.Department)}
		schema.Signals = Signals{Tags: e.Tags, PageViews: int64(e.PageViews), Downloads: int64(e.Downloads)}
		if t, err := time.Parse(time.RFC3339, str(e.RowsUpdatedAt, e.UpdatedAt)); err == nil {
			schema.UpdatedAt = t
		}
		sort.SliceStable(e.Columns, func(i, j int) bool { return e.Columns[i].Position < e.Columns[j].Position })
		for _, c := range e.Columns {
			schema.Columns = append(schema.Columns, socrata.Column{Name: c.Name, FieldName: c.FieldName, DataType: c.DataTypeName, Description: c.Description})
		}
		entries = append(entries, &catalogEntry{schema: schema, link: str(e.URL, e.Link)})
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("localportal: LoadCatalog %s: %w", jsonlPath, err)
	}
	if len(entries) == 0 && skipped > 0 {
		return fmt.Errorf("localportal: LoadCatalog %s: no line has a 4x4 dataset id", jsonlPath)
	}
	s.addCatalogEntries(entries)
	s.log.Info("localportal: catalog loaded", "file", jsonlPath, "datasets", len(entries), "skipped_lines", skipped)
	return nil
}

// addCatalogEntries adds or replaces catalog entries. An entry without a
// date (rows_updated_at) keeps none, whether it is queried or not: it
// sorts as the oldest in Discovery.
func (s *Emulator) addCatalogEntries(entries []*catalogEntry) {
	now := s.opts.Now()
	for _, e := range entries {
		e.added = now
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		id := e.schema.ID
		if _, ok := s.catalog[id]; !ok {
			if _, loaded := s.datasets[id]; !loaded && s.pending[id] == nil {
				s.order = append(s.order, id)
			}
		}
		s.catalog[id] = e
	}
}

// AddGenerated creates dataset schema with n rows produced by gen(0) …
// gen(n-1). Rows are inserted in batches inside one transaction and are not
// kept in Go memory, so a million rows are fine. Values are given as Socrata
// JSON would give them (strings or numbers for numbers, bools for checkboxes,
// GeoJSON maps or "POINT (lon lat)" for points, time.Time or text for
// timestamps); keys not in the schema are ignored.
func (s *Emulator) AddGenerated(ctx context.Context, schema Schema, n int, gen func(i int) map[string]any) error {
	if n < 0 {
		return fmt.Errorf("localportal: AddGenerated %s: negative row count %d", schema.ID, n)
	}
	if gen == nil {
		return fmt.Errorf("localportal: AddGenerated %s: nil generator", schema.ID)
	}
	i := 0
	_, _, err := s.install(ctx, schema, nil, func() (map[string]any, bool, error) {
		if i >= n {
			return nil, false, nil
		}
		row := gen(i)
		i++
		return row, true, nil
	}, nil, nil)
	return err
}

// Datasets returns the ids of the datasets that have data, sorted: loaded,
// or to be made or loaded on first use (AddLazy, data files loading).
func (s *Emulator) Datasets() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids := make([]string, 0, len(s.datasets)+len(s.pending))
	for id := range s.datasets {
		ids = append(ids, id)
	}
	for id := range s.pending {
		if s.datasets[id] == nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// Schema returns the schema of a dataset or catalog entry. For a dataset
// whose data file is still loading, it waits for the load (its columns
// depend on the file).
func (s *Emulator) Schema(id string) (Schema, bool) {
	return s.schemaOf(context.Background(), id)
}

func (s *Emulator) schemaOf(ctx context.Context, id string) (Schema, bool) {
	s.mu.RLock()
	p := s.pending[id]
	s.mu.RUnlock()
	if p != nil && !p.exact {
		s.ensure(ctx, id) //nolint:errcheck // a failed load falls back to the catalog entry, if any
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if ds, ok := s.datasets[id]; ok {
		sc := ds.schema
		sc.Columns = append([]socrata.Column(nil), sc.Columns...)
		return sc, true
	}
	if p, ok := s.pending[id]; ok && p.exact {
		sc := p.schema
		sc.Columns = append([]socrata.Column(nil), sc.Columns...)
		return sc, true
	}
	if e, ok := s.catalog[id]; ok {
		sc := e.schema
		sc.Columns = append([]socrata.Column(nil), sc.Columns...)
		return sc, true
	}
	return Schema{}, false
}

// lookup returns the dataset for id: loaded, loaded now (a pending
// dataset), or the empty dataset of a catalog entry that has no data.
func (s *Emulator) lookup(ctx context.Context, id string) (*dataset, bool, error) {
	if _, err := s.ensure(ctx, id); err != nil {
		return nil, false, err
	}
	s.mu.RLock()
	ds, ok := s.datasets[id]
	e := s.catalog[id]
	s.mu.RUnlock()
	switch {
	case ok:
		return ds, true, nil
	case e == nil:
		return nil, false, nil
	}
	ds, err := e.emptyDataset()
	if err != nil {
		return nil, false, err
	}
	return ds, true, nil
}
