package datasf

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/datasf-mcp/datasf-mcp/internal/rank"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Search ranking: search_datasf ranks a portal's datasets itself (package
// rank) over that portal's whole catalog, fetched from the Discovery API
// (socrata.Client.AllDatasets) and kept here per portal: catalogTTL fresh,
// then served as it is while a background refresh fetches it again. At
// most maxCatalogPortals portals are kept (the least recently used goes),
// each of at most maxCatalogDatasets datasets: the index of 10,000
// datasets larger than DataSF's average (630) takes about 100 MiB
// (internal/rank's TestIndexMemory10000), so the bound is about 500 MiB
// at worst and a few MiB for DataSF. A larger portal is not kept: its
// search, like a search when the catalog cannot be read, reranks the
// Discovery API's candidates.
const (
	catalogTTL          = time.Hour
	maxCatalogPortals   = 4
	maxCatalogDatasets  = 10000
	catalogFetchTimeout = 2 * time.Minute
)

// catalogIndex is one portal's ranked catalog.
type catalogIndex struct {
	ix      *rank.Index
	ds      []socrata.CatalogDataset
	built   time.Time
	used    time.Time
	refresh bool // a background refresh is running
	// tooLarge: the portal has more than maxDatasets datasets; it is
	// remembered for the TTL so that searches do not read it again.
	tooLarge bool
}

// catalogIndexes keeps the portals' catalog indexes.
type catalogIndexes struct {
	now func() time.Time // the clock (time.Now)
	ttl time.Duration
	max int // portals kept
	// maxDatasets is the largest catalog kept (maxCatalogDatasets).
	maxDatasets int
	log         *slog.Logger
	fetch       singleflight.Group
	// values gathers the catalogs' column values (searchvalues.go); nil:
	// search ranks without them.
	values *searchValues
	// rowless, offline, reports the datasets of a domain the portal holds
	// no rows of (catalog entries only), whose Views documents have no
	// values: the gathering passes them over (nil: none).
	rowless func(domain, id string) bool
	// stop ends the background work (refreshes, gatherings) when the
	// server closes.
	stop   context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	byDomain map[string]*catalogIndex
	bg       sync.WaitGroup // background refreshes; close waits for them
}

func newCatalogIndexes(log *slog.Logger) *catalogIndexes {
	stop, cancel := context.WithCancel(context.Background())
	return &catalogIndexes{now: time.Now, ttl: catalogTTL, max: maxCatalogPortals, maxDatasets: maxCatalogDatasets,
		log: log, byDomain: map[string]*catalogIndex{}, stop: stop, cancel: cancel}
}

// close ends the background work and waits for it.
func (c *catalogIndexes) close() {
	c.cancel()
	c.bg.Wait()
}

// rankedHit is one dataset a search found, with why it matched.
type rankedHit struct {
	socrata.Dataset
	Fields  []string          // the fields a query word matched
	Columns []string          // field names of the columns that matched
	Tags    []string          // the tags that matched
	Values  []rank.ValueMatch // column values that matched
	// FieldNames are the dataset's first field names.
	FieldNames []string
	PageViews  int64 // how often its page was viewed; 0 when unknown
	Score      float64
}

// rankedHits are a search's hits, best first, and how many datasets
// matched in all.
type rankedHits struct {
	hits    []rankedHit
	matched int
	// strong is how many datasets score at least half the first's.
	strong int
}

// search ranks the catalog of the portal client serves for query. It
// fetches the catalog on first use (the caller waits), and starts a
// background refresh when it is older than the TTL.
func (c *catalogIndexes) search(ctx context.Context, client *socrata.Client, domain, query string, limit int) (rankedHits, error) {
	e, err := c.index(ctx, client, domain)
	if err != nil {
		return rankedHits{}, err
	}
	c.mu.Lock()
	ix, ds := e.ix, e.ds // a gathering of values may swap them
	c.mu.Unlock()
	return hitsOf(ix, ds, query, limit), nil
}

