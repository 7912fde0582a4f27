package localportal

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
)

// logBuffer collects a portal's logs for tests that check them.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// startCached starts an offline portal on the cache in dir (scaled-down
// sample data) and returns it with its logs.
func startCached(t *testing.T, opts OfflineOptions) (*Emulator, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	opts.Logger = logs.logger()
	if opts.SampleScale == 0 {
		opts.SampleScale = 0.01
	}
	p, err := StartOffline(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if err := p.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	return p, logs
}

func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestCacheReusedOnTheNextStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const q = "SELECT incident_category, count(*) AS n GROUP BY incident_category ORDER BY n DESC, incident_category"
	p1, _ := startCached(t, OfflineOptions{CacheDir: dir})
	first := query(t, p1, "wg3w-h783", q)
	if built, reused := p1.CacheStats(); built != 1 || reused != 0 {
		t.Errorf("first start: CacheStats() = %d built, %d reused; want 1, 0", built, reused)
	}
	p1.Close()
	p2, logs := startCached(t, OfflineOptions{CacheDir: dir})
	second := query(t, p2, "wg3w-h783", q)
	if built, reused := p2.CacheStats(); built != 0 || reused != 1 {
		t.Errorf("second start: CacheStats() = %d built, %d reused; want 0, 1\nlogs:\n%s", built, reused, logs)
	}
	if len(first) == 0 || len(first) != len(second) {
		t.Fatalf("the cached dataset answers %d groups; the built one %d", len(second), len(first))
	}
	for i := range first {
		if first[i]["n"] != second[i]["n"] || first[i]["incident_category"] != second[i]["incident_category"] {
			t.Errorf("group %d: built %v, cached %v", i, first[i], second[i])
		}
	}
	for _, name := range cacheFiles(t, dir) {
		if strings.Contains(name, ".tmp-") {
			t.Errorf("a temporary file is left in the cache: %s", name)
		}
	}
}

func TestCacheRebuiltWhenTheFileChanges(t *testing.T) {
	t.Parallel()
	dir, cache := t.TempDir(), t.TempDir()
	header := []string{"Name", "Count"}
	path := writeCSV(t, dir, "abcd-1234__counts.csv", header, [][]string{{"a", "1"}, {"b", "2"}})
	p1, _ := startCached(t, OfflineOptions{CacheDir: cache, Data: []string{path}})
	if got := count(t, p1, "abcd-1234", "SELECT count(*) AS n"); got != 2 {
		t.Fatalf("count = %d; want 2", got)
	}
	p1.Close()
	p2, _ := startCached(t, OfflineOptions{CacheDir: cache, Data: []string{path}})
	if built, reused := p2.CacheStats(); built != 0 || reused != 1 {
		t.Errorf("unchanged file: CacheStats() = %d built, %d reused; want 0, 1", built, reused)
	}
	p2.Close()
	writeCSV(t, dir, "abcd-1234__counts.csv", header, [][]string{{"a", "1"}, {"b", "2"}, {"c", "3"}})
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	p3, logs := startCached(t, OfflineOptions{CacheDir: cache, Data: []string{path}})
	if built, reused := p3.CacheStats(); built != 1 || reused != 0 {
		t.Errorf("changed file: CacheStats() = %d built, %d reused; want 1, 0", built, reused)
	}
	if got := count(t, p3, "abcd-1234", "SELECT count(*) AS n"); got != 3 {
		t.Errorf("after the change, count = %d; want the file's 3 rows", got)
	}
	if !strings.Contains(logs.String(), "cache file rebuilt") || !strings.Contains(logs.String(), "other sources") {
		t.Errorf("the log does not say why the file was rebuilt:\n%s", logs)
	}
	if rep := p3.FileReports(); len(rep) != 1 || rep[0].Rows != 3 || rep[0].Name != "counts" {
		t.Errorf("FileReports() = %+v; want 3 rows named counts", rep)
	}
}

