package localportal

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/soqlsqlite"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// This file loads the portal's exports as a user has them: CSV (headers
// are display names or field names), Resource API JSON, GeoJSON, and
// rows.json with its Views document. Each file is matched to a dataset by
// the 4x4 id its name starts with, by its catalog name (the portal's
// download name, "Police_Department_Incident_Reports__2018_to_Present.csv"),
// or explicitly ("ID=FILE"); a file that matches nothing becomes a dataset
// of its own, named after the file. Columns the schema does not know get a
// type inferred from their values. Every file ends in a FileReport: loaded
// with its row count and column types, or failed with the reason; a value
// that cannot be read as its column's type is reported with its row,
// column and text and stored as null (or, with Strict, fails the file).

// LoadOptions configures LoadFiles. The zero value is valid.
type LoadOptions struct {
	// Strict makes a value of the wrong type fail its file, and the first
	// failed file stop the load. By default such a value is stored as null
	// and reported, and a failed file does not stop the others.
	Strict bool

	into *builder // build the dataset into this cache file (see cache.go)
}

// FileReport says what became of one data file.
type FileReport struct {
	Path   string // the data file (for rows.json, the rows file)
	Format string // "csv", "json" (Resource API rows), "geojson", "rows.json", "view.json" (schema only)
	// ID is the dataset the file was loaded as; MatchedBy says how it was
	// chosen: "explicit" (ID=FILE), "file name id", "catalog name",
	// "sample dataset name" (the title of a built-in dataset), "dataset
	// name" (of one loaded before), "view document", or "new dataset" (no
	// match: an id derived from the file name). A dataset that neither its
	// file nor the catalog names is named after the sample dataset it
	// replaces, else after the file.
	ID        string
	Name      string
	MatchedBy string
	Rows      int64
	Columns   []socrata.Column // the dataset's columns after the load, with their types
	Inferred  []string         // field names whose type was inferred from the values
	// BadValues counts the values stored as null because they could not be
	// read as their column's type; Problems holds the first of them.
	BadValues int
	Problems  []ValueProblem
	Took      time.Duration
	Err       error // nil when loaded
}

// ValueProblem is one value that could not be read as its column's type.
type ValueProblem struct {
	Row    int64 // 1-based data row (for CSV, the line is Row+1)
	Column string
	Value  string
	Reason string
}

func (p ValueProblem) String() string {
	return fmt.Sprintf("row %d, column %s: %s", p.Row, p.Column, p.Reason)
}

// maxProblems is how many problems a FileReport keeps.
const maxProblems = 20

// dataFile is one planned load: a file, its format and its dataset.
type dataFile struct {
	path, view, format string
	id, name, matched  string
	explicit           bool
}

// ParseDataSpec reads one --data argument: "FILE", "DIR", or "ID=FILE"
// (ID a 4x4 dataset id).
func ParseDataSpec(spec string) (id, path string) {
	if before, after, ok := strings.Cut(spec, "="); ok && isDatasetID(before) {
		return before, after
	}
	return "", spec
}

// LoadFiles loads data files (see ParseDataSpec; a directory stands for
// the files in it, catalog *.jsonl files first) and reports on each. The
// error joins the failures; without Strict, every file is tried.
func (s *Emulator) LoadFiles(ctx context.Context, specs []string, opts LoadOptions) ([]FileReport, error) {
	files, reports, err := s.planFiles(ctx, specs)
	if err != nil && opts.Strict {
		return reports, err
	}
	errs := []error{err}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return reports, errors.Join(append(errs, err)...)
		}
		r := s.loadFile(ctx, f, opts)
		reports = append(reports, r)
		if r.Err != nil {
			errs = append(errs, r.Err)
			if opts.Strict {
				break
			}
		}
	}
	return reports, errors.Join(errs...)
}

// dataExtensions are the file endings LoadFiles reads, longest first.
var dataExtensions = []string{".rows.json", ".view.json", ".geojson", ".jsonl", ".json", ".csv"}

