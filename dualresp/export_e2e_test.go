//go:build e2e

package dualresp_test

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// TestExportMillionRowsConstantMemory exports 1,000,000 rows through the
// real handler and client and samples the heap while it runs: the heap must
// not grow by 32 MB or more, whatever the result size.
func TestExportMillionRowsConstantMemory(t *testing.T) {
	// Not parallel: the heap is measured process-wide.
	if testing.Short() {
		t.Skip("exports a million rows")
	}
	const total = 1_000_000
	tests := []struct {
		name   string
		exec   dualresp.Executor
		format string
		lines  int64
		last   string
	}{
		{"paged ndjson", &genExecutor{Total: total}, "ndjson", total, string(genRow(total - 1))},
		{"streamed csv", &streamExecutor{genExecutor: &genExecutor{Total: total}}, "csv", total + 1, `999999,row-999999,false,"[""a"",0]"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _, _ := startServer(t, tt.exec, dualresp.Options{}, nil)
			p := parse(t, newClient(t, dualresp.ClientOptions{}), create(t, srv, dualresp.Spec{}))

			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			base := ms.HeapAlloc
			var peak uint64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				tick := time.NewTicker(5 * time.Millisecond)
				defer tick.Stop()
				var m runtime.MemStats
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						runtime.ReadMemStats(&m)
						peak = max(peak, m.HeapAlloc)
					}
				}
			})
			w := &countingWriter{}
			n, err := p.Export(t.Context(), tt.format, w)
			close(stop)
			wg.Wait()
			if err != nil {
				t.Fatalf("Export() = %v", err)
			}
			growth := int64(peak) - int64(base)
			t.Logf("export of %d rows as %s (%s): %d bytes (%.1f MB) streamed; heap growth peak %.2f MB (base %.2f MB, peak %.2f MB)",
				total, tt.format, tt.name, n, float64(n)/(1<<20), float64(growth)/(1<<20), float64(base)/(1<<20), float64(peak)/(1<<20))
			if w.lines != tt.lines || string(w.last) != tt.last {
				t.Errorf("export has %d lines ending %q; want %d ending %q", w.lines, w.last, tt.lines, tt.last)
			}
			if growth >= 32<<20 {
				t.Errorf("heap grew by %.1f MB during the export; want < 32 MB", float64(growth)/(1<<20))
			}
		})
	}
}

// countingWriter counts bytes and newlines and checks the last line.
type countingWriter struct {
	n, lines int64
	last     []byte
	cur      []byte
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.n += int64(n)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.cur = append(w.cur, p...)
			break
		}
		w.cur = append(w.cur, p[:i]...)
		w.last = append(w.last[:0], w.cur...)
		w.cur = w.cur[:0]
		w.lines++
		p = p[i+1:]
	}
	return n, nil
}
