//go:build e2e

package rank_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/rank"
)

// A portal of 10,000 datasets fits comfortably: the index of 10,000
// datasets with 1,500-character descriptions and 30 columns each (larger
// than DataSF's average), ten of them with their 20 most frequent values
// (as the Views API's cachedContents gives them), holds less than
// maxIndexBytes beyond the datasets themselves, and a search over it
// stays fast enough to run per call.
func TestIndexMemory10000(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 10,000-dataset index")
	}
	const maxIndexBytes = 150 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx%c", i, 'a'+rune(i%26))
	}
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(vocab[int(rng.ExpFloat64()*2000)%len(vocab)])
			b.WriteByte(' ')
		}
		return b.String()
	}
	docs := make([]rank.Doc, 10000)
	for i := range docs {
		d := rank.Doc{ID: fmt.Sprintf("d%03d-%04d", i/1000, i), Name: text(40), Description: text(1500), Category: text(15)}
		for j := range 30 {
			c := rank.Column{Name: text(15), FieldName: fmt.Sprintf("col_%d", j), Description: text(60)}
			if j < 10 {
				for range 20 {
					c.Values = append(c.Values, text(12))
				}
			}
			d.Columns = append(d.Columns, c)
		}
		docs[i] = d
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix := rank.New(docs)
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	hits := ix.Search(docs[1234].Name, 5)
	runtime.KeepAlive(ix)
	t.Logf("index of %d datasets: %.1f MiB of heap", ix.Len(), float64(grew)/(1<<20))
	if grew > maxIndexBytes {
		t.Errorf("index of 10,000 datasets: %d MiB; want at most %d MiB", grew>>20, maxIndexBytes>>20)
	}
	if len(hits) == 0 || docs[hits[0].Index].ID != docs[1234].ID {
		t.Errorf("Search(name of dataset 1234) = %v; want it first", hits)
	}
}
