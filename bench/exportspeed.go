package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// Part 6 compares, in one run, the complete result of `SELECT *` through
// our link (GET /export?format=ndjson of the result) against what a user
// does without us: paging the portal directly, 50,000 rows a request, one
// request after another. The upstream answers like Socrata by a cost
// model: each request takes perRequest plus perRow for each row it
// returns (or what it really took, if longer), and requests at once are
// served at once. The export server uses the default politeness limits of
// a portal without an app token (4 requests at once, 5 a second).
const (
	envCost    = "DATASF_BENCH_COST"   // upstream: "PER_REQUEST,PER_ROW" durations, e.g. "300ms,30us"
	envLimits  = "DATASF_BENCH_LIMITS" // export: "default" for the default upstream limits
	costModel6 = "300ms,30us"          // the cost model of part 6
	directPage = 50_000                // the rows of a direct page request
)

// costed wraps a fake portal's handler with the cost model: the answer
// goes out no sooner than perRequest + rows*perRow after the request came.
type costed struct {
	next               http.Handler
	perRequest, perRow time.Duration
}

// parseCost reads "PER_REQUEST,PER_ROW".
func parseCost(s string) (perRequest, perRow time.Duration, err error) {
	a, b, ok := strings.Cut(s, ",")
	if ok {
		if perRequest, err = time.ParseDuration(a); err == nil {
			perRow, err = time.ParseDuration(b)
		}
	}
	if !ok || err != nil {
		return 0, 0, fmt.Errorf("%s must be PER_REQUEST,PER_ROW durations such as 300ms,30us; got %q", envCost, s)
	}
	return perRequest, perRow, nil
}

func (c *costed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	buf := &bufferedAnswer{header: http.Header{}, status: http.StatusOK}
	c.next.ServeHTTP(buf, r)
	body := buf.body.Bytes()
	rows := 0
	if bytes.HasPrefix(body, []byte("[{")) {
		// The local portal writes one row a line: "[{...}\n,{...}\n,{...}]".
		rows = bytes.Count(body, []byte("\n,{")) + 1
	}
	if wait := c.perRequest + time.Duration(rows)*c.perRow - time.Since(start); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	for k, vs := range buf.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(buf.status)
	_, _ = w.Write(body)
}

// bufferedAnswer collects an answer whole.
type bufferedAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedAnswer) Header() http.Header         { return b.header }
func (b *bufferedAnswer) WriteHeader(status int)      { b.status = status }
func (b *bufferedAnswer) Write(p []byte) (int, error) { return b.body.Write(p) }

// exportLimits are the upstream limits of the export child: the defaults
// with DATASF_BENCH_LIMITS=default, else none (the other parts measure
// the server's own overhead).
func exportLimits() datasf.UpstreamLimits {
	if os.Getenv(envLimits) == "default" {
		return datasf.UpstreamLimits{}
	}
	return datasf.UpstreamLimits{MaxConcurrent: -1, Rate: -1}
}

func keyExport(n int, what string) string { return fmt.Sprintf("export.%d.%s", n, what) }