func splitExt(path string) (stem, ext string) {
	base := filepath.Base(path)
	lower := strings.ToLower(base)
	for _, e := range dataExtensions {
		if strings.HasSuffix(lower, e) {
			return base[:len(base)-len(e)], e
		}
	}
	return strings.TrimSuffix(base, filepath.Ext(base)), strings.ToLower(filepath.Ext(base))
}

// planFiles expands directories, loads catalogs, pairs rows.json with
// view.json and matches every data file to a dataset id.
func (s *Emulator) planFiles(ctx context.Context, specs []string) ([]*dataFile, []FileReport, error) {
	type spec struct{ id, path string }
	var list []spec
	var errs []error
	var reports []FileReport
	for _, sp := range specs {
		id, path := ParseDataSpec(sp)
		st, err := os.Stat(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("localportal: data %s: %w", path, err))
			reports = append(reports, FileReport{Path: path, ID: id, Err: err})
			continue
		}
		if !st.IsDir() {
			list = append(list, spec{id, path})
			continue
		}
		if id != "" {
			err := fmt.Errorf("localportal: data %s: ID=PATH needs a file, and %s is a directory", sp, path)
			errs = append(errs, err)
			reports = append(reports, FileReport{Path: path, ID: id, Err: err})
			continue
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("localportal: data %s: %w", path, err))
			continue
		}
		for _, e := range entries {
			if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				list = append(list, spec{"", filepath.Join(path, e.Name())})
			}
		}
	}
	// Catalogs first: they name the datasets the other files are matched to.
	var rest []spec
	for _, sp := range list {
		if _, ext := splitExt(sp.path); ext == ".jsonl" {
			if err := s.LoadCatalog(ctx, sp.path); err != nil {
				errs = append(errs, err)
				reports = append(reports, FileReport{Path: sp.path, Format: "catalog", Err: err})
			}
			continue
		}
		rest = append(rest, sp)
	}
	// A view.json beside a rows.json of the same stem is its metadata.
	views := map[string]string{}
	for _, sp := range rest {
		if stem, ext := splitExt(sp.path); ext == ".view.json" {
			views[filepath.Join(filepath.Dir(sp.path), stem)] = sp.path
		}
	}
	var files []*dataFile
	paired := map[string]bool{}
	for _, sp := range rest {
		stem, ext := splitExt(sp.path)
		f := &dataFile{path: sp.path, id: sp.id, explicit: sp.id != ""}
		switch ext {
		case ".csv":
			f.format = "csv"
		case ".geojson":
			f.format = "geojson"
		case ".rows.json":
			f.format = "rows.json"
			if v, ok := views[filepath.Join(filepath.Dir(sp.path), stem)]; ok {
				f.view = v
				paired[v] = true
			}
		case ".json":
			format, err := sniffJSON(sp.path)
			if err != nil {
				errs = append(errs, err)
				reports = append(reports, FileReport{Path: sp.path, ID: sp.id, Format: "json", Err: err})
				continue
			}
			f.format = format
		case ".view.json":
			continue // handled below when not paired
		default:
			err := fmt.Errorf("localportal: data %s: unknown file type %q (want .csv, .json, .geojson, .rows.json with .view.json, or a catalog .jsonl)", sp.path, ext)
			errs = append(errs, err)
			reports = append(reports, FileReport{Path: sp.path, ID: sp.id, Err: err})
			continue
		}
		files = append(files, f)
	}
	for _, sp := range rest {
		if _, ext := splitExt(sp.path); ext == ".view.json" && !paired[sp.path] {
			files = append(files, &dataFile{path: sp.path, format: "view.json", id: sp.id, explicit: sp.id != ""})
		}
	}
	for _, f := range files {
		s.matchFile(f)
	}
	// One file per dataset: a second file for the same id is reported, not
	// loaded over the first.
	byID := map[string]*dataFile{}
	kept := files[:0]
	for _, f := range files {
		if prev := byID[f.id]; prev != nil && f.id != "" {
			err := fmt.Errorf("localportal: data %s: dataset %s is already loaded from %s (matched by %s); give one of them another id with ID=FILE",
				f.path, f.id, prev.path, prev.matched)
			errs = append(errs, err)
			reports = append(reports, FileReport{Path: f.path, Format: f.format, ID: f.id, MatchedBy: f.matched, Err: err})
			continue
		}
		byID[f.id] = f
		kept = append(kept, f)
	}
	return kept, reports, errors.Join(errs...)
}

