package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/sqlitestore"
)

// rowsExec serves a generated result whose size is in the query text.
type rowsExec struct{}

// Prepare reads the result's size from the query text.
func (rowsExec) Prepare(_ context.Context, q dualresp.Query) (dualresp.Plan, error) {
	n, err := strconv.ParseInt(q.Text, 10, 64)
	if err != nil {
		return nil, err
	}
	return rowsPlan{n: n, text: q.Text}, nil
}

// rowsPlan is a prepared rowsExec query: n rows, each naming text.
type rowsPlan struct {
	n    int64
	text string
}

func (p rowsPlan) Count(context.Context) (int64, error) { return p.n, nil }

func (p rowsPlan) Page(_ context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	var rows []json.RawMessage
	for i := req.Offset; i < p.n && i < req.Offset+req.Limit; i++ {
		rows = append(rows, json.RawMessage(fmt.Sprintf(`{"i":%d,"q":%q}`, i, p.text)))
	}
	return dualresp.PageResult{Rows: rows}, nil
}

// loadRun is how much each client of TestBoundedLoad does: ops results
// created and paged through, or, with DATASF_LOAD_SECONDS set (a soak run),
// as many as it can in that time, up to 5,000.
func loadRun(ops int) (maxOps int, limit time.Duration) {
	if s, err := strconv.Atoi(os.Getenv("DATASF_LOAD_SECONDS")); err == nil && s > 0 {
		return 5_000, time.Duration(s) * time.Second
	}
	return ops, 5 * time.Minute // a bound on a stuck run; the ops end it first
}

// A bounded loopback load test: 64 concurrent clients each create a fixed
// number of results and page through them over HTTP, against the memory
// store (more results than its cap, so it evicts under load) and the
// SQLite store (every result kept). DATASF_LOAD_SECONDS=N runs it for N
// seconds instead.
func TestBoundedLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	t.Parallel()
	const (
		clients  = 64
		memCap   = 1_000
		pageSize = 25
	)
	sqlite, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "load.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlite.Close() })
	mem := dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{MaxResources: memCap})
	for _, store := range []struct {
		name  string
		store dualresp.Store
		ops   int // per client
	}{{"memory", mem, 2 * memCap / clients}, {"sqlite", sqlite, 6}} {
		t.Run(store.name, func(t *testing.T) {
			t.Parallel()
			mux := http.NewServeMux() // routes are added once the server's URL is known
			ts := httptest.NewServer(mux)
			defer ts.Close()
			srv, err := dualresp.New(dualresp.Options{BaseURL: ts.URL, Store: store.store, Executors: map[string]dualresp.Executor{"gen": rowsExec{}}, CleanupInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			mux.Handle("/resources/", srv.Handler())
			httpClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}, Timeout: 30 * time.Second}
			defer httpClient.CloseIdleConnections()

			maxOps, limit := loadRun(store.ops)
			ctx, cancel := context.WithTimeout(t.Context(), limit)
			defer cancel()
			var (
				requests, creates, errorsN, lost atomic.Int64
				mu                               sync.Mutex
				latencies                        []time.Duration
				ids                              []string
			)
			began := time.Now()
			var wg sync.WaitGroup
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var mine []time.Duration
					defer func() { mu.Lock(); latencies = append(latencies, mine...); mu.Unlock() }()
					for op := 0; op < maxOps && ctx.Err() == nil; op++ {
						rows := int64(1 + (c*31+op*7)%120)
						resp, err := srv.CreateResponse(context.WithoutCancel(ctx), dualresp.Spec{
							Name: "load", Query: dualresp.Query{Kind: "gen", Text: strconv.FormatInt(rows, 10)},
							Columns: []dualresp.Column{{Name: "i"}, {Name: "q"}}, SampleSize: 3,
						})
						if err != nil {
							errorsN.Add(1)
							continue
						}
						creates.Add(1)
						mu.Lock()
						ids = append(ids, resp.ID())
						mu.Unlock()
						got := int64(0)
						for off := int64(0); off < rows; off += pageSize {
							start := time.Now()
							r, err := httpClient.Get(fmt.Sprintf("%s?offset=%d&limit=%d", resp.URL(), off, pageSize))
							if err != nil {
								errorsN.Add(1)
								break
							}
							var page struct {
								Data []json.RawMessage `json:"data"`
							}
							err = json.NewDecoder(r.Body).Decode(&page)
							_, _ = io.Copy(io.Discard, r.Body)
							r.Body.Close()
							mine = append(mine, time.Since(start))
							requests.Add(1)
							switch {
							case r.StatusCode == http.StatusNotFound:
								lost.Add(1)
							case r.StatusCode != http.StatusOK || err != nil:
								errorsN.Add(1)
							}
							got += int64(len(page.Data))
						}
						if got != rows {
							lost.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(began).Round(time.Millisecond)
			if errorsN.Load() != 0 || lost.Load() != 0 {
				t.Errorf("%s store: %d errors, %d lost resources or rows; want none", store.name, errorsN.Load(), lost.Load())
			}
			if requests.Load() == 0 {
				t.Fatal("no requests were made")
			}
			slices.Sort(latencies)
			p50 := latencies[len(latencies)/2]
			p99 := latencies[len(latencies)*99/100]
			if store.name == "memory" {
				if n := mem.Len(); n > memCap {
					t.Errorf("memory store holds %d results; its cap is %d", n, memCap)
				}
				if creates.Load() <= memCap {
					t.Errorf("memory store: %d results created; the load should pass its cap of %d", creates.Load(), memCap)
				}
			} else {
				// Nothing is lost in the durable store: every result is still there.
				missing := 0
				for _, id := range ids {
					if _, err := srv.Resource(context.Background(), id); err != nil {
						missing++
					}
				}
				if missing != 0 {
					t.Errorf("sqlite store lost %d of %d results", missing, len(ids))
				}
			}
			t.Logf("load (%s store): %d clients for %v: %d results created, %d page requests, %.0f requests/s, p50 %v, p99 %v, errors %d, lost %d",
				store.name, clients, elapsed, creates.Load(), requests.Load(), float64(requests.Load())/elapsed.Seconds(),
				p50.Round(time.Microsecond), p99.Round(time.Microsecond), errorsN.Load(), lost.Load())
		})
	}
}