// exportSpeed is part 6.
func exportSpeed(ctx context.Context, cfg config, rep *report, log *slog.Logger) error {
	sizes := cfg.ExportSizes
	log.Info("part 6: generating datasets in the cost-model upstream child", "sizes", sizes, "cost", costModel6)
	up, err := startChild(roleUpstream, []string{envSizes + "=" + joinInts(sizes), envCost + "=" + costModel6}, 20*time.Minute)
	if err != nil {
		return err
	}
	defer up.Stop()
	// The link is read as the baseline reads the portal: uncompressed
	// (over loopback, compression only costs CPU).
	h := &harness{up: up, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8, DisableCompression: true}}}
	direct := socrata.NewClient(socrata.Options{BaseURL: up.URL, Timeout: 10 * time.Minute, MaxRetries: -1})
	for r := range cfg.Runs {
		e, err := startChild(roleExport, []string{envUpstream + "=" + up.URL, envLimits + "=default"}, time.Minute)
		if err != nil {
			return err
		}
		err = func() error {
			defer e.Stop()
			for i, n := range sizes {
				cr, err := h.createOn(ctx, e, datasetID(i), "SELECT *")
				if err != nil {
					return err
				}
				if cr.TotalCount != int64(n) {
					return fmt.Errorf("export child: total_count %d for %d rows", cr.TotalCount, n)
				}
				var oursSum, baseSum uint64
				ours := func() error {
					start := time.Now()
					rows, sum, err := h.readExportSum(ctx, cr.URL)
					d := since(start)
					if err != nil {
						return err
					}
					if rows != int64(n) {
						return fmt.Errorf("export of %d rows returned %d", n, rows)
					}
					m, err := readMem(e.PID())
					if err != nil {
						return err
					}
					oursSum = sum
					rep.add(keyExport(n, "ours"), d.Seconds())
					rep.add(keyExport(n, "rss"), float64(m.HWM))
					log.Info("export through the link", "run", r+1, "rows", n, "took", d.Round(time.Millisecond), "peak_rss_mib", fmt.Sprintf("%.1f", float64(m.HWM)/(1<<20)))
					return nil
				}
				base := func() error {
					start := time.Now()
					rows, sum, err := pageSequentially(ctx, direct, datasetID(i))
					d := since(start)
					if err != nil {
						return err
					}
					if rows != int64(n) {
						return fmt.Errorf("direct paging of %d rows returned %d", n, rows)
					}
					baseSum = sum
					rep.add(keyExport(n, "base"), d.Seconds())
					log.Info("direct paging, 50,000 rows a request in sequence", "run", r+1, "rows", n, "took", d.Round(time.Millisecond))
					return nil
				}
				first, second := ours, base
				if r%2 == 1 {
					first, second = base, ours
				}
				if err := first(); err != nil {
					return err
				}
				if err := second(); err != nil {
					return err
				}
				if oursSum != baseSum {
					return fmt.Errorf("%d rows: the export's rows are not the direct pages' rows in their order (checksums %x, %x)", n, oursSum, baseSum)
				}
				rep.add(keyExport(n, "inorder"), 1)
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// rowSum folds rows, in order, into one checksum.
type rowSum struct{ sum uint64 }

func (s *rowSum) add(row []byte) {
	h := fnv.New64a()
	_, _ = h.Write(row)
	s.sum = s.sum*1_000_003 ^ h.Sum64()
}

// readExportSum reads an NDJSON export and returns its rows and their
// checksum in order.
func (h *harness) readExportSum(ctx context.Context, resURL string) (int64, uint64, error) {
	resp, err := h.get(ctx, resURL+"/export?format=ndjson")
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	var (
		rows int64
		sum  rowSum
	)
	br := bufio.NewReaderSize(resp.Body, 1<<20)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			rows++
			sum.add(line[:len(line)-1])
		}
		if errors.Is(err, io.EOF) {
			if resp.Trailer.Get("X-Export-Status") != "complete" {
				return rows, 0, fmt.Errorf("export ended %q after %d rows", resp.Trailer.Get("X-Export-Status"), rows)
			}
			return rows, sum.sum, nil
		}
		if err != nil {
			return rows, 0, err
		}
	}
}

// pageSequentially pages the portal as a user without us would: the
// result in its stable order, 50,000 rows a request, each request after
// the last, until a short page.
func pageSequentially(ctx context.Context, c *socrata.Client, id string) (int64, uint64, error) {
	var (
		total int64
		sum   rowSum
	)
	for off := 0; ; off += directPage {
		s, err := c.QueryStream(ctx, id, fmt.Sprintf("SELECT * ORDER BY :id ASC LIMIT %d OFFSET %d", directPage, off))
		if err != nil {
			return total, 0, err
		}
		n := 0
		for {
			row, err := s.NextRaw()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				s.Close()
				return total, 0, err
			}
			sum.add(row)
			n++
		}
		if err := s.Close(); err != nil {
			return total, 0, err
		}
		total += int64(n)
		if n < directPage {
			return total, sum.sum, nil
		}
	}
}