// sniffJSON tells a .json file's format from its first bytes and keys.
func sniffJSON(path string) (string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("localportal: data %s: %w", path, err)
	}
	defer fh.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(fh, head)
	text := strings.TrimLeft(strings.TrimPrefix(string(head[:n]), "\ufeff"), " \t\r\n")
	switch {
	case strings.HasPrefix(text, "["):
		return "json", nil
	case strings.HasPrefix(text, "{"):
		compact := strings.Join(strings.Fields(text), "")
		switch {
		case strings.Contains(compact, `"FeatureCollection"`) || strings.Contains(compact, `"features":`):
			return "geojson", nil
		case strings.Contains(compact, `"meta":`) || strings.Contains(compact, `"data":[`):
			return "rows.json", nil
		case strings.Contains(compact, `"columns":`):
			return "view.json", nil
		}
	}
	return "", fmt.Errorf("localportal: data %s: not a JSON export this portal reads (want an array of rows, a GeoJSON FeatureCollection, rows.json or a Views document)", path)
}

// matchFile chooses the dataset id of a file (see FileReport.MatchedBy)
// and the name it gets when neither the file nor the catalog names it.
func (s *Emulator) matchFile(f *dataFile) {
	stem, _ := splitExt(f.path)
	switch {
	case f.explicit:
		f.matched = "explicit"
	case idFromFileName(f.path) != "":
		f.id, f.matched = idFromFileName(f.path), "file name id"
	default:
		if id, how := s.idByName(stem); id != "" {
			f.id, f.matched = id, how
		}
	}
	if f.id == "" && (f.format == "rows.json" || f.format == "view.json") {
		if id := viewIDOf(f); id != "" {
			f.id, f.matched = id, "view document"
		}
	}
	if f.id == "" {
		f.id, f.matched = derivedID(stem), "new dataset"
	}
	f.name = s.readableName(f.id, stem)
}

// readableName names a dataset loaded from a file named stem when neither
// the file nor the catalog names it: the name of the sample or loaded
// dataset the file replaces, else the file name without its dataset id,
// with spaces for underscores, else the id.
func (s *Emulator) readableName(id, stem string) string {
	s.mu.RLock()
	var name string
	if p := s.pending[id]; p != nil {
		name = p.schema.Name
	}
	if ds := s.datasets[id]; ds != nil && name == "" {
		name = ds.schema.Name
	}
	s.mu.RUnlock()
	if name != "" {
		return name
	}
	if len(stem) >= 9 && isDatasetID(stem[:9]) {
		stem = stem[9:]
	}
	name = strings.Join(strings.Fields(strings.ReplaceAll(stem, "_", " ")), " ")
	if name == "" {
		return id
	}
	return name
}

// viewIDOf reads the dataset id of a rows.json or Views document.
func viewIDOf(f *dataFile) string {
	path := f.path
	if f.view != "" {
		path = f.view
	}
	fh, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	// Read the top-level keys only up to the id: a rows.json's "meta" comes
	// before its (large) "data", so the rows are not read at start-up.
	dec := json.NewDecoder(bufio.NewReader(fh))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		switch key, _ := t.(string); key {
		case "id":
			var id string
			if dec.Decode(&id) == nil && isDatasetID(id) {
				return id
			}
		case "meta":
			var meta struct {
				View struct {
					ID string `json:"id"`
				} `json:"view"`
			}
			if dec.Decode(&meta) == nil && isDatasetID(meta.View.ID) {
				return meta.View.ID
			}
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return ""
			}
		}
	}
	return ""
}