func TestCacheRebuiltWhenDamaged(t *testing.T) {
	t.Parallel()
	for name, damage := range map[string]func(path string) error{
		"garbage": func(path string) error {
			return os.WriteFile(path, bytes.Repeat([]byte("not a database "), 1000), 0o644)
		},
		"truncated": func(path string) error {
			st, err := os.Stat(path)
			if err != nil {
				return err
			}
			return os.Truncate(path, st.Size()/2)
		},
		"empty": func(path string) error { return os.WriteFile(path, nil, 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p1, _ := startCached(t, OfflineOptions{CacheDir: dir})
			// count(objectid) reads the rows: a bare count(*) is answered
			// without building them (TestCountOfSampleNotBuilt).
			const rowsQuery = "SELECT count(objectid) AS n"
			want := count(t, p1, "rqzj-sfat", rowsQuery)
			p1.Close()
			files, _ := filepath.Glob(filepath.Join(dir, "*.db"))
			if len(files) != 1 {
				t.Fatalf("cache files %v; want one", files)
			}
			if err := damage(files[0]); err != nil {
				t.Fatal(err)
			}
			p2, logs := startCached(t, OfflineOptions{CacheDir: dir})
			if got := count(t, p2, "rqzj-sfat", rowsQuery); got != want {
				t.Errorf("count after the rebuild = %d; want %d", got, want)
			}
			if built, _ := p2.CacheStats(); built != 1 {
				t.Errorf("CacheStats() built = %d; want 1 (the damaged file rebuilt)\nlogs:\n%s", built, logs)
			}
			if !strings.Contains(logs.String(), "cache file rebuilt") {
				t.Errorf("the log does not say the file was rebuilt:\n%s", logs)
			}
		})
	}
}

// TestCacheConcurrentFirstStart: portals starting together on one empty
// cache directory (as two Claude sessions do) build each file once and
// read the same data.
func TestCacheConcurrentFirstStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n = 3
	portals := make([]*Emulator, n)
	for i := range portals {
		portals[i], _ = startCached(t, OfflineOptions{CacheDir: dir})
	}
	counts := make([]int, n)
	var wg sync.WaitGroup
	for i, p := range portals {
		wg.Go(func() {
			counts[i] = count(t, p, "wg3w-h783", "SELECT count(*) AS n WHERE police_district = 'Mission'")
		})
	}
	wg.Wait()
	var built, reused int64
	for _, p := range portals {
		b, r := p.CacheStats()
		built, reused = built+b, reused+r
	}
	if built != 1 || reused != n-1 {
		t.Errorf("CacheStats over %d portals = %d built, %d reused; want 1, %d", n, built, reused, n-1)
	}
	for i := range counts {
		if counts[i] != counts[0] || counts[0] == 0 {
			t.Errorf("portal %d counts %d; portal 0 %d", i, counts[i], counts[0])
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.db")); len(files) != 1 {
		t.Errorf("cache files %v; want one", cacheFiles(t, dir))
	}
}

func TestCacheUnwritableDirFallsBack(t *testing.T) {
	t.Parallel()
	parent := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(parent, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string]OfflineOptions{
		"unwritable": {CacheDir: filepath.Join(parent, "cache")},
		"no cache":   {CacheDir: t.TempDir(), NoCache: true},
		"no dir":     {},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, logs := startCached(t, opts)
			if got := count(t, p, "rqzj-sfat", "SELECT count(*) AS n"); got == 0 {
				t.Errorf("count = 0; want the sample rows")
			}
			lines := strings.Count(logs.String(), "temporary directory for this process only")
			if lines != 1 {
				t.Errorf("%d log lines about the temporary directory; want 1:\n%s", lines, logs)
			}
			tmp := p.cache.dir
			p.Close()
			if _, err := os.Stat(tmp); !os.IsNotExist(err) {
				t.Errorf("the temporary directory %s is left after Close: %v", tmp, err)
			}
		})
	}
}

