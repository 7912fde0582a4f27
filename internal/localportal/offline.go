package localportal

import (
	"cmp"
	"context"

	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/localportal/sampledata"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// OfflineOptions configures StartOffline. The zero value serves the sample
// datasets alone.
type OfflineOptions struct {
	// Domain is the portal domain (Options.Domain). Default
	// socrata.DefaultDomain (data.sf.gov). A known old name
	// (socrata.KnownMove) is served under its new name, and the old name
	// answers as the old host does (see Emulator.SetMoved).
	Domain string
	// Secret is Options.Secret: when set, the listener answers only
	// requests that carry it (Emulator.Client sends it).
	Secret string
	// Catalog is a catalog JSONL file to load first (see Emulator.LoadCatalog);
	// empty for none.
	Catalog string
	// DataSFCatalog loads the built-in DataSF catalog (sampledata.Catalog:
	// 630 datasets with their tags and use) when Catalog is empty and the
	// portal is DataSF's, so that search and list answer over the real
	// catalog; its datasets without data answer with their columns and no
	// rows.
	DataSFCatalog bool
	// Data lists the data to serve: files and directories of the portal's
	// exports, each "PATH" or "ID=FILE" (see ParseDataSpec and LoadFiles),
	// or "DOMAIN=PATH" / "DOMAIN=ID=FILE" to serve it on another portal
	// domain (see SplitDomainSpec and Emulator.AddDomain; built in memory).
	Data []string
	// DataDir is one more directory of exports (the same as a Data entry).
	DataDir string
	// Strict makes StartOffline load the data before it returns and fail
	// on the first file that does not load or value that is not of its
	// column's type. By default files load in the background, a failed
	// file is reported (logged, and answered as an error by its dataset's
	// queries) without stopping the others, and a bad value is stored as
	// null and reported.
	Strict bool
	// SampleScale multiplies the row counts of the sample datasets
	// (sampledata.Options.Scale); 0 means 1, the product's sizes.
	SampleScale float64
	// CacheDir is the directory where the datasets are built into SQLite
	// files that later starts reuse (see DefaultCacheDir): each sample
	// dataset and data file once, rebuilt when its source changes or the
	// file is damaged. Empty, or a directory that cannot be written: the
	// files go to a temporary directory removed by Close (logged once).
	CacheDir string
	// NoCache builds in a temporary directory even when CacheDir is set.
	NoCache bool
	// Logger receives the portal's logs and the ready line. Default: discard.
	Logger *slog.Logger
}

// StartOffline starts the portal of the product's offline mode and returns
// as soon as it listens: it loads opts.Catalog, registers the sample
// datasets (package sampledata; their rows are generated on first use), and
// the data files, which load in the background (a query waits for its
// dataset's file); a file replaces the sample dataset with its id. Datasets
// are built into SQLite files in opts.CacheDir, which later starts read
// instead of building again. Point a socrata.Client at its URL; Close it
// when done.
func StartOffline(ctx context.Context, opts OfflineOptions) (*Emulator, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if to := socrata.KnownMove(opts.Domain); to != "" {
		opts.Domain = to
	}
	p, err := New(Options{Domain: opts.Domain, Logger: log, Secret: opts.Secret})
	if err != nil {
		return nil, err
	}
	if p.cache, err = newDiskCache(opts.CacheDir, opts.NoCache, log); err != nil {
		p.Close()
		return nil, err
	}
	start := time.Now()
	own, others := opts.Data[:0:0], map[string][]string{}
	for _, spec := range opts.Data {
		if d, rest := SplitDomainSpec(spec); d != "" && d != p.opts.Domain {
			others[d] = append(others[d], rest)
		} else {
			own = append(own, rest)
		}
	}
	opts.Data = own
	files, err := p.planOffline(ctx, opts)
	if err == nil && len(others) > 0 {
		err = p.startOtherDomains(ctx, others, opts.Strict)
	}
	for _, d := range p.Domains() {
		if old := socrata.KnownOldName(d); err == nil && old != "" {
			err = p.SetMoved(old, d) // the offline portal imitates the live one
		}
	}
	if err == nil && opts.Strict {
		err = p.loadStrict(ctx, files)
	}
	if err == nil {
		err = p.Start()
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	if !opts.Strict {
		go p.loadBackground(files)
	}
	p.stop = make(chan struct{})
	go releaseMemory(p.stop)
	log.Info("offline portal ready", "url", p.URL(), "datasets", len(p.Datasets()), "data_files", len(files),
		"took", time.Since(start).Round(time.Millisecond))
	return p, nil
}

// planOffline loads the catalog, registers the sample datasets and plans
// the data files (registering each as pending unless strict).
func (s *Emulator) planOffline(ctx context.Context, opts OfflineOptions) ([]*dataFile, error) {
	switch {
	case opts.Catalog != "":
		if err := s.LoadCatalog(ctx, opts.Catalog); err != nil {
			return nil, fmt.Errorf("catalog %s: %w", opts.Catalog, err)
		}
	case opts.DataSFCatalog && isDataSF(s.opts.Domain):
		if err := s.LoadCatalogFrom(ctx, sampledata.CatalogName, sampledata.Catalog()); err != nil {
			return nil, fmt.Errorf("%s: %w", sampledata.CatalogName, err)
		}
	}
	for _, d := range sampledata.Datasets(sampledata.Options{Scale: opts.SampleScale}) {
		schema := Schema{ID: d.ID, Name: d.Name, Description: d.Description, Category: d.Category,
			UpdatedAt: d.UpdatedAt, Columns: d.Columns}
		s.describeFromCatalog(&schema)
		if err := s.addSampleCached(schema, sampledata.Version, d.Rows, d.Row); err != nil {
			return nil, fmt.Errorf("sample dataset %s: %w", d.ID, err)
		}
	}
	specs := append([]string(nil), opts.Data...)
	if opts.DataDir != "" {
		specs = append(specs, opts.DataDir)
	}
	if len(specs) == 0 {
		return nil, nil
	}
	files, reports, err := s.planFiles(ctx, specs)
	s.addReports(reports...)
	if err != nil {
		if opts.Strict {
			return nil, err
		}
		s.log.Error("localportal: some data could not be read", "err", err)
	}
	if !opts.Strict {
		for _, f := range files {
			s.addPendingFile(f)
		}
	}
	return files, nil
}

// describeFromCatalog gives a built-in sample dataset the catalog's words
// for it when the catalog has an entry of its id: the real name,
// description, category, department and signals (tags, use), and the real description of each
// column of the same field name, instead of the sample's own. The columns
// and rows stay the sample's.
func (s *Emulator) describeFromCatalog(schema *Schema) {
	s.mu.RLock()
	e, ok := s.catalog[schema.ID]
	s.mu.RUnlock()
	if !ok {
		return
	}
	c := e.schema
	schema.Name = cmp.Or(c.Name, schema.Name)
	schema.Description = cmp.Or(c.Description, schema.Description)
	schema.Category = cmp.Or(c.Category, schema.Category)
	schema.Department = cmp.Or(c.Department, schema.Department)
	schema.Signals = c.Signals
	cols := slices.Clone(schema.Columns)
	for i, col := range cols {
		for _, cc := range c.Columns {
			if strings.EqualFold(cc.FieldName, col.FieldName) && cc.Description != "" {
				cols[i].Description = cc.Description
			}
		}
	}
	schema.Columns = cols
}

// addPendingFile registers f's dataset as loading; until it has loaded,
// Discovery shows the catalog entry (or the file's name).
func (s *Emulator) addPendingFile(f *dataFile) {
	placeholder, ok := s.Schema(f.id)
	if !ok || f.matched == "new dataset" {
		placeholder = Schema{ID: f.id, Name: f.name}
	}
	s.mu.RLock()
	_, sample := s.pending[f.id]
	s.mu.RUnlock()
	if sample {
		s.log.Info("localportal: a data file replaces the sample dataset", "file", f.path, "dataset", f.id, "matched_by", f.matched)
	}
	s.addPending(placeholder, -1, func(ctx context.Context) error {
		rep := s.loadFile(ctx, f, LoadOptions{})
		s.addReports(rep)
		return rep.Err
	})
}

// loadBackground loads the data files one after the other (a query for a
// later one starts it earlier).
func (s *Emulator) loadBackground(files []*dataFile) {
	for _, f := range files {
		s.mu.RLock()
		p := s.pending[f.id]
		s.mu.RUnlock()
		if p == nil {
			continue
		}
		s.start(f.id, p)
		<-p.done
	}
}

// loadStrict loads the data files now, failing on the first problem.
func (s *Emulator) loadStrict(ctx context.Context, files []*dataFile) error {
	for _, f := range files {
		rep := s.loadFile(ctx, f, LoadOptions{Strict: true})
		s.addReports(rep)
		if rep.Err != nil {
			return rep.Err
		}
		// The file's dataset replaces the sample dataset of its id.
		s.mu.Lock()
		delete(s.pending, f.id)
		s.mu.Unlock()
	}
	return nil
}

// addReports records file reports for FileReports.
func (s *Emulator) addReports(reports ...FileReport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reports = append(s.reports, reports...)
}

// FileReports returns the reports of the data files loaded so far by
// StartOffline, in the order they finished (Wait first to have them all).
func (s *Emulator) FileReports() []FileReport {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]FileReport(nil), s.reports...)
}

// isDataSF reports whether domain is DataSF's portal, under its name or
// its old one.
func isDataSF(domain string) bool {
	domain = strings.ToLower(domain)
	return domain == socrata.DefaultDomain || socrata.KnownMove(domain) == socrata.DefaultDomain
}