var (
	nonAlnum      = regexp.MustCompile(`[^a-z0-9]+`)
	downloadNoise = regexp.MustCompile(`(_\d{8}(_\d+)?|_?\(\d+\)|_\d+)$`)
)

// nameKey canonicalises a dataset title or a download file name:
// "Police Department Incident Reports: 2018 to Present" and
// "Police_Department_Incident_Reports__2018_to_Present" give the same key.
func nameKey(s string) string {
	return strings.Trim(nonAlnum.ReplaceAllString(strings.ToLower(s), "_"), "_")
}

// idByName finds the dataset whose title is the file's stem, as the
// portal's download names it; a date or copy suffix ("_20240115", " (1)")
// is ignored. Ambiguous names match nothing. how says whose title it is:
// "catalog name", "sample dataset name" (a built-in dataset) or "dataset
// name" (one loaded before).
func (s *Emulator) idByName(stem string) (id, how string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	byKey := map[string][]string{}
	add := func(id, name string) {
		if k := nameKey(name); k != "" && !containsString(byKey[k], id) {
			byKey[k] = append(byKey[k], id)
		}
	}
	for id, e := range s.catalog {
		add(id, e.schema.Name)
	}
	for id, p := range s.pending {
		add(id, p.schema.Name)
	}
	for id, ds := range s.datasets {
		add(id, ds.schema.Name)
	}
	for _, k := range []string{nameKey(stem), nameKey(downloadNoise.ReplaceAllString(strings.TrimSpace(stem), ""))} {
		if ids := byKey[k]; len(ids) == 1 {
			id := ids[0]
			switch p := s.pending[id]; {
			case s.catalog[id] != nil:
				return id, "catalog name"
			case p != nil && p.exact:
				return id, "sample dataset name"
			default:
				return id, "dataset name"
			}
		}
	}
	return "", ""
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// idAlphabet has the characters of a derived id, those of Socrata's 4x4s
// and row ids.
const idAlphabet = "23456789abcdefghijkmnpqrstuvwxyz"

// derivedID is a stable 4x4 id for a file that names no dataset.
func derivedID(stem string) string {
	h := fnv.New64a()
	h.Write([]byte(strings.ToLower(stem)))
	u := h.Sum64()
	var b [9]byte
	for i := 8; i >= 0; i-- {
		if i == 4 {
			b[i] = '-'
			continue
		}
		b[i] = idAlphabet[u%32]
		u /= 32
	}
	return string(b[:])
}

// rowSource is a file's rows: the keys found (in order) and a way to read
// the rows, possibly more than once.
type rowSource struct {
	schema Schema   // from the file itself (view document), may be empty
	geo    bool     // rows carry a GeoJSON geometry under geometryKey
	keys   []string // field names (or CSV headers mapped to them) in file order
	labels map[string]string
	rows   func() (next func() (map[string]any, bool, error), closeFn func(), err error)
}

// loadFile loads one planned file and reports on it.
func (s *Emulator) loadFile(ctx context.Context, f *dataFile, opts LoadOptions) FileReport {
	start := time.Now()
	rep := FileReport{Path: f.path, Format: f.format, ID: f.id, MatchedBy: f.matched}
	var err error
	cache := "none"
	if s.cache != nil && f.format != "view.json" {
		cache, err = s.loadFileCached(ctx, f, opts, &rep)
	} else {
		err = s.loadInto(ctx, f, opts, &rep)
	}
	rep.Took = time.Since(start)
	if err != nil {
		rep.Err = fmt.Errorf("localportal: data %s (dataset %s): %w", f.path, f.id, err)
		s.log.Error("localportal: data file not loaded", "file", f.path, "dataset", f.id, "err", err)
		return rep
	}
	types := make([]string, 0, len(rep.Columns))
	for _, c := range rep.Columns {
		types = append(types, c.FieldName+":"+c.DataType)
	}
	s.log.Info("localportal: data file loaded", "file", f.path, "format", f.format, "dataset", f.id, "name", rep.Name,
		"matched_by", f.matched, "rows", rep.Rows, "bad_values", rep.BadValues, "columns", strings.Join(types, " "),
		"cache", cache, "took", rep.Took.Round(time.Millisecond))
	if len(rep.Inferred) > 0 {
		s.log.Info("localportal: column types inferred from the values (no catalog entry names them)", "file", f.path,
			"dataset", f.id, "columns", strings.Join(rep.Inferred, " "))
	}
	return rep
}

func (s *Emulator) loadInto(ctx context.Context, f *dataFile, opts LoadOptions, rep *FileReport) error {
	var src *rowSource
	var err error
	switch f.format {
	case "csv":
		src, err = csvSource(f.path)
	case "json":
		src, err = resourceJSONSource(f.path)
	case "geojson":
		src, err = geoJSONSource(f.path)
	case "rows.json":
		src, err = rowsJSONSource(f.path, f.view)
	case "view.json":
		return s.loadViewOnly(f, rep)
	default:
		err = fmt.Errorf("unknown format %q", f.format)
	}
	if err != nil {
		return err
	}
	schema := src.schema
	schema.ID = f.id
	if schema = s.completeSchema(schema); schema.Name == "" {
		schema.Name = f.name
	}
	return s.installSource(ctx, schema, src, opts, rep)
}

// loadViewOnly registers a Views document without rows as a catalog entry.
func (s *Emulator) loadViewOnly(f *dataFile, rep *FileReport) error {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return err
	}
	var v viewDoc
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("want a Views document: %w", err)
	}
	sc := v.schema()
	sc.ID = f.id
	s.addCatalogEntries([]*catalogEntry{{schema: sc}})
	rep.Name, rep.Columns = sc.Name, sc.Columns
	return nil
}

