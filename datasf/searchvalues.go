package datasf

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Column values in search. A search finds a dataset by the values its
// columns hold as well as by its words: "Larceny Theft" finds the police
// incident reports, whose incident_category holds it. The values are the
// Views API's cachedContents.top (the portal's most frequent values of a
// column), gathered for a portal's catalog in the background after its
// first search:
//
//   - bounded: the valueDatasets most viewed datasets, their first
//     valueColumns text columns with cached values, valuesPerColumn values
//     each, valueLen characters at most;
//   - polite: valueRequests Views requests at a time, through the portal
//     client and so within the portal's limits (Config.Upstream), and the
//     whole gathering bounded by valueGatherTimeout;
//   - kept on disk (Config.SearchValuesDir, a file per portal, mode 0600 in
//     a 0700 directory) and gathered again when older than valuesTTL, so a
//     restart does not ask the portal again the same day;
//   - offline, from the snapshot: the local portal's Views API has values
//     for the datasets it holds rows of, and none for a catalog entry
//     without data; nothing is written to disk.
//
// When the values are in, the portal's index is built again with them and
// replaces the one without.
const (
	valueDatasets      = 1000
	valueColumns       = 12
	valuesPerColumn    = 10
	valueLen           = 64
	valueRequests      = 2
	valuesTTL          = 24 * time.Hour
	valueGatherTimeout = 30 * time.Minute
)

// catalogValues are a portal's gathered values: by dataset id, by field
// name, the most frequent first.
type catalogValues map[string]map[string][]string

// valuesFile is the disk form of a portal's values.
type valuesFile struct {
	Domain   string        `json:"domain"`
	Gathered time.Time     `json:"gathered"`
	Values   catalogValues `json:"values"`
}

// searchValues gathers and keeps column values for search.
type searchValues struct {
	dir string // "" keeps them in memory only
	now func() time.Time

	mu       sync.Mutex
	inFlight map[string]bool       // domains being gathered
	kept     map[string]valuesFile // the last values gathered, by domain
}

// valuesPath is the file of domain's values.
func (v *searchValues) valuesPath(domain string) string {
	return filepath.Join(v.dir, "search-values-"+strings.ReplaceAll(strings.ToLower(domain), "/", "_")+".json")
}

// cached returns the values kept on disk for domain when they are younger
// than valuesTTL.
func (v *searchValues) cached(domain string) (catalogValues, bool) {
	v.mu.Lock()
	f, ok := v.kept[domain]
	v.mu.Unlock()
	if ok && v.now().Sub(f.Gathered) < valuesTTL {
		return f.Values, true
	}
	if v.dir == "" {
		return nil, false
	}
	b, err := os.ReadFile(v.valuesPath(domain))
	if err != nil {
		return nil, false
	}
	f = valuesFile{}
	if json.Unmarshal(b, &f) != nil || !strings.EqualFold(f.Domain, domain) || v.now().Sub(f.Gathered) >= valuesTTL {
		return nil, false
	}
	return f.Values, true
}

// save keeps domain's values in memory and writes them to disk: aside,
// then renamed into place.
func (v *searchValues) save(domain string, vals catalogValues) error {
	f := valuesFile{Domain: domain, Gathered: v.now().UTC(), Values: vals}
	v.mu.Lock()
	if v.kept == nil {
		v.kept = map[string]valuesFile{}
	}
	v.kept[domain] = f
	for len(v.kept) > maxCatalogPortals { // as many as the indexes kept
		oldest := ""
		for d, k := range v.kept {
			if oldest == "" || k.Gathered.Before(v.kept[oldest].Gathered) {
				oldest = d
			}
		}
		delete(v.kept, oldest)
	}
	v.mu.Unlock()
	if v.dir == "" {
		return nil
	}
	if err := os.MkdirAll(v.dir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(v.dir, "search-values-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), v.valuesPath(domain))
}

// start marks domain as being gathered; false when it already is.
func (v *searchValues) start(domain string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.inFlight[domain] {
		return false
	}
	if v.inFlight == nil {
		v.inFlight = map[string]bool{}
	}
	v.inFlight[domain] = true
	return true
}

func (v *searchValues) done(domain string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.inFlight, domain)
}

// gather reads the values of the most viewed datasets of ds from the
// portal's Views API. A dataset whose document cannot be read is passed
// over; a context that ends stops the gathering with what it has.
func gather(ctx context.Context, client *socrata.Client, ds []socrata.CatalogDataset) (catalogValues, error) {
	order := make([]int, len(ds))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ds[b].PageViews, ds[a].PageViews) })
	order = order[:min(len(order), valueDatasets)]
	out := catalogValues{}
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	failed := 0
	for range valueRequests {
		wg.Go(func() {
			for id := range work {
				cols, err := client.Columns(ctx, id)
				mu.Lock()
				if err != nil {
					failed++
				} else if vals := topValues(cols); len(vals) > 0 {
					out[id] = vals
				}
				mu.Unlock()
			}
		})
	}
feed:
	for _, i := range order {
		select {
		case work <- ds[i].ID:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return out, err
	}
	if failed == len(order) && failed > 0 {
		return out, fmt.Errorf("no dataset's Views document could be read (%d tried)", failed)
	}
	return out, nil
}

// topValues are the cached most frequent values of cols' text columns,
// bounded as the package doc says.
func topValues(cols []socrata.Column) map[string][]string {
	out := map[string][]string{}
	for _, c := range cols {
		if len(out) == valueColumns {
			break
		}
		if c.DataType != "text" || c.Stats == nil || len(c.Stats.Top) == 0 {
			continue
		}
		var vals []string
		for _, t := range c.Stats.Top {
			val := strings.TrimSpace(t.Value)
			if val == "" || !utf8.ValidString(val) {
				continue
			}
			if len(val) > valueLen {
				val = clipText(val, valueLen)
			}
			vals = append(vals, val)
			if len(vals) == valuesPerColumn {
				break
			}
		}
		if len(vals) > 0 {
			out[c.FieldName] = vals
		}
	}
	return out
}