// TestQueryPlansUseIndexes checks the plans of the common query shapes on a
// cached dataset: filters, groups and orders on the indexed columns use
// their index, without a full scan or a temporary b-tree.
func TestQueryPlansUseIndexes(t *testing.T) {
	t.Parallel()
	p, _ := startCached(t, OfflineOptions{CacheDir: t.TempDir()})
	ds, ok, err := p.lookup(t.Context(), "wg3w-h783")
	if err != nil || !ok {
		t.Fatalf("lookup = %v, %v", ok, err)
	}
	var indexed []string
	for _, c := range indexColumns(ds) {
		indexed = append(indexed, c.FieldName)
	}
	for _, want := range []string{"incident_datetime", "police_district", "supervisor_district", "incident_category", "analysis_neighborhood"} {
		if !strings.Contains(" "+strings.Join(indexed, " ")+" ", " "+want+" ") {
			t.Errorf("indexColumns(wg3w-h783) = %v; want %s among them", indexed, want)
		}
	}
	for _, tc := range []struct {
		soql      string
		want      string // in the plan
		forbidden []string
	}{
		{"SELECT incident_category, count(*) AS n GROUP BY incident_category", "COVERING INDEX",
			[]string{"TEMP B-TREE FOR GROUP BY", "SCAN t\n"}},
		{"SELECT police_district, count(*) AS n GROUP BY police_district |> SELECT count(*)", "COVERING INDEX",
			[]string{"TEMP B-TREE FOR GROUP BY"}},
		{"SELECT supervisor_district, count(*) AS n WHERE supervisor_district > 3 GROUP BY supervisor_district ORDER BY supervisor_district", "COVERING INDEX",
			// ORDER BY sorts the groups (nulls last, as Socrata), not the rows.
			[]string{"TEMP B-TREE FOR GROUP BY", "SCAN t\n"}},
		{"SELECT * WHERE police_district = 'Mission' ORDER BY :id LIMIT 100", "USING INDEX",
			[]string{"SCAN t\n"}},
		{"SELECT count(*) WHERE incident_datetime >= '2022-09-01'", "USING COVERING INDEX",
			[]string{"SCAN t\n"}},
		{"SELECT date_trunc_ym(incident_datetime) AS month, count(*) WHERE incident_datetime >= '2024-01-01' GROUP BY month", "(incident_datetime>?)",
			[]string{"SCAN t\n"}},
		{"SELECT analysis_neighborhood, count(*) AS n WHERE incident_category = 'Assault' GROUP BY analysis_neighborhood", "USING INDEX",
			[]string{"SCAN t\n"}},
	} {
		q, err := soql.Parse(tc.soql)
		if err != nil {
			t.Fatal(err)
		}
		c, err := compile(ds, tc.soql, q, true)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := ds.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+c.sql)
		if err != nil {
			t.Fatal(err)
		}
		var plan strings.Builder
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(detail + "\n")
		}
		rows.Close()
		got := plan.String()
		if !strings.Contains(got, tc.want) {
			t.Errorf("plan of %q =\n%s\nwant %q in it", tc.soql, got, tc.want)
		}
		for _, f := range tc.forbidden {
			if strings.Contains(got, f) {
				t.Errorf("plan of %q =\n%s\nwant no %q", tc.soql, got, strings.TrimSpace(f))
			}
		}
	}
}

// TestFileWithoutCatalogHasReadableName: a file that
// no catalog names gets a name from its file (or from the sample dataset it
// replaces), and the log says how it was matched.
func TestFileWithoutCatalogHasReadableName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	header := []string{"Name", "Count"}
	rows := [][]string{{"a", "1"}}
	files := []string{
		writeCSV(t, dir, "abcd-1234__street_tree_list__2024.csv", header, rows),
		writeCSV(t, dir, "Mobile_Food_Facility_Permit_20240115.csv", header, rows),
		writeCSV(t, dir, "yitu-d5am.csv", header, rows),
	}
	p, logs := startCached(t, OfflineOptions{CacheDir: t.TempDir(), Data: files})
	got := map[string]string{}
	for _, r := range p.FileReports() {
		got[r.ID] = r.MatchedBy + ": " + r.Name
	}
	want := map[string]string{
		"abcd-1234": "file name id: street tree list 2024",
		"rqzj-sfat": "sample dataset name: Mobile Food Facility Permit",
		"yitu-d5am": "file name id: Film Locations in San Francisco",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("report of %s = %q; want %q", id, got[id], w)
		}
	}
	if !strings.Contains(logs.String(), `matched_by="sample dataset name"`) {
		t.Errorf("the log does not say the file matched a sample dataset's name:\n%s", logs)
	}
}