// installSource maps the source's keys onto the schema (completed from the
// catalog), infers the types of the columns the schema lacks, and installs
// the rows, collecting bad values in rep.
func (s *Emulator) installSource(ctx context.Context, schema Schema, src *rowSource, opts LoadOptions, rep *FileReport) error {
	schema = s.completeSchema(schema)
	fields := sourceFields(src, schema.Columns)
	extraCols, err := inferColumns(src, fields, extraFields(src.keys, fields, schema.Columns))
	if err != nil {
		return err
	}
	for _, c := range extraCols {
		rep.Inferred = append(rep.Inferred, c.FieldName+":"+c.DataType)
	}
	next, closeFn, err := src.rows()
	if err != nil {
		return err
	}
	defer closeFn()
	n, ds, err := s.install(ctx, schema, extraCols, func() (map[string]any, bool, error) {
		r, ok, err := next()
		if !ok || err != nil {
			return nil, ok, err
		}
		return fields.rename(r), true, nil
	}, s.badValues(schema.ID, opts.Strict, rep), opts.into)
	if err != nil {
		return err
	}
	if rep.BadValues > maxProblems {
		s.log.Warn("localportal: more values stored as null", "file", rep.Path, "dataset", schema.ID, "total", rep.BadValues)
	}
	rep.Rows, rep.Name, rep.Columns = n, ds.schema.Name, ds.schema.Columns
	if b := opts.into; b != nil {
		b.meta.Inferred, b.meta.BadValues, b.meta.Problems = rep.Inferred, rep.BadValues, rep.Problems
	}
	return nil
}

// fieldMap maps a file's keys to the dataset's field names.
type fieldMap map[string]string

// rename returns r with its keys mapped to field names (a key the map
// lacks stays as it is).
func (f fieldMap) rename(r map[string]any) map[string]any {
	out := make(map[string]any, len(r))
	for k, v := range r {
		if fd, ok := f[k]; ok {
			out[fd] = v
		} else {
			out[k] = v
		}
	}
	return out
}

