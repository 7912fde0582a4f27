package rank_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
	"github.com/datasf-mcp/datasf-mcp/internal/rank"
)

// devQuestion is one line of testdata/search/devset.jsonl: a question an
// analyst would ask, its keywords form, and the dataset that answers it.
type devQuestion struct {
	ID       string `json:"id"`
	Question string `json:"q"`
	Keywords string `json:"kw"`
}

func devSet(t *testing.T) []devQuestion {
	t.Helper()
	f, err := os.Open(fixtures.Path(t, "search", "devset.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []devQuestion
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var q devQuestion
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatalf("devset.jsonl: %v", err)
		}
		out = append(out, q)
	}
	return out
}

// catalogDocs reads the 630-dataset DataSF catalog fixture as Docs.
func catalogDocs(t *testing.T) []rank.Doc {
	t.Helper()
	dir := fixtures.Path(t, "catalog")
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var docs []rank.Doc
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			var e struct {
				Endpoint, Title, Description, Category string
				Department                             any    `json:"publishing_department"`
				RowsUpdatedAt                          string `json:"rows_updated_at"`
				Columns                                []struct {
					Name, FieldName, Description string
				}
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatal(err)
			}
			d := rank.Doc{ID: e.Endpoint, Name: e.Title, Description: e.Description, Category: e.Category}
			if e.Department != nil {
				d.Department = fmt.Sprint(e.Department)
			}
			d.UpdatedAt, _ = time.Parse(time.RFC3339, e.RowsUpdatedAt)
			for _, c := range e.Columns {
				d.Columns = append(d.Columns, rank.Column{Name: c.Name, FieldName: c.FieldName, Description: c.Description})
			}
			docs = append(docs, d)
		}
	}
	if len(docs) < 600 {
		t.Fatalf("catalog fixture: %d datasets; want the 630 of DataSF's catalog", len(docs))
	}
	return docs
}

// metrics are the share of questions whose dataset comes first, in the
// first 3, in the first 5, and the mean reciprocal rank (over the first
// 20).
type metrics struct{ top1, top3, top5, mrr float64 }

func (m metrics) String() string {
	return fmt.Sprintf("%.2f | %.2f | %.2f | %.3f", m.top1, m.top3, m.top5, m.mrr)
}

func measure(qs []devQuestion, text func(devQuestion) string, search func(string) []string) (metrics, []string) {
	var m metrics
	var misses []string
	for _, q := range qs {
		ids := search(text(q))
		r := slices.Index(ids, q.ID) + 1
		if r == 1 {
			m.top1++
		}
		if r >= 1 && r <= 3 {
			m.top3++
		}
		if r >= 1 && r <= 5 {
			m.top5++
		}
		if r >= 1 {
			m.mrr += 1 / float64(r)
		}
		if r != 1 {
			misses = append(misses, fmt.Sprintf("%s (rank %d) %q -> %v", q.ID, r, text(q), ids[:min(3, len(ids))]))
		}
	}
	n := float64(len(qs))
	return metrics{m.top1 / n, m.top3 / n, m.top5 / n, m.mrr / n}, misses
}

// TestDevSet measures the ranker on the development set, side by side
// with a plain BM25 over the same catalog, and holds it to the goals:
// top-3 >= 0.85 and top-1 >= 0.65 for the questions as typed and for their
// keywords.
func TestDevSet(t *testing.T) {
	t.Parallel()
	docs := catalogDocs(t)
	qs := devSet(t)
	if len(qs) < 80 {
		t.Fatalf("development set: %d questions; want 80 or more", len(qs))
	}
	ix := rank.New(docs)
	ours := func(q string) []string {
		var ids []string
		for _, h := range ix.Search(q, 20) {
			ids = append(ids, docs[h.Index].ID)
		}
		return ids
	}
	base := newBM25(docs)
	forms := []struct {
		name string
		text func(devQuestion) string
	}{
		{"the question as typed", func(q devQuestion) string { return q.Question }},
		{"its keywords", func(q devQuestion) string { return q.Keywords }},
	}
	var report strings.Builder
	fmt.Fprintf(&report, "%d questions over %d datasets\n| form | ranker | top 1 | top 3 | top 5 | MRR |\n|---|---|---|---|---|---|\n", len(qs), len(docs))
	for _, f := range forms {
		m, misses := measure(qs, f.text, ours)
		b, _ := measure(qs, f.text, base.search)
		fmt.Fprintf(&report, "| %s | ours | %s |\n| %s | plain BM25 | %s |\n", f.name, m, f.name, b)
		for _, s := range misses {
			t.Logf("%s: %s", f.name, s)
		}
		if m.top3 < 0.85 || m.top1 < 0.65 {
			t.Errorf("%s: top-1 %.2f, top-3 %.2f; want >= 0.65 and >= 0.85", f.name, m.top1, m.top3)
		}
	}
	t.Logf("development set:\n%s", report.String())
}

// bm25 is the baseline: textbook BM25 (k1 1.2, b 0.75) over each dataset's
// name, description, category and column names as one text, with
// lower-case word tokens and nothing else (no stemming, no stop words, no
// field weights).
type bm25 struct {
	ids  []string
	tf   []map[string]int
	len  []int
	df   map[string]int
	avgl float64
}

func newBM25(docs []rank.Doc) *bm25 {
	b := &bm25{df: map[string]int{}}
	total := 0
	for _, d := range docs {
		var text strings.Builder
		text.WriteString(d.Name + " " + d.Description + " " + d.Category)
		for _, c := range d.Columns {
			text.WriteString(" " + c.Name + " " + c.FieldName)
		}
		words := rank.Words(text.String())
		tf := map[string]int{}
		for _, w := range words {
			tf[w]++
		}
		for w := range tf {
			b.df[w]++
		}
		b.ids = append(b.ids, d.ID)
		b.tf = append(b.tf, tf)
		b.len = append(b.len, len(words))
		total += len(words)
	}
	b.avgl = float64(total) / float64(len(docs))
	return b
}

func (b *bm25) search(q string) []string {
	type hit struct {
		id    string
		score float64
	}
	var hits []hit
	words := rank.Words(q)
	n := float64(len(b.ids))
	for i := range b.ids {
		s := 0.0
		for _, w := range words {
			tf := float64(b.tf[i][w])
			if tf == 0 {
				continue
			}
			df := float64(b.df[w])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*float64(b.len[i])/b.avgl))
		}
		if s > 0 {
			hits = append(hits, hit{b.ids[i], s})
		}
	}
	slices.SortStableFunc(hits, func(x, y hit) int {
		if x.score != y.score {
			if x.score > y.score {
				return -1
			}
			return 1
		}
		return strings.Compare(x.id, y.id)
	})
	var ids []string
	for _, h := range hits[:min(20, len(hits))] {
		ids = append(ids, h.id)
	}
	return ids
}
