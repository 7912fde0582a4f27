package socratatest

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// catalogEntry is one dataset's catalog metadata (from LoadCatalog or a load).
type catalogEntry struct {
	schema Schema
	link   string
}

var tableSeq atomic.Int64

// install creates a table for schema, fills it from next and publishes it,
// replacing any dataset with the same id.
func (s *Server) install(schema Schema, extra []string, samples map[string]any, next func() (map[string]any, bool, error)) error {
	ds, err := newDataset(schema, s.opts.Now())
	if err != nil {
		return err
	}
	for _, f := range extra {
		if _, ok := ds.byKey[fieldKey(f)]; !ok && !isSystemField(f) {
			ds.addColumn(f, samples[f])
		}
	}
	ds.table = quoteIdent(fmt.Sprintf("ds_%s_%d", strings.ReplaceAll(schema.ID, "-", "_"), tableSeq.Add(1)))
	ctx := context.Background()
	if err := s.changeSchema(ctx, ds.createSQL()); err != nil {
		return fmt.Errorf("socratatest: dataset %s: creating table: %w", schema.ID, err)
	}
	s.ddlMu.RLock()
	n, err := insertRows(ctx, s.db, ds, next)
	s.ddlMu.RUnlock()
	if err != nil {
		s.changeSchema(ctx, "DROP TABLE "+ds.table) //nolint:errcheck // best-effort cleanup
		return fmt.Errorf("socratatest: dataset %s: loading rows: %w", schema.ID, err)
	}
	s.mu.Lock()
	old := s.datasets[schema.ID]
	s.datasets[schema.ID] = ds
	if _, ok := s.catalog[schema.ID]; !ok {
		s.order = append(s.order, schema.ID)
	}
	s.mu.Unlock()
	if old != nil {
		s.changeSchema(ctx, "DROP TABLE "+old.table) //nolint:errcheck // best-effort cleanup
	}
	s.log.Info("socratatest: loaded dataset", "id", schema.ID, "rows", n, "columns", len(ds.cols))
	return nil
}

// changeSchema runs a CREATE or DROP TABLE statement while no query runs.
func (s *Server) changeSchema(ctx context.Context, stmt string) error {
	s.ddlMu.Lock()
	defer s.ddlMu.Unlock()
	_, err := s.db.ExecContext(ctx, stmt)
	return err
}