// sourceFields maps the source's keys onto columns (mapFields); a GeoJSON
// source's geometry is the dataset's geometry column, unless a property
// already holds that column.
func sourceFields(src *rowSource, columns []socrata.Column) fieldMap {
	fields := fieldMap(mapFields(src.keys, src.labels, columns))
	if !src.geo {
		return fields
	}
	if g := geometryColumn(columns); g != "" {
		taken := false
		for k, fd := range fields {
			taken = taken || (fd == g && k != geometryKey)
		}
		if !taken {
			fields[geometryKey] = g
		}
	}
	return fields
}

// extraFields lists the field names the keys map to that are neither a
// column nor a system field, in key order.
func extraFields(keys []string, fields fieldMap, columns []socrata.Column) []string {
	known := map[string]bool{}
	for _, c := range columns {
		known[fieldKey(c.FieldName)] = true
	}
	var extra []string
	for _, k := range keys {
		if fd := fields[k]; !known[fieldKey(fd)] && !isSystemField(fd) && !containsString(extra, fd) {
			extra = append(extra, fd)
		}
	}
	return extra
}

// inferColumns reads the source once to infer the type of each extra
// field, and returns their columns, named by the source's labels.
func inferColumns(src *rowSource, fields fieldMap, extra []string) ([]socrata.Column, error) {
	if len(extra) == 0 {
		return nil, nil
	}
	inf := map[string]*inferrer{}
	for _, fd := range extra {
		inf[fd] = newInferrer()
	}
	next, closeFn, err := src.rows()
	if err != nil {
		return nil, err
	}
	defer closeFn()
	for {
		r, ok, err := next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		for k, v := range fields.rename(r) {
			if in := inf[k]; in != nil {
				in.add(v)
			}
		}
	}
	labelOf := map[string]string{}
	for k, fd := range fields {
		if l := src.labels[k]; l != "" {
			labelOf[fd] = l
		}
	}
	cols := make([]socrata.Column, 0, len(extra))
	for _, fd := range extra {
		cols = append(cols, socrata.Column{Name: cmp.Or(labelOf[fd], fd), FieldName: fd, DataType: inf[fd].dataType()})
	}
	return cols, nil
}

// badValues is the policy for a value not of its column's type: with
// strict loading it stops the load; otherwise it is stored as null,
// counted in rep and (the first maxProblems) reported and logged.
func (s *Emulator) badValues(dataset string, strict bool, rep *FileReport) badValue {
	return func(row int64, col *column, v any, err error) error {
		p := ValueProblem{Row: row, Column: col.FieldName, Value: valueText(v), Reason: err.Error()}
		if strict {
			return fmt.Errorf("%s (strict loading)", p)
		}
		rep.BadValues++
		if len(rep.Problems) < maxProblems {
			rep.Problems = append(rep.Problems, p)
			s.log.Warn("localportal: value stored as null: it is not of its column's type", "file", rep.Path,
				"dataset", dataset, "row", row, "column", col.FieldName, "type", col.DataType, "value", p.Value)
		}
		return nil
	}
}

func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}

