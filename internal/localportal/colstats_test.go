package localportal

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// viewStats returns the cachedContents of each column of id's Views
// document (nil for a column without), waiting up to a minute for them
// when wait is set (a large dataset's are computed in the background).
func viewStats(t *testing.T, p *Emulator, id string, wait bool) map[string]json.RawMessage {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		r := get(t, p, "/api/views/"+id+".json", nil)
		if r.status != http.StatusOK {
			t.Fatalf("Views %s: status %d: %s", id, r.status, r.body)
		}
		var doc struct {
			Columns []struct {
				FieldName      string          `json:"fieldName"`
				CachedContents json.RawMessage `json:"cachedContents"`
			} `json:"columns"`
		}
		if err := json.Unmarshal(r.body, &doc); err != nil {
			t.Fatal(err)
		}
		out := map[string]json.RawMessage{}
		for _, c := range doc.Columns {
			if c.CachedContents != nil {
				out[c.FieldName] = c.CachedContents
			}
		}
		if len(out) > 0 || !wait {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("Views %s: no cachedContents within a minute", id)
		}
		time.Sleep(20 * time.Millisecond) // polling the portal's background statistics, bounded by deadline
	}
}

// TestStatsKeptWithTheCache: the column statistics of a cache file's
// dataset are written beside it once computed, and the next portal on the
// same cache serves them from there instead of scanning the rows again:
// a count changed in the kept file shows in its Views document. A kept
// file with another key (the cache file rebuilt for other data) is
// ignored. Here the statistics computed while a small dataset loads;
// TestStatsKeptWithTheCacheLarge (e2e tier) those computed in the
// background after the first Views request of a large one.
func TestStatsKeptWithTheCache(t *testing.T) {
	t.Parallel()
	checkStatsKept(t, 0.01, "wg3w-h783") // 2,500 rows
}

// checkStatsKept is TestStatsKeptWithTheCache on dataset id of the sample
// data at scale.
func checkStatsKept(t *testing.T, scale float64, id string) {
	t.Helper()
	dir := t.TempDir()
	p1, _ := startCached(t, OfflineOptions{CacheDir: dir, SampleScale: scale})
	query(t, p1, id, "SELECT count(*) AS n WHERE true")
	computed := viewStats(t, p1, id, true)
	kept, _ := filepath.Glob(filepath.Join(dir, "*"+id+"*"+statsFileSuffix))
	if len(kept) != 1 {
		files, _ := os.ReadDir(dir)
		t.Fatalf("statistics files %v; want one beside the cache file (%v)", kept, files)
	}
	p1.Close()

	// The kept file is what the next portal serves: change one count.
	b, err := os.ReadFile(kept[0])
	if err != nil {
		t.Fatal(err)
	}
	var f statsFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var field string
	for name := range f.Stats {
		field = name
		break
	}
	f.Stats[field].NonNull += 1000
	write := func(f statsFile) {
		t.Helper()
		b, _ := json.Marshal(f)
		if err := os.WriteFile(kept[0], b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(f)
	p2, _ := startCached(t, OfflineOptions{CacheDir: dir, SampleScale: scale})
	query(t, p2, id, "SELECT count(*) AS n WHERE true")
	if built, reused := p2.CacheStats(); built != 0 || reused != 1 {
		t.Fatalf("second portal: CacheStats() = %d built, %d reused; want 0, 1", built, reused)
	}
	served := viewStats(t, p2, id, true)
	var st columnStats
	if err := json.Unmarshal(served[field], &st); err != nil {
		t.Fatalf("%s: cachedContents %s: %v", field, served[field], err)
	}
	if want := f.Stats[field].NonNull; st.NonNull != want {
		t.Errorf("second portal: %s non_null = %d; want %d, the kept file's (it computed them again)", field, st.NonNull, want)
	}
	p2.Close()

	// Another key: ignored, computed again.
	f.Key = "another build"
	write(f)
	p3, _ := startCached(t, OfflineOptions{CacheDir: dir, SampleScale: scale})
	query(t, p3, id, "SELECT count(*) AS n WHERE true")
	again := viewStats(t, p3, id, true)
	if string(again[field]) != string(computed[field]) || len(again) != len(computed) {
		t.Errorf("with a kept file of another key: %d columns with statistics, %s %s; want the %d computed, %s",
			len(again), field, again[field], len(computed), computed[field])
	}
}
