package portal

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

const budgetRowsN = 5_000

// budgetExecutor returns an Executor on a fake portal holding abcd-1234
// with n = 0 .. budgetRowsN-1 and a label, whose pages may hold 150 rows
// and, from offset growFrom on, with leave from a budget of budget bytes,
// up to 1,500.
func budgetExecutor(t *testing.T, budget, growFrom int64) (*Executor, *socratatest.Server) {
	t.Helper()
	fake := socratatest.NewServer(t)
	schema := socratatest.Schema{ID: "abcd-1234", Name: "Budget", Columns: []socratatest.Column{
		{Name: "N", FieldName: "n", DataType: "number"},
		{Name: "Label", FieldName: "label", DataType: "text"},
	}}
	if err := fake.AddGenerated(t.Context(), schema, budgetRowsN, func(i int) map[string]any {
		return map[string]any{"n": i, "label": fmt.Sprintf("row %04d", i)}
	}); err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Default: &Target{Client: socrata.NewClient(socrata.Options{BaseURL: fake.URL(), MaxRetries: -1})}})
	if err != nil {
		t.Fatal(err)
	}
	e := NewExecutor(r, ExecutorOptions{})
	const width = 30 // about the bytes of {"n":"1234","label":"row 1234"}
	e.stream.pageBytes, e.stream.maxPageBytes = 150*width, 1_500*width
	e.stream.budget, e.stream.growFrom = nil, growFrom
	if budget > 0 {
		e.stream.budget = semaphore.NewWeighted(budget)
	}
	return e, fake
}

// budgetWhole reports whether every byte of e's budget has been given back.
func budgetWhole(e *Executor, budget int64) bool {
	if !e.stream.budget.TryAcquire(budget) {
		return false
	}
	e.stream.budget.Release(budget)
	return true
}

// An export alone reads in pages that double up to the large size with
// the budget's leave, from the offset where pages grow on (few requests,
// each at a deep offset costing the portal the rows before it), and gives
// every byte back; without a budget its pages stay small.
func TestStreamBudgetLargePagesAlone(t *testing.T) {
	t.Parallel()
	const budget = 200_000
	for _, tc := range []struct {
		name             string
		budget, growFrom int64
		minReq, most     int
	}{
		{"budget", budget, 0, 5, 8},                                     // 1,000 rows, then 150, 300, 600, 1,200 and 1,500 a page
		{"budget, pages growing from row 4,000", budget, 4_000, 23, 26}, // 1,000, 20 pages of 150, then 150, 300, 550
		{"no budget", 0, 0, 20, budgetRowsN},                            // 1,000 rows, then about 150 a page
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, fake := budgetExecutor(t, tc.budget, tc.growFrom)
			e.stream.parallel = 1 // one page at a time: each page's size follows the last
			var ns []int
			err := resolved(t, e, stored(t, "SELECT n, label")).Stream(t.Context(), dualresp.PageRequest{}, func(row json.RawMessage) error {
				var r struct{ N string }
				if err := json.Unmarshal(row, &r); err != nil {
					return err
				}
				var n int
				_, err := fmt.Sscan(r.N, &n)
				ns = append(ns, n)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ns, span(0, budgetRowsN)) {
				t.Errorf("streamed %d rows; want 0 .. %d in order", len(ns), budgetRowsN-1)
			}
			if got := fake.RequestCount("resource"); got < tc.minReq || got > tc.most {
				t.Errorf("%d resource requests for %d rows; want %d to %d", got, budgetRowsN, tc.minReq, tc.most)
			}
			if tc.budget > 0 && !budgetWhole(e, tc.budget) {
				t.Error("the budget was not given back whole after the stream")
			}
		})
	}
}

// Exports at once share the budget (large pages for some, small for the
// rest, every row in order for all), and every byte comes back, also from
// readers that stop early or stall, and from pages read ahead that no
// reader took.
func TestStreamBudgetShared(t *testing.T) {
	t.Parallel()
	const budget = 120_000 // about three large pages
	e, _ := budgetExecutor(t, budget, 0)
	q := stored(t, "SELECT n, label")
	errStop := errors.New("the reader stops")
	var wg sync.WaitGroup
	results := make([]string, 8)
	for i := range results {
		wg.Go(func() {
			rows := 0
			err := resolved(t, e, q).Stream(t.Context(), dualresp.PageRequest{}, func(json.RawMessage) error {
				rows++
				switch {
				case i%4 == 1 && rows == 1_200:
					return errStop // stops while pages wait ahead
				case i%4 == 2 && rows%1_000 == 0:
					time.Sleep(20 * time.Millisecond) // stalls now and then
				}
				return nil
			})
			switch {
			case i%4 == 1 && !errors.Is(err, errStop):
				results[i] = fmt.Sprintf("reader %d: %v; want it to stop with its own error", i, err)
			case i%4 != 1 && (err != nil || rows != budgetRowsN):
				results[i] = fmt.Sprintf("reader %d: %d rows, %v; want %d", i, rows, err, budgetRowsN)
			}
		})
	}
	wg.Wait()
	for _, r := range results {
		if r != "" {
			t.Error(r)
		}
	}
	if !budgetWhole(e, budget) {
		t.Error("the budget was not given back whole after the streams")
	}
}

// A reader that stops while large pages wait ahead for it: their bytes
// come back too.
func TestStreamBudgetReaderStops(t *testing.T) {
	t.Parallel()
	const budget = 200_000
	e, fake := budgetExecutor(t, budget, 0)
	errStop := errors.New("the reader stops")
	rows := 0
	err := resolved(t, e, stored(t, "SELECT n, label")).Stream(t.Context(), dualresp.PageRequest{}, func(json.RawMessage) error {
		if rows++; rows <= 1_000 {
			return nil
		}
		// Wait (a bounded number of times) for the fetcher to read pages
		// ahead, then stop.
		for range 200 {
			if fake.RequestCount("resource") >= 4 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		return errStop
	})
	if !errors.Is(err, errStop) {
		t.Fatalf("Stream = %v; want the reader's error", err)
	}
	if n := fake.RequestCount("resource"); n < 3 {
		t.Fatalf("%d resource requests; want pages read ahead of the reader", n)
	}
	if !budgetWhole(e, budget) {
		t.Error("the budget was not given back whole after the reader stopped")
	}
}