// mapFields maps the keys of a file (CSV headers, JSON keys) to the
// schema's field names: an exact display name first ("Location" is
// case_location when the catalog says so), then a display name in any case,
// then the field name (any case, '-' = '_'), then the field name the header
// would get. A key that matches no column keeps a field name of its own.
func mapFields(keys []string, labels map[string]string, cols []socrata.Column) map[string]string {
	out := map[string]string{}
	used := map[string]bool{}
	try := func(k string, match func(c socrata.Column) bool) bool {
		for _, c := range cols {
			if !used[c.FieldName] && match(c) {
				out[k], used[c.FieldName] = c.FieldName, true
				return true
			}
		}
		return false
	}
	nameOf := func(k string) string {
		if l := labels[k]; l != "" {
			return l
		}
		return k
	}
	passes := []func(k string) func(c socrata.Column) bool{
		func(k string) func(c socrata.Column) bool {
			return func(c socrata.Column) bool { return c.FieldName == k }
		},
		func(k string) func(c socrata.Column) bool {
			return func(c socrata.Column) bool { return labels[k] != "" && strings.TrimSpace(c.Name) == labels[k] }
		},
		func(k string) func(c socrata.Column) bool {
			return func(c socrata.Column) bool {
				return labels[k] != "" && strings.EqualFold(strings.TrimSpace(c.Name), labels[k])
			}
		},
		func(k string) func(c socrata.Column) bool {
			return func(c socrata.Column) bool { return fieldKey(c.FieldName) == fieldKey(nameOf(k)) }
		},
		func(k string) func(c socrata.Column) bool {
			return func(c socrata.Column) bool { return c.FieldName == fieldNameFor(nameOf(k)) }
		},
	}
	for _, pass := range passes {
		for _, k := range keys {
			if _, done := out[k]; !done {
				try(k, pass(k))
			}
		}
	}
	for _, k := range keys {
		if _, done := out[k]; done {
			continue
		}
		fd := k
		if labels[k] != "" {
			fd = fieldNameFor(labels[k])
		}
		if fd == "" {
			fd = "column"
		}
		base := fd
		for i := 2; used[fd]; i++ {
			fd = fmt.Sprintf("%s_%d", base, i)
		}
		out[k], used[fd] = fd, true
	}
	return out
}

// csvSource reads a CSV export. Its keys are "#0", "#1", ... labelled with
// the headers; empty cells are nulls.
func csvSource(path string) (*rowSource, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bufio.NewReader(fh))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	header, err := r.Read()
	fh.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the header line: %w", err)
	}
	src := &rowSource{labels: map[string]string{}}
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		k := fmt.Sprintf("#%d", i)
		src.keys = append(src.keys, k)
		h = strings.TrimSpace(h)
		if h == "" {
			h = fmt.Sprintf("column_%d", i+1)
		}
		src.labels[k] = h
	}
	src.rows = func() (func() (map[string]any, bool, error), func(), error) {
		fh, err := os.Open(path)
		if err != nil {
			return nil, nil, err
		}
		r := csv.NewReader(bufio.NewReaderSize(fh, 1<<16))
		r.FieldsPerRecord = -1
		r.LazyQuotes = true
		r.ReuseRecord = true
		if _, err := r.Read(); err != nil {
			fh.Close()
			return nil, nil, err
		}
		row := int64(0)
		next := func() (map[string]any, bool, error) {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				return nil, false, nil
			}
			row++
			if err != nil {
				return nil, false, fmt.Errorf("row %d: %w", row, err)
			}
			m := make(map[string]any, len(rec))
			for i, v := range rec {
				if i < len(src.keys) && v != "" {
					m[src.keys[i]] = strings.Clone(v)
				}
			}
			if len(rec) > len(src.keys) {
				return nil, false, fmt.Errorf("row %d has %d cells, the header %d", row, len(rec), len(src.keys))
			}
			return m, true, nil
		}
		return next, func() { fh.Close() }, nil
	}
	return src, nil
}

// sliceRows reads rows held in memory.
func sliceRows(rows []map[string]any) func() (func() (map[string]any, bool, error), func(), error) {
	return func() (func() (map[string]any, bool, error), func(), error) {
		i := 0
		return func() (map[string]any, bool, error) {
			if i >= len(rows) {
				return nil, false, nil
			}
			i++
			return rows[i-1], true, nil
		}, func() {}, nil
	}
}

// keysOf lists the keys of rows in order of first appearance, sorted
// within each row for determinism.
func keysOf(rows []map[string]any) []string {
	seen := map[string]bool{}
	var keys []string
	for _, r := range rows {
		var ks []string
		for k := range r {
			if !seen[k] {
				seen[k] = true
				ks = append(ks, k)
			}
		}
		sort.Strings(ks)
		keys = append(keys, ks...)
	}
	return keys
}