func hitsOf(ix *rank.Index, ds []socrata.CatalogDataset, query string, limit int) rankedHits {
	found := ix.Search(query, 0)
	out := rankedHits{matched: len(found)}
	for _, f := range found {
		if f.Score >= found[0].Score/2 {
			out.strong++
		}
	}
	for _, f := range found[:min(len(found), limit)] {
		d := ds[f.Index]
		out.hits = append(out.hits, rankedHit{Dataset: d.Dataset, Fields: f.Fields, Columns: f.Columns, Tags: f.Tags, Values: f.Values,
			FieldNames: d.Columns, PageViews: d.PageViews, Score: f.Score})
	}
	return out
}

// rerank orders datasets the Discovery API found on several portals with
// the same ranker, over those candidates alone.
func rerank(ds []socrata.Dataset, query string, limit int) rankedHits {
	cds := make([]socrata.CatalogDataset, len(ds))
	for i, d := range ds {
		cds[i] = socrata.CatalogDataset{Dataset: d}
	}
	ix := rank.New(rankDocs(cds, nil))
	hits := hitsOf(ix, cds, query, limit)
	// Discovery's candidates that no query word matches (it matched them by
	// something we do not see) keep their place after ours.
	for _, d := range ds {
		if len(hits.hits) >= limit {
			break
		}
		if !slices.ContainsFunc(hits.hits, func(h rankedHit) bool { return h.ID == d.ID && h.Domain == d.Domain }) {
			hits.hits = append(hits.hits, rankedHit{Dataset: d, FieldNames: d.Columns})
			hits.matched++
		}
	}
	return hits
}

func (c *catalogIndexes) index(ctx context.Context, client *socrata.Client, domain string) (*catalogIndex, error) {
	key := strings.ToLower(domain)
	c.mu.Lock()
	e := c.byDomain[key]
	if e != nil && e.tooLarge {
		if c.now().Sub(e.built) < c.ttl {
			c.mu.Unlock()
			return nil, errCatalogTooLarge
		}
		delete(c.byDomain, key) // read it again
		e = nil
	}
	if e != nil {
		e.used = c.now()
		if c.now().Sub(e.built) >= c.ttl && !e.refresh {
			e.refresh = true
			c.bg.Add(1)
			go c.refresh(client, key)
		}
		c.mu.Unlock()
		return e, nil
	}
	c.mu.Unlock()
	v, err, _ := c.fetch.Do(key, func() (any, error) {
		// The fetch outlives the request that started it: others wait for
		// it too.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), catalogFetchTimeout)
		defer cancel()
		return c.build(fctx, client, key)
	})
	if err != nil {
		return nil, err
	}
	return v.(*catalogIndex), nil
}

func (c *catalogIndexes) refresh(client *socrata.Client, key string) {
	defer c.bg.Done()
	ctx, cancel := context.WithTimeout(c.stop, catalogFetchTimeout)
	defer cancel()
	if _, err := c.build(ctx, client, key); err != nil {
		c.log.Warn("search: refreshing the catalog failed; the older one is kept", "domain", key, "error", err)
		c.mu.Lock()
		if e := c.byDomain[key]; e != nil {
			e.refresh = false
			e.built = c.now() // try again after another TTL, not at every search
		}
		c.mu.Unlock()
	}
}