// completeSchema fills schema's empty fields from the catalog entry of its id.
func (s *Server) completeSchema(schema Schema) Schema {
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
	if len(schema.Columns) == 0 {
		schema.Columns = append([]Column(nil), c.Columns...)
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

// LoadResourceJSON loads a file holding a JSON array of rows as the Resource
// API returns them (/resource/{id}.json). schema.ID defaults to the 4x4 id
// the file name starts with; missing schema fields and columns are taken
// from the catalog (LoadCatalog first), and keys found in the rows but in no
// schema become extra columns.
func (s *Server) LoadResourceJSON(path string, schema Schema) error {
	if schema.ID == "" {
		schema.ID = idFromFileName(path)
	}
	if schema.ID == "" {
		return fmt.Errorf("socratatest: LoadResourceJSON %s: no dataset id given and the file name does not start with one", path)
	}
	schema = s.completeSchema(schema)
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("socratatest: LoadResourceJSON: %w", err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b, &rows); err != nil {
		return fmt.Errorf("socratatest: LoadResourceJSON %s: want a JSON array of row objects: %w", path, err)
	}
	known := map[string]bool{}
	for _, c := range schema.Columns {
		known[fieldKey(c.FieldName)] = true
	}
	var extra []string
	samples := map[string]any{}
	for _, r := range rows {
		for k, v := range r {
			if known[fieldKey(k)] {
				continue
			}
			if _, seen := samples[k]; !seen {
				extra = append(extra, k)
			}
			if samples[k] == nil {
				samples[k] = v
			}
		}
	}
	sort.Strings(extra)
	i := 0
	return s.install(schema, extra, samples, func() (map[string]any, bool, error) {
		if i >= len(rows) {
			return nil, false, nil
		}
		i++
		return canonicalKeys(rows[i-1], schema.Columns), true, nil
	})
}

// canonicalKeys renames keys that match a schema field name only up to case
// or '-' versus '_' to the schema's spelling.
func canonicalKeys(row map[string]any, cols []Column) map[string]any {
	var fix map[string]string
	for k := range row {
		for _, c := range cols {
			if k != c.FieldName && fieldKey(k) == fieldKey(c.FieldName) {
				if fix == nil {
					fix = map[string]string{}
				}
				fix[k] = c.FieldName
			}
		}
	}
	for from, to := range fix {
		row[to] = row[from]
		delete(row, from)
	}
	return row
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
		sc.Columns = append(sc.Columns, Column{Name: c.Name, FieldName: c.FieldName, DataType: c.DataTypeName, Description: c.Description})
	}
	return sc
}

// LoadRowsJSON loads a legacy rows.json export ({"meta":{"view":…},"data":[[…]]})
// and, when viewPath is not empty, its Views API document for the metadata.
// The dataset id is the 4x4 id the file name starts with, else the view's.
func (s *Server) LoadRowsJSON(rowsPath, viewPath string) error {
	b, err := os.ReadFile(rowsPath)
	if err != nil {
		return fmt.Errorf("socratatest: LoadRowsJSON: %w", err)
	}
	var doc struct {
		Meta struct {
			View viewDoc `json:"view"`
		} `json:"meta"`
		Data [][]any `json:"data"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("socratatest: LoadRowsJSON %s: want {\"meta\":{\"view\":…},\"data\":[[…]]}: %w", rowsPath, err)
	}
	meta := doc.Meta.View
	view := meta
	if viewPath != "" {
		vb, err := os.ReadFile(viewPath)
		if err != nil {
			return fmt.Errorf("socratatest: LoadRowsJSON: %w", err)
		}
		view = viewDoc{}
		if err := json.Unmarshal(vb, &view); err != nil {
			return fmt.Errorf("socratatest: LoadRowsJSON: view %s: %w", viewPath, err)
		}
	}
	schema := view.schema()
	if id := idFromFileName(rowsPath); id != "" {
		schema.ID = id
	} else if schema.ID == "" {
		schema.ID = meta.ID
	}
	// The data arrays follow meta.view's columns; keep the view document's
	// column descriptions where they have them.
	desc := map[string]Column{}
	for _, c := range schema.Columns {
		desc[fieldKey(c.FieldName)] = c
	}
	var cols []Column
	for _, c := range meta.Columns {
		col := Column{Name: c.Name, FieldName: c.FieldName, DataType: c.DataTypeName, Description: c.Description}
		if d, ok := desc[fieldKey(c.FieldName)]; ok && col.Description == "" {
			col.Description = d.Description
		}
		cols = append(cols, col)
	}
	if len(cols) == 0 {
		return fmt.Errorf("socratatest: LoadRowsJSON %s: meta.view has no columns", rowsPath)
	}
	schema.Columns = cols
	schema = s.completeSchema(schema)
	i := 0
	return s.install(schema, nil, nil, func() (map[string]any, bool, error) {
		if i >= len(doc.Data) {
			return nil, false, nil
		}
		cells := doc.Data[i]
		i++
		row := make(map[string]any, len(cols))
		for j, c := range cols {
			if j < len(cells) && !isSystemField(c.FieldName) {
				row[c.FieldName] = cells[j]
			}
		}
		return row, true, nil
	})
}

// LoadCSV loads a CSV file whose first line holds column names or field
// names (matched case-insensitively against schema, else against the
// catalog's schema for id). Empty cells are nulls. Headers matching no
// column become text columns.
func (s *Server) LoadCSV(id string, path string, schema Schema) error {
	if id == "" {
		id = idFromFileName(path)
	}
	schema.ID = id
	schema = s.completeSchema(schema)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("socratatest: LoadCSV: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	header, err := r.Read()
	if err != nil {
		return fmt.Errorf("socratatest: LoadCSV %s: reading header: %w", path, err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	fields := make([]string, len(header))
	var extra []string
	for i, h := range header {
		fields[i] = ""
		for _, c := range schema.Columns {
			if strings.EqualFold(strings.TrimSpace(h), c.Name) || fieldKey(strings.TrimSpace(h)) == fieldKey(c.FieldName) {
				fields[i] = c.FieldName
				break
			}
		}
		if fields[i] == "" {
			fields[i] = fieldNameFor(h)
			if fields[i] == "" {
				fields[i] = fmt.Sprintf("column_%d", i+1)
			}
			extra = append(extra, fields[i])
		}
	}
	line := 1
	return s.install(schema, extra, nil, func() (map[string]any, bool, error) {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil, false, nil
		}
		line++
		if err != nil {
			return nil, false, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		row := make(map[string]any, len(rec))
		for i, v := range rec {
			if i < len(fields) && v != "" {
				row[fields[i]] = v
			}
		}
		return row, true, nil
	})
}

// LoadCatalog reads a catalog JSONL file: one dataset per line with
// "endpoint" (or "id"), "title" (or "name"), "description", "category",
// "publishing_department", "rows_updated_at", "url" and
// "columns":[{name, fieldName, dataTypeName, description, position}].
// Catalog entries appear in Discovery results, are served by the Views API,
// give schemas to datasets loaded later, and can be queried as empty
// datasets until data is loaded for them.
func (s *Server) LoadCatalog(jsonlPath string) error {
	f, err := os.Open(jsonlPath)
	if err != nil {
		return fmt.Errorf("socratatest: LoadCatalog: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line, skipped := 0, 0
	var entries []*catalogEntry
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var raw map[string]any
		if err := json.Unmarshal([]byte(text), &raw); err != nil {
			return fmt.Errorf("socratatest: LoadCatalog %s line %d: %w", jsonlPath, line, err)
		}
		var e struct {
			Columns []struct {
				Name         string `json:"name"`
				FieldName    string `json:"fieldName"`
				DataTypeName string `json:"dataTypeName"`
				Description  string `json:"description"`
				Position     int    `json:"position"`
			} `json:"columns"`
		}
		if err := json.Unmarshal([]byte(text), &e); err != nil {
			return fmt.Errorf("socratatest: LoadCatalog %s line %d: columns: %w", jsonlPath, line, err)
		}
		str := func(keys ...string) string {
			for _, k := range keys {
				if v, ok := raw[k]; ok && v != nil {
					return strings.TrimSpace(fmt.Sprint(v))
				}
			}
			return ""
		}
		id := str("endpoint", "id")
		if !isDatasetID(id) {
			skipped++
			s.log.Warn("socratatest: catalog line skipped: endpoint is not a 4x4 dataset id", "file", jsonlPath, "line", line, "endpoint", id)
			continue
		}
		schema := Schema{ID: id, Name: str("title", "name"), Description: str("description"),
			Category: str("category"), Department: str("publishing_department", "department")}
		if t, err := time.Parse(time.RFC3339, str("rows_updated_at", "updatedAt")); err == nil {
			schema.UpdatedAt = t
		}
		sort.SliceStable(e.Columns, func(i, j int) bool { return e.Columns[i].Position < e.Columns[j].Position })
		for _, c := range e.Columns {
			schema.Columns = append(schema.Columns, Column{Name: c.Name, FieldName: c.FieldName, DataType: c.DataTypeName, Description: c.Description})
		}
		entries = append(entries, &catalogEntry{schema: schema, link: str("url", "link")})
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("socratatest: LoadCatalog %s: %w", jsonlPath, err)
	}
	if len(entries) == 0 && skipped > 0 {
		return fmt.Errorf("socratatest: LoadCatalog %s: no line has a 4x4 dataset id", jsonlPath)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		id := e.schema.ID
		if _, ok := s.catalog[id]; !ok {
			if _, loaded := s.datasets[id]; !loaded {
				s.order = append(s.order, id)
			}
		}
		s.catalog[id] = e
	}
	return nil
}

// LoadFixturesDir loads every dataset file in dir, named as in the shared
// fixtures (each file name starts with the dataset's 4x4 id): "*.rows.json"
// with its "*.view.json", plain "*.json" as Resource API JSON (schema from
// the catalog), and "*.csv". Catalog "*.jsonl" files in dir are loaded first.
func (s *Server) LoadFixturesDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("socratatest: LoadFixturesDir: %w", err)
	}
	type files struct{ rows, view, resource, csv string }
	byID := map[string]*files{}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		name := e.Name()
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, ".jsonl") {
			if err := s.LoadCatalog(p); err != nil {
				return err
			}
			continue
		}
		id := idFromFileName(name)
		if id == "" {
			continue
		}
		fs := byID[id]
		if fs == nil {
			fs = &files{}
			byID[id] = fs
			ids = append(ids, id)
		}
		switch {
		case strings.HasSuffix(name, ".rows.json"):
			fs.rows = p
		case strings.HasSuffix(name, ".view.json"):
			fs.view = p
		case strings.HasSuffix(name, ".json"):
			fs.resource = p
		case strings.HasSuffix(name, ".csv"):
			fs.csv = p
		}
	}
	var errs []error
	for _, id := range ids {
		fs := byID[id]
		switch {
		case fs.rows != "":
			errs = append(errs, s.LoadRowsJSON(fs.rows, fs.view))
		case fs.resource != "":
			errs = append(errs, s.LoadResourceJSON(fs.resource, Schema{ID: id}))
		case fs.csv != "":
			errs = append(errs, s.LoadCSV(id, fs.csv, Schema{}))
		}
	}
	return errors.Join(errs...)
}

// AddGenerated creates dataset schema with n rows produced by gen(0) …
// gen(n-1). Rows are inserted in batches inside one transaction and are not
// kept in Go memory, so a million rows are fine. Values are given as Socrata
// JSON would give them (strings or numbers for numbers, bools for checkboxes,
// GeoJSON maps or "POINT (lon lat)" for points, time.Time or text for
// timestamps); keys not in the schema are ignored.
func (s *Server) AddGenerated(schema Schema, n int, gen func(i int) map[string]any) error {
	if n < 0 {
		return fmt.Errorf("socratatest: AddGenerated %s: negative row count %d", schema.ID, n)
	}
	if gen == nil {
		return fmt.Errorf("socratatest: AddGenerated %s: nil generator", schema.ID)
	}
	i := 0
	return s.install(schema, nil, nil, func() (map[string]any, bool, error) {
		if i >= n {
			return nil, false, nil
		}
		row := gen(i)
		i++
		return row, true, nil
	})
}

// Datasets returns the ids of the datasets with loaded data, sorted.
func (s *Server) Datasets() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids := make([]string, 0, len(s.datasets))
	for id := range s.datasets {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Schema returns the schema of a loaded dataset or catalog entry.
func (s *Server) Schema(id string) (Schema, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if ds, ok := s.datasets[id]; ok {
		sc := ds.schema
		sc.Columns = append([]Column(nil), sc.Columns...)
		return sc, true
	}
	if e, ok := s.catalog[id]; ok {
		sc := e.schema
		sc.Columns = append([]Column(nil), sc.Columns...)
		return sc, true
	}
	return Schema{}, false
}

// lookup returns the dataset for id, creating an empty table for a catalog
// entry that has no data yet.
func (s *Server) lookup(id string) (*dataset, bool, error) {
	s.mu.RLock()
	ds, ok := s.datasets[id]
	e := s.catalog[id]
	s.mu.RUnlock()
	if ok {
		return ds, true, nil
	}
	if e == nil {
		return nil, false, nil
	}
	s.lazyMu.Lock()
	defer s.lazyMu.Unlock()
	s.mu.RLock()
	ds, ok = s.datasets[id]
	s.mu.RUnlock()
	if ok {
		return ds, true, nil
	}
	if err := s.install(e.schema, nil, nil, func() (map[string]any, bool, error) { return nil, false, nil }); err != nil {
		return nil, false, err
	}
	s.mu.RLock()
	ds, ok = s.datasets[id]
	s.mu.RUnlock()
	return ds, ok, nil
}