// exportSpeedRows are the rows of part 6.
func (r *report) exportSpeedRows() []row {
	const p6 = "6 export speed"
	var out []row
	for _, n := range r.cfg.ExportSizes {
		ours, base := r.med(keyExport(n, "ours")), r.med(keyExport(n, "base"))
		fig := fmt.Sprintf("%s rows of SELECT *: seconds for the complete result (ours: /export ndjson; baseline: direct paging, 50,000 rows a request in sequence)", group(n))
		rw := row{section: p6, figure: fig, ours: fmt.Sprintf("%.2f s", ours), base: fmt.Sprintf("%.2f s", base), ratio: times(base / ours), goal: ">= 1.5x faster"}
		rw.status = r.judge(fig, base/ours >= 1.5, fmt.Sprintf("baseline/ours = %.2fx", base/ours))
		out = append(out, rw)
		if lo, hi, ok := r.pairedRange(keyExport(n, "base"), keyExport(n, "ours")); ok {
			out = append(out, row{section: p6, figure: fmt.Sprintf("%s rows: baseline/ours within each run (lowest - highest of %d)", group(n), len(r.samples[keyExport(n, "ours")])), ratio: fmt.Sprintf("%.2f - %.2f", lo, hi)})
		}
		inOrder := len(r.samples[keyExport(n, "inorder")]) == len(r.samples[keyExport(n, "ours")])
		out = append(out, row{section: p6, figure: fmt.Sprintf("%s rows: every row, in the direct pages' order (checksum of the rows in order)", group(n)),
			ours: fmt.Sprint(inOrder), goal: "true", status: r.judge(fmt.Sprintf("%d rows in order", n), inOrder, "checksums differ")})
		out = append(out, row{section: p6, figure: fmt.Sprintf("export server peak RSS (VmHWM) after the %s-row export", group(n)), ours: mib(r.med(keyExport(n, "rss")))})
	}
	return out
}

// syntheticSample is the rows of a part 6 dataset the fake portal holds.
const syntheticSample = 1_000

// numbered adds a first column "row" (the row's number) to a generated
// dataset, so that every row of a synthetic result is distinct.
func numbered(schema localportal.Schema, row func(int) map[string]any) (localportal.Schema, func(int) map[string]any) {
	schema.Columns = append([]socrata.Column{{Name: "Row", FieldName: "row", DataType: "number"}}, schema.Columns...)
	return schema, func(i int) map[string]any {
		m := row(i)
		m["row"] = i
		return m
	}
}

// synthetic answers the row queries of part 6 on its datasets itself, so
// that the fake portal costs only what the cost model says (a real
// portal's work is not this machine's CPU): `SELECT * ORDER BY :id ASC
// LIMIT n OFFSET k` gets rows k .. k+n-1, row i being the portal's sample
// row i mod syntheticSample with its number set to i; `... |> SELECT
// count(*)` gets the dataset's size. Everything else (the schema) goes to
// the fake portal.
type synthetic struct {
	next    http.Handler
	sizes   map[string]int
	rows    map[string][][]byte // the sample rows, as the portal writes them
	headers map[string]http.Header
}

// load reads each dataset's sample rows from the portal.
func (s *synthetic) load(portal http.Handler) error {
	s.rows, s.headers = map[string][][]byte{}, map[string]http.Header{}
	for id := range s.sizes {
		u := "/resource/" + id + ".json?" + url.Values{"$query": {fmt.Sprintf("SELECT * ORDER BY :id ASC LIMIT %d", syntheticSample)}}.Encode()
		rec := &bufferedAnswer{header: http.Header{}, status: http.StatusOK}
		portal.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u, nil))
		body := bytes.TrimSpace(rec.body.Bytes())
		if rec.status != http.StatusOK || !bytes.HasPrefix(body, []byte("[{")) {
			return fmt.Errorf("reading the sample rows of %s: %d %.200s", id, rec.status, body)
		}
		for _, r := range bytes.Split(body[1:len(body)-1], []byte("\n,")) {
			if !bytes.Contains(r, []byte(`"row":"`)) {
				return fmt.Errorf("sample row of %s has no row number: %.200s", id, r)
			}
			s.rows[id] = append(s.rows[id], bytes.Clone(r))
		}
		s.headers[id] = rec.header
	}
	return nil
}