// build fetches the portal's catalog, indexes it and keeps it.
func (c *catalogIndexes) build(ctx context.Context, client *socrata.Client, key string) (*catalogIndex, error) {
	var ds []socrata.CatalogDataset
	tooLarge := false
	for d, err := range client.AllDatasets(ctx, socrata.AllDatasetsOptions{Max: c.maxDatasets + 1, FailPastMax: true}) {
		if errors.Is(err, socrata.ErrTooManyDatasets) {
			tooLarge = true // said by the first page: nothing more is read
			break
		}
		if err != nil {
			return nil, err
		}
		if len(ds) == c.maxDatasets { // a portal that does not say its size
			tooLarge = true
			break
		}
		ds = append(ds, d)
	}
	e := &catalogIndex{built: c.now(), used: c.now(), tooLarge: tooLarge}
	gatherValues := false
	if !tooLarge {
		var vals catalogValues
		if c.values != nil {
			var fresh bool
			vals, fresh = c.values.cached(key)
			gatherValues = !fresh && c.values.start(key)
		}
		e.ix, e.ds = rank.New(rankDocs(ds, vals)), ds
	}
	if gatherValues {
		c.bg.Add(1)
		go c.gatherValues(client, key, ds)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byDomain[key] = e
	for len(c.byDomain) > c.max {
		oldest := ""
		for k, v := range c.byDomain {
			if oldest == "" || v.used.Before(c.byDomain[oldest].used) {
				oldest = k
			}
		}
		delete(c.byDomain, oldest)
	}
	if tooLarge {
		return nil, errCatalogTooLarge
	}
	c.log.Debug("search: catalog indexed", "domain", key, "datasets", len(ds))
	return e, nil
}

// gatherValues gathers the column values of a portal's catalog ds, keeps
// them, and replaces the portal's index with one that has them.
func (c *catalogIndexes) gatherValues(client *socrata.Client, key string, ds []socrata.CatalogDataset) {
	defer c.bg.Done()
	defer c.values.done(key)
	ctx, cancel := context.WithTimeout(c.stop, valueGatherTimeout)
	defer cancel()
	start := c.now()
	withRows := ds
	if c.rowless != nil {
		withRows = slices.DeleteFunc(slices.Clone(ds), func(d socrata.CatalogDataset) bool { return c.rowless(key, d.ID) })
	}
	vals, err := gather(ctx, client, withRows)
	if c.stop.Err() != nil {
		return // the server closed
	}
	if err != nil && len(vals) == 0 {
		c.log.Warn("search: the column values of the catalog could not be gathered; search ranks without them", "domain", key, "error", err)
		return
	}
	if err := c.values.save(key, vals); err != nil {
		c.log.Warn("search: the column values could not be kept on disk", "domain", key, "error", err)
	}
	ix := rank.New(rankDocs(ds, vals))
	c.mu.Lock()
	if e := c.byDomain[key]; e != nil && len(e.ds) == len(ds) && (len(ds) == 0 || &e.ds[0] == &ds[0]) {
		e.ix = ix
	}
	c.mu.Unlock()
	c.log.Info("search: column values gathered", "domain", key, "datasets", len(vals), "took", c.now().Sub(start).Round(time.Millisecond))
}

// errCatalogTooLarge says a portal's catalog is larger than is kept.
var errCatalogTooLarge = fmt.Errorf("the portal has more than %d datasets: too many to keep", maxCatalogDatasets)

// rankDocs are the datasets of a catalog as the ranker reads them, with
// the column values gathered for them (nil: none).
func rankDocs(ds []socrata.CatalogDataset, vals catalogValues) []rank.Doc {
	docs := make([]rank.Doc, len(ds))
	for i, d := range ds {
		doc := rank.Doc{ID: d.ID, Name: d.Name, Description: d.Description, Category: d.Category,
			Department: d.Attribution, Tags: d.Tags, UpdatedAt: d.UpdatedAt, PageViews: d.PageViews, Downloads: d.Downloads}
		for j, f := range d.Columns {
			col := rank.Column{FieldName: f}
			if j < len(d.ColumnNames) {
				col.Name = d.ColumnNames[j]
			}
			if j < len(d.ColumnDescriptions) {
				col.Description = d.ColumnDescriptions[j]
			}
			col.Values = vals[d.ID][f]
			doc.Columns = append(doc.Columns, col)
		}
		docs[i] = doc
	}
	return docs
}