// resourceJSONSource reads a JSON array of rows (/resource/{id}.json).
func resourceJSONSource(path string) (*rowSource, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []map[string]any
	if err := json.Unmarshal(b, &rows); err != nil {
		return nil, fmt.Errorf("want a JSON array of row objects: %w", err)
	}
	return &rowSource{keys: keysOf(rows), rows: sliceRows(rows)}, nil
}

// geoJSONSource reads a GeoJSON FeatureCollection as the portal exports it
// (/resource/{id}.geojson): properties are the row, the geometry is the
// value of the dataset's geometry column (the catalog's first point,
// location or shape column; else a column named "geometry").
func geoJSONSource(path string) (*rowSource, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var fc struct {
		Type     string `json:"type"`
		Features []struct {
			Geometry   map[string]any `json:"geometry"`
			Properties map[string]any `json:"properties"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		return nil, fmt.Errorf("want a GeoJSON FeatureCollection: %w", err)
	}
	rows := make([]map[string]any, len(fc.Features))
	for i, f := range fc.Features {
		r := make(map[string]any, len(f.Properties)+1)
		for k, v := range f.Properties {
			if v != nil {
				r[k] = v
			}
		}
		if f.Geometry != nil {
			r[geometryKey] = f.Geometry
		}
		rows[i] = r
	}
	return &rowSource{keys: keysOf(rows), rows: sliceRows(rows), geo: true}, nil
}

// geometryKey carries a GeoJSON feature's geometry until mapFields gives it
// the dataset's geometry column.
const geometryKey = "geometry"

// rowsJSONSource reads a legacy rows.json export and, when viewPath is not
// empty, its Views document for the metadata.
func rowsJSONSource(rowsPath, viewPath string) (*rowSource, error) {
	b, err := os.ReadFile(rowsPath)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Meta struct {
			View viewDoc `json:"view"`
		} `json:"meta"`
		Data [][]any `json:"data"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("want {\"meta\":{\"view\":…},\"data\":[[…]]}: %w", err)
	}
	meta := doc.Meta.View
	view := meta
	if viewPath != "" {
		vb, err := os.ReadFile(viewPath)
		if err != nil {
			return nil, err
		}
		view = viewDoc{}
		if err := json.Unmarshal(vb, &view); err != nil {
			return nil, fmt.Errorf("view %s: %w", viewPath, err)
		}
	}
	schema := view.schema()
	// The data arrays follow meta.view's columns; keep the view document's
	// descriptions where they have them.
	desc := map[string]socrata.Column{}
	for _, c := range schema.Columns {
		desc[fieldKey(c.FieldName)] = c
	}
	var cols []socrata.Column
	for _, c := range meta.Columns {
		col := socrata.Column{Name: c.Name, FieldName: c.FieldName, DataType: c.DataTypeName, Description: c.Description}
		if d, ok := desc[fieldKey(c.FieldName)]; ok && col.Description == "" {
			col.Description = d.Description
		}
		cols = append(cols, col)
	}
	if len(cols) == 0 {
		return nil, errors.New("meta.view has no columns")
	}
	schema.Columns = cols
	src := &rowSource{schema: schema}
	for _, c := range cols {
		if !isSystemField(c.FieldName) && !strings.EqualFold(c.DataType, "meta_data") {
			src.keys = append(src.keys, c.FieldName)
		}
	}
	src.rows = func() (func() (map[string]any, bool, error), func(), error) {
		i := 0
		return func() (map[string]any, bool, error) {
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
		}, func() {}, nil
	}
	return src, nil
}

// geometryColumn is the field a GeoJSON geometry goes to.
func geometryColumn(cols []socrata.Column) string {
	for _, c := range cols {
		switch soqlsqlite.KindOf(c.DataType) {
		case soqlsqlite.KindPoint, soqlsqlite.KindLocation:
			return c.FieldName
		}
	}
	for _, c := range cols {
		if soqlsqlite.KindOf(c.DataType) == soqlsqlite.KindJSON && !strings.EqualFold(c.DataType, "url") {
			return c.FieldName
		}
	}
	return ""
}
