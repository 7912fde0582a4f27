package datasf_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// Exports that finish: the product on a real listener, over a fake portal
// (socratatest) behind a handler that counts the upstream requests in
// flight and can fail the pages from an offset on. The client's upstream
// timeout is short (loadTimeout), so that a reader several times slower
// than it takes seconds, not minutes; a page that keeps failing is asked
// for again without waiting (Config.ExportBackoff).

// The size of the exported result (loadRows), the product's upstream
// timeout (loadTimeout, socrata.Options.Timeout) and the slow reader's rate
// (slowRate) are the e2e tier's in exportload_e2e_test.go, where
// TestExportsFinish needs a result larger than loopback socket buffers
// hold; the fast tier's, a quarter of the rows and a longer timeout for
// the race detector (make test), are in exportload_fast_test.go.

// loadRig is the product over a fake portal whose requests are counted.
type loadRig struct {
	fake     *socratatest.Server
	env      *datasftest.Env
	inflight atomic.Int64 // upstream requests being answered
	failFrom atomic.Int64 // pages at this offset or later fail with 500; 0: none
	cutNext  atomic.Int64 // the next page's body is cut after this many bytes; -1: none
}

var (
	limitRE  = regexp.MustCompile(`(?i)\bLIMIT\s+(\d+)`)
	offsetRE = regexp.MustCompile(`(?i)\bOFFSET\s+(\d+)`)
)

// pageOf returns the OFFSET and LIMIT of a query for rows of the result
// (not its count).
func pageOf(soql string) (off, lim int64, ok bool) {
	m := limitRE.FindStringSubmatch(soql)
	if m == nil || strings.Contains(strings.ToLower(soql), "count(") {
		return 0, 0, false
	}
	lim, _ = strconv.ParseInt(m[1], 10, 64)
	if m := offsetRE.FindStringSubmatch(soql); m != nil {
		off, _ = strconv.ParseInt(m[1], 10, 64)
	}
	return off, lim, true
}

func newLoadRig(t *testing.T, latency time.Duration) *loadRig {
	t.Helper()
	rig := &loadRig{fake: socratatest.NewServer(t)}
	schema := socratatest.Schema{ID: "load-0001", Name: "Load", Columns: []socratatest.Column{
		{Name: "N", FieldName: "n", DataType: "number"},
		{Name: "Text", FieldName: "text", DataType: "text"},
	}}
	pad := strings.Repeat("x", 980)
	if err := rig.fake.AddGenerated(t.Context(), schema, loadRows, func(i int) map[string]any {
		return map[string]any{"n": i, "text": fmt.Sprintf("row %d %s", i, pad)}
	}); err != nil {
		t.Fatal(err)
	}
	rig.fake.SetLatency(latency)
	rig.cutNext.Store(-1)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rig.inflight.Add(1)
		defer rig.inflight.Add(-1)
		soql := r.URL.Query().Get("$query")
		off, lim, paged := pageOf(soql)
		if from := rig.failFrom.Load(); from > 0 && paged && off >= from {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"error":true,"message":"Internal error"}`)
			return
		}
		if !paged || r.URL.Path != "/resource/load-0001.json" {
			rig.fake.Handler().ServeHTTP(w, r)
			return
		}
		// The pages of the result come from memory, as the fake portal
		// would answer them (its SQLite is slow under the race detector),
		// after the same latency and with the same cut.
		if latency > 0 {
			t := time.NewTimer(latency)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		body := []byte{'['}
		for i := off; i < min(off+lim, loadRows); i++ {
			if i > off {
				body = append(body, ',')
			}
			body = fmt.Appendf(body, `{"n":"%d","text":"row %d %s"}`, i, i, pad)
		}
		body = append(body, ']')
		if cut := rig.cutNext.Swap(-1); cut >= 0 && cut < int64(len(body)) {
			body = body[:cut]
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-SODA2-Fields", `["n","text"]`)
		w.Header().Set("X-SODA2-Types", `["number","text"]`)
		_, _ = w.Write(body)
	}))
	t.Cleanup(upstream.Close)
	env, err := datasftest.Start(t.Context(), datasftest.Options{
		PortalURL: upstream.URL,
		Config: datasf.Config{Socrata: socrata.Options{Timeout: loadTimeout, MaxRetries: -1},
			ExportBackoff: func(int) time.Duration { return time.Millisecond },
			Logger:        slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Close() })
	rig.env = env
	return rig
}

// testWriter writes a test's log lines.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// result stores SELECT n, text and returns its export URL without format.
func (rig *loadRig) result(t *testing.T) string {
	t.Helper()
	res, err := rig.env.Call(t.Context(), "query_datasf", map[string]any{"dataset_id": "load-0001", "soql": "SELECT n, text"})
	if err != nil || res.IsError {
		t.Fatalf("query_datasf: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var sc struct {
		Resource struct {
			URL string `json:"url"`
		} `json:"resource"`
		Metadata struct {
			TotalCount int64 `json:"total_count"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &sc); err != nil || sc.Resource.URL == "" || sc.Metadata.TotalCount != loadRows {
		t.Fatalf("query_datasf answered %s (%v); want a resource url and %d rows", b, err, loadRows)
	}
	return sc.Resource.URL + "/export"
}

