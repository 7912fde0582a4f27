package reliability

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

// toolLoad is the offline product (datasf.New with Config.Offline, its
// own local portal) with a result store bounded at maxResources and
// workers in-process MCP clients calling it at once: the load of
// TestSoakHeapIsFlat (e2e tier), and, a few dozen calls long, of
// TestConcurrentCallsEvicting in the race tier.
type toolLoad struct {
	svc     *datasf.Service
	rest    http.Handler
	clients []*client.Client
}

func newToolLoad(t *testing.T, maxResources, workers int) *toolLoad {
	t.Helper()
	ctx := t.Context()
	svc, err := datasf.New(ctx, datasf.Config{
		Offline:         &datasf.OfflineConfig{},
		MaxResources:    maxResources,
		CleanupInterval: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	l := &toolLoad{svc: svc, rest: svc.RESTHandler()}
	for range workers {
		c, err := client.NewInProcessClient(svc.MCPServer())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		init.Params.ClientInfo = mcp.Implementation{Name: "soak", Version: "1"}
		if _, err := c.Initialize(ctx, init); err != nil {
			t.Fatal(err)
		}
		l.clients = append(l.clients, c)
	}
	return l
}

// call makes call i on c: a query_datasf with a SoQL text never seen
// before; every fifth also reads a page of its result over REST, every
// tenth runs analyze_results on it and every twentieth list_results.
func (l *toolLoad) call(ctx context.Context, c *client.Client, i int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "query_datasf"
	req.Params.Arguments = map[string]any{
		"dataset_id":  "rqzj-sfat",
		"soql":        fmt.Sprintf("SELECT applicant, status, facilitytype WHERE applicant != 'soak %d' LIMIT %d", i, 50+i%400),
		"sample_size": 1 + i%15,
	}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		return fmt.Errorf("call %d: query_datasf = %v, %v", i, err, res)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	resource, _ := sc["resource"].(map[string]any)
	url, _ := resource["url"].(string)
	id := url[strings.LastIndex(url, "/")+1:]
	if i%5 == 0 {
		w := httptest.NewRecorder()
		l.rest.ServeHTTP(w, httptest.NewRequestWithContext(ctx, http.MethodGet, "/resources/"+id+"?offset=10&limit=100", nil))
		if w.Code != http.StatusOK {
			return fmt.Errorf("call %d: GET page = %d %s", i, w.Code, w.Body)
		}
	}
	if i%10 == 0 {
		req := mcp.CallToolRequest{}
		req.Params.Name = "analyze_results"
		req.Params.Arguments = map[string]any{
			"sql":     "SELECT status, count(*) AS n FROM r GROUP BY status ORDER BY n DESC",
			"results": map[string]any{"r": "resource://" + id},
		}
		if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
			return fmt.Errorf("call %d: analyze_results = %v, %v", i, err, res)
		}
	}
	if i%20 == 0 {
		req := mcp.CallToolRequest{}
		req.Params.Name = "list_results"
		if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
			return fmt.Errorf("call %d: list_results = %v, %v", i, err, res)
		}
	}
	return nil
}

// run makes calls next … until-1 (next is shared, so that the calls of
// several runs are distinct), each client's one after the other, the
// clients at once; it returns how many failed, reporting the first.
func (l *toolLoad) run(t *testing.T, next *atomic.Int64, until int64) int64 {
	var (
		failures atomic.Int64
		first    sync.Once
		wg       sync.WaitGroup
	)
	for _, c := range l.clients {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= until {
					next.Add(-1)
					return
				}
				if err := l.call(t.Context(), c, int(i)); err != nil {
					failures.Add(1)
					first.Do(func() { t.Error(err) })
				}
			}
		})
	}
	wg.Wait()
	return failures.Load()
}

// TestConcurrentCallsEvicting is TestSoakHeapIsFlat's load, a few dozen
// calls long, in the race tier (make test runs it under the race
// detector): four MCP clients at once query, read pages over REST, join
// results with analyze_results and list them, while the result store
// evicts (64 results into 16). Every call must succeed and the store stay
// within its bound.
func TestConcurrentCallsEvicting(t *testing.T) {
	t.Parallel()
	const calls, bound = 64, 16
	l := newToolLoad(t, bound, 4)
	var next atomic.Int64
	if failed := l.run(t, &next, calls); failed > 0 {
		t.Fatalf("%d of %d calls failed", failed, calls)
	}
	counted, ok := l.svc.Results().Store().(interface{ Len() int })
	if !ok {
		t.Fatalf("the offline product's store is a %T; want the memory store", l.svc.Results().Store())
	}
	if n := counted.Len(); n > bound {
		t.Errorf("the store holds %d results after %d calls; want at most %d", n, calls, bound)
	}
}