func (s *synthetic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/resource/"), ".json")
	n, known := s.sizes[id]
	text := r.URL.Query().Get("$query")
	if !ok || !known || text == "" {
		s.next.ServeHTTP(w, r)
		return
	}
	q, err := soql.Parse(text)
	if err != nil || len(q.Stages) == 0 || len(q.Stages) > 2 {
		s.next.ServeHTTP(w, r)
		return
	}
	first, last := q.Stages[0], q.Stages[len(q.Stages)-1]
	lo, hi := int64(0), int64(n)
	if first.Offset != nil {
		lo = min(*first.Offset, hi)
	}
	if first.Limit != nil {
		hi = min(hi, lo+*first.Limit)
	}
	switch {
	case len(q.Stages) == 1 && allRows(first, true):
		s.writeRows(w, id, lo, hi)
	case isCount(last) && (len(q.Stages) == 1 || allRows(first, false)):
		if len(q.Stages) == 1 {
			lo, hi = 0, int64(n)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("X-SODA2-Fields", `["count"]`)
		w.Header().Set("X-SODA2-Types", `["number"]`)
		fmt.Fprintf(w, "[{\"count\":\"%d\"}]\n", hi-lo)
	default:
		s.next.ServeHTTP(w, r)
	}
}

// isCount reports whether a stage is `SELECT count(*) [AS name]` alone.
func isCount(st *soql.Select) bool {
	return len(st.Selection) == 1 && st.Selection[0].Expr != nil && strings.EqualFold(soql.Format(st.Selection[0].Expr), "count(*)") &&
		st.Where == nil && len(st.GroupBy) == 0 && st.Having == nil && st.Search == nil
}

// allRows reports whether a stage is `SELECT * [ORDER BY :id [ASC]]`
// (ordered when ordered is set) with at most a LIMIT and an OFFSET.
func allRows(st *soql.Select, ordered bool) bool {
	if st.Distinct || st.Where != nil || len(st.GroupBy) > 0 || st.Having != nil || st.Search != nil {
		return false
	}
	if len(st.Selection) != 1 || st.Selection[0].Star != soql.AllStar {
		return false
	}
	if !ordered {
		return len(st.OrderBy) == 0 || len(st.OrderBy) == 1 && soql.Format(st.OrderBy[0].Expr) == ":id"
	}
	return len(st.OrderBy) == 1 && !st.OrderBy[0].Desc && soql.Format(st.OrderBy[0].Expr) == ":id"
}

// writeRows writes rows lo .. hi-1 as the portal would.
func (s *synthetic) writeRows(w http.ResponseWriter, id string, lo, hi int64) {
	for _, k := range []string{"Content-Type", "X-SODA2-Fields", "X-SODA2-Types"} {
		w.Header().Set(k, s.headers[id].Get(k))
	}
	sample := s.rows[id]
	bw := bufio.NewWriterSize(w, 256<<10)
	_ = bw.WriteByte('[')
	num := []byte(`"row":"`)
	for i := lo; i < hi; i++ {
		if i > lo {
			_, _ = bw.WriteString("\n,")
		}
		row := sample[i%int64(len(sample))]
		at := bytes.Index(row, num) + len(num)
		end := at + bytes.IndexByte(row[at:], '"')
		_, _ = bw.Write(row[:at])
		_, _ = bw.WriteString(strconv.FormatInt(i, 10))
		_, _ = bw.Write(row[end:])
	}
	_, _ = bw.WriteString("]\n")
	_ = bw.Flush()
}