// readerKind is how a test client reads an export.
type readerKind int

const (
	fastReader    readerKind = iota
	stalledReader            // stops after stallAt rows until the upstream timeout has certainly passed
	slowReader               // reads at slowRate bytes a second
)

const stallAt = 3_000

// exportOutcome is what a test client read.
type exportOutcome struct {
	ns      []int64        // the n of each data row, in order
	marker  map[string]any // the incomplete marker, when the export ended with one
	status  int            // HTTP status
	trailer string         // X-Export-Status
	err     error          // reading the body
}

// read downloads url?format=ndjson as kind says.
func (rig *loadRig) read(ctx context.Context, url string, kind readerKind) exportOutcome {
	var out exportOutcome
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"?format=ndjson", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		out.err = err
		return out
	}
	defer resp.Body.Close()
	out.status = resp.StatusCode
	var body io.Reader = resp.Body
	if kind == slowReader {
		body = &pacedReader{r: resp.Body, lim: rate.NewLimiter(slowRate, 32<<10), ctx: ctx}
	}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var row struct {
			N          json.Number `json:"n"`
			Incomplete bool        `json:"incomplete"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			out.err = fmt.Errorf("line %d: %v", len(out.ns)+1, err)
			return out
		}
		if row.Incomplete {
			_ = json.Unmarshal(sc.Bytes(), &out.marker)
			continue
		}
		n, _ := row.N.Int64()
		out.ns = append(out.ns, n)
		if kind == stalledReader && len(out.ns) == stallAt {
			rig.stall(ctx)
		}
	}
	out.err = sc.Err()
	out.trailer = resp.Trailer.Get("X-Export-Status")
	return out
}

// stall returns once no upstream request is open (whatever streams the
// export is paused or gone) and the upstream timeout has certainly passed
// since the reader stopped: bounded polling on that condition.
func (rig *loadRig) stall(ctx context.Context) {
	start := time.Now()
	deadline := start.Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if rig.inflight.Load() == 0 && time.Since(start) > 3*loadTimeout {
			return
		}
		time.Sleep(20 * time.Millisecond) // polling the condition above, bounded by deadline
	}
}

// pacedReader reads from r at most lim's rate.
type pacedReader struct {
	r   io.Reader
	lim *rate.Limiter
	ctx context.Context
}

func (p *pacedReader) Read(b []byte) (int, error) {
	b = b[:min(len(b), p.lim.Burst())]
	n, err := p.r.Read(b)
	if n > 0 {
		if werr := p.lim.WaitN(p.ctx, n); werr != nil {
			return n, werr
		}
	}
	return n, err
}

// checkComplete fails unless o is every row 0 .. loadRows-1 once, in order,
// without a marker of an incomplete export.
func checkComplete(t *testing.T, what string, o exportOutcome) {
	t.Helper()
	if o.err != nil || o.status != http.StatusOK || o.marker != nil {
		t.Errorf("%s: status %d, read error %v, marker %v after %d rows; want 200 and every row", what, o.status, o.err, o.marker, len(o.ns))
		return
	}
	if len(o.ns) != loadRows {
		t.Errorf("%s: %d rows; want %d", what, len(o.ns), loadRows)
	}
	for i, n := range o.ns {
		if n != int64(i) {
			t.Errorf("%s: row %d has n = %d; want %d (rows in order, none twice)", what, i, n, i)
			break
		}
	}
	if o.trailer != "complete" {
		t.Errorf("%s: trailer X-Export-Status = %q; want complete", what, o.trailer)
	}
}

// TestConcurrentExportsFinish is TestExportsFinish's concurrent readers
// (e2e tier) in the race tier, which make test runs under the race
// detector: three readers export one result at once, and each gets every
// row once, in order.
func TestConcurrentExportsFinish(t *testing.T) {
	t.Parallel()
	rig := newLoadRig(t, 0)
	url := rig.result(t)
	outs := make([]exportOutcome, 3)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Go(func() { outs[i] = rig.read(t.Context(), url, fastReader) })
	}
	wg.Wait()
	for i, o := range outs {
		checkComplete(t, fmt.Sprintf("concurrent reader %d", i), o)
	}
}

// TestExportRefetchesALostPage: a page whose upstream body is cut off is
// asked for again at its offset; the export completes, nothing twice.
func TestExportRefetchesALostPage(t *testing.T) {
	t.Parallel()
	rig := newLoadRig(t, 0)
	url := rig.result(t)
	rig.cutNext.Store(100_000) // the next page: cut after a few hundred rows
	checkComplete(t, "export with a cut page", rig.read(t.Context(), url, fastReader))
	if n := rig.cutNext.Load(); n != -1 {
		t.Errorf("no page was cut (cutNext = %d)", n)
	}
}

// TestExportLastingFailureIsMarked: when the pages from some offset on keep
// failing, the export ends with the documented marker of an incomplete
// export in every format, and the trailer says incomplete.
func TestExportLastingFailureIsMarked(t *testing.T) {
	t.Parallel()
	rig := newLoadRig(t, 0)
	url := rig.result(t)
	rig.failFrom.Store(1) // every page but the first
	for _, format := range []string{"ndjson", "csv", "json"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			resp, err := http.Get(url + "?format=" + format)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("reading the export: %v (want a clean end with a marker)", err)
			}
			if got := resp.Trailer.Get("X-Export-Status"); got != "incomplete" {
				t.Errorf("trailer X-Export-Status = %q; want incomplete", got)
			}
			rows, err := strconv.Atoi(resp.Trailer.Get("X-Export-Rows"))
			if err != nil || rows <= 0 || rows >= loadRows {
				t.Errorf("trailer X-Export-Rows = %q; want the rows sent, fewer than %d", resp.Trailer.Get("X-Export-Rows"), loadRows)
			}
			var marker map[string]any
			switch format {
			case "ndjson":
				lines := strings.Split(strings.TrimSpace(string(body)), "\n")
				if err := json.Unmarshal([]byte(lines[len(lines)-1]), &marker); err != nil {
					t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
				}
				if len(lines)-1 != rows {
					t.Errorf("%d data lines; the trailer says %d", len(lines)-1, rows)
				}
			case "json":
				var all []map[string]any
				if err := json.Unmarshal(body, &all); err != nil {
					t.Fatalf("the JSON export does not parse: %v", err)
				}
				marker = all[len(all)-1]
			case "csv":
				recs, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
				if err != nil {
					t.Fatalf("the CSV export does not parse: %v", err)
				}
				last := recs[len(recs)-1][0]
				if !strings.HasPrefix(last, fmt.Sprintf("#export_incomplete: %d of %d rows: ", rows, loadRows)) {
					t.Errorf("last CSV record starts %q; want #export_incomplete: %d of %d rows", last, rows, loadRows)
				}
				return
			}
			if marker["incomplete"] != true || marker["error"] != "export_incomplete" || marker["rows"] != float64(rows) {
				t.Errorf("last %s element = %v; want the incomplete marker with rows %d", format, marker, rows)
			}
		})
	}
}
