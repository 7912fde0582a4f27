package dualresp_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

const resumeRows = 10_000

// rawExport GETs an export URL with the given Accept-Encoding (the
// transport's own gzip handling off) and returns the answer and its body
// as sent.
func rawExport(t *testing.T, u, acceptEncoding string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// An export from an offset is the whole export's rows from there, in the
// same order, with the format's own header and frame; an offset past the
// end is refused.
func TestExportOffset(t *testing.T) {
	t.Parallel()
	srv, _, _ := startServer(t, &streamExecutor{genExecutor: &genExecutor{Total: resumeRows}}, dualresp.Options{}, nil)
	u := create(t, srv, dualresp.Spec{}).URL()
	for _, format := range []string{"csv", "ndjson", "json"} {
		_, whole := rawExport(t, u+"/export?format="+format, "")
		resp, part := rawExport(t, u+"/export?format="+format+"&offset=7500", "")
		if resp.StatusCode != http.StatusOK || resp.Header.Get(dualresp.HeaderExportOffset) != "7500" || resp.Trailer.Get(dualresp.TrailerExportRows) != "2500" {
			t.Fatalf("%s offset 7500: %s, %s %q, trailer rows %q; want 200, offset 7500, 2500 rows", format, resp.Status, dualresp.HeaderExportOffset, resp.Header.Get(dualresp.HeaderExportOffset), resp.Trailer.Get(dualresp.TrailerExportRows))
		}
		wantRows := rowsOf(t, format, whole)[7500:]
		if diff := cmp.Diff(wantRows, rowsOf(t, format, part)); diff != "" {
			t.Errorf("%s offset 7500: rows (-want +got):\n%s", format, diff)
		}
		if format == "csv" && !bytes.HasPrefix(part, []byte("i,name,even,tags\n")) {
			t.Errorf("csv offset 7500 starts %.30q; want the header", part)
		}
	}
	if resp, body := rawExport(t, u+"/export?format=ndjson&offset=10000", ""); resp.StatusCode != http.StatusOK || len(body) != 0 {
		t.Errorf("offset at the end: %s with %d bytes; want 200, empty", resp.Status, len(body))
	}
	for _, bad := range []string{"offset=10001", "offset=-1", "offset=x", "offset=1&offset=2"} {
		if resp, body := rawExport(t, u+"/export?format=ndjson&"+bad, ""); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %s %s; want 400", bad, resp.Status, body)
		}
	}
}

// rowsOf splits an export into its rows, as text: lines (ndjson), records
// after the header (csv), compact array elements (json).
func rowsOf(t *testing.T, format string, body []byte) []string {
	t.Helper()
	var rows []string
	switch format {
	case "ndjson", "csv":
		for _, line := range strings.SplitAfter(string(body), "\n") {
			if line != "" {
				rows = append(rows, line)
			}
		}
		if format == "csv" && len(rows) > 0 {
			rows = rows[1:]
		}
	case "json":
		var elems []json.RawMessage
		if err := json.Unmarshal(body, &elems); err != nil {
			t.Fatalf("json export does not parse: %v (%.60q ... %.60q)", err, body, body[max(len(body)-60, 0):])
		}
		for _, e := range elems {
			var b bytes.Buffer
			_ = json.Compact(&b, e)
			rows = append(rows, b.String())
		}
	}
	return rows
}

// Exports and large pages are compressed as the request's Accept-Encoding
// allows (zstd before gzip, q=0 refuses), and decode to what an
// uncompressed answer holds, trailer included.
func TestExportCompressed(t *testing.T) {
	t.Parallel()
	srv, _, _ := startServer(t, &streamExecutor{genExecutor: &genExecutor{Total: resumeRows}}, dualresp.Options{}, nil)
	u := create(t, srv, dualresp.Spec{}).URL()
	_, plain := rawExport(t, u+"/export?format=csv", "")
	_, plainPage := rawExport(t, u+"?offset=0&limit=500", "")
	for _, tc := range []struct{ accept, coding string }{
		{"gzip", "gzip"},
		{"gzip, deflate, br, zstd", "zstd"},
		{"zstd;q=0, gzip;q=0.5", "gzip"},
		{"gzip;q=0", ""},
		{"br", ""},
	} {
		for _, target := range []struct {
			url  string
			want []byte
		}{{u + "/export?format=csv", plain}, {u + "?offset=0&limit=500", plainPage}} {
			resp, body := rawExport(t, target.url, tc.accept)
			if got := resp.Header.Get("Content-Encoding"); got != tc.coding {
				t.Errorf("GET %s with Accept-Encoding %q: Content-Encoding %q; want %q", target.url, tc.accept, got, tc.coding)
				continue
			}
			if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("GET %s: Vary %q; want Accept-Encoding", target.url, resp.Header.Get("Vary"))
			}
			got := decode(t, tc.coding, body)
			if !bytes.Equal(got, target.want) {
				t.Errorf("GET %s with %q: %d bytes decoded; want the %d bytes of the plain answer", target.url, tc.accept, len(got), len(target.want))
			}
			if tc.coding != "" && len(body) >= len(target.want)/2 {
				t.Errorf("GET %s with %q: %d bytes for %d plain; want it compressed", target.url, tc.accept, len(body), len(target.want))
			}
			if strings.Contains(target.url, "/export") && resp.Trailer.Get(dualresp.TrailerExportStatus) != "complete" {
				t.Errorf("GET %s with %q: trailer status %q; want complete", target.url, tc.accept, resp.Trailer.Get(dualresp.TrailerExportStatus))
			}
		}
	}
}

func decode(t *testing.T, coding string, body []byte) []byte {
	t.Helper()
	var r io.Reader
	switch coding {
	case "":
		return body
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding %s: %v", coding, err)
	}
	return b
}

// Typed rows give numbers and booleans from the column types; Socrata's
// strings stay the default; csv refuses the option.
func TestExportTyped(t *testing.T) {
	t.Parallel()
	rows := []json.RawMessage{
		json.RawMessage(`{"n":"53437","price":"1.5e3","flag":"true","name":"7","when":"2024-01-02T00:00:00.000"}`),
		json.RawMessage(`{"n":"n/a","flag":false,"name":"x"}`),
		json.RawMessage(`{"n":12,"price":null}`),
	}
	cols := []dualresp.Column{{Name: "n", Type: "number"}, {Name: "price", Type: "money"}, {Name: "flag", Type: "checkbox"},
		{Name: "name", Type: "text"}, {Name: "when", Type: "calendar_date"}}
	srv, _, _ := startServer(t, &rowsExecutor{rows: rows}, dualresp.Options{}, nil)
	u := create(t, srv, dualresp.Spec{Columns: cols}).URL()
	want := "{\"n\":53437,\"price\":1.5e3,\"flag\":true,\"name\":\"7\",\"when\":\"2024-01-02T00:00:00.000\"}\n" +
		"{\"n\":\"n/a\",\"flag\":false,\"name\":\"x\"}\n" +
		"{\"n\":12,\"price\":null}\n"
	if resp, body := rawExport(t, u+"/export?format=ndjson&typed=true", ""); string(body) != want {
		t.Errorf("typed ndjson (%s):\n%s\nwant\n%s", resp.Status, body, want)
	}
	if _, body := rawExport(t, u+"/export?format=ndjson", ""); !strings.HasPrefix(string(body), string(rows[0])) {
		t.Errorf("ndjson without typed starts %.60q; want the rows as given", body)
	}
	if resp, _ := rawExport(t, u+"/export?format=json&typed=true", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("typed json: %s", resp.Status)
	}
	for _, bad := range []string{"format=csv&typed=true", "format=ndjson&typed=yes"} {
		if resp, body := rawExport(t, u+"/export?"+bad, ""); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %s %s; want 400", bad, resp.Status, body)
		}
	}
	// The client asks for them with ExportOptions.Typed.
	p := parse(t, newClient(t, dualresp.ClientOptions{}), create(t, srv, dualresp.Spec{Columns: cols}))
	var buf bytes.Buffer
	if _, err := p.ExportWith(t.Context(), &buf, dualresp.ExportOptions{Format: "ndjson", Typed: true}); err != nil || buf.String() != want {
		t.Errorf("ExportWith(Typed) = %v:\n%s\nwant\n%s", err, buf.String(), want)
	}
}

// cutter cuts the first export download it serves after cut bytes of the
// body (the connection closes, as when a replica dies), and records the
// query of every export request.
type cutter struct {
	next    http.Handler
	cut     int
	mu      sync.Mutex
	queries []string
	done    atomic.Bool
}

func (c *cutter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/export") {
		c.next.ServeHTTP(w, r)
		return
	}
	c.mu.Lock()
	c.queries = append(c.queries, r.URL.RawQuery)
	c.mu.Unlock()
	if c.done.Swap(true) {
		c.next.ServeHTTP(w, r)
		return
	}
	c.next.ServeHTTP(&cutWriter{ResponseWriter: w, left: c.cut}, r)
}

type cutWriter struct {
	http.ResponseWriter
	left int
}

func (w *cutWriter) Write(p []byte) (int, error) {
	if len(p) >= w.left {
		_, _ = w.ResponseWriter.Write(p[:w.left])
		w.ResponseWriter.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection closes mid-body
	}
	w.left -= len(p)
	return w.ResponseWriter.Write(p)
}

// A download cut midway is resumed from its last complete row, through a
// new request with offset, and spliced into one file: every row once, in
// order, one CSV header, one JSON array; the resume is reported. Cuts fall
// at several places, gzip on and off.
func TestExportResumesAfterCut(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"csv", "ndjson", "json"} {
		for _, cut := range []int{1, 70_000, 200_003} {
			for _, gz := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s cut at %d gzip %t", format, cut, gz), func(t *testing.T) {
					t.Parallel()
					c := &cutter{cut: cut}
					if gz {
						c.cut = max(cut/10, 1) // rows compress about tenfold
					}
					c.done.Store(true) // not the uncut export to compare with
					srv, _, _ := startServer(t, &streamExecutor{genExecutor: &genExecutor{Total: resumeRows}}, dualresp.Options{},
						func(h http.Handler) http.Handler { c.next = h; return c })
					resp := create(t, srv, dualresp.Spec{})
					_, whole := rawExport(t, resp.URL()+"/export?format="+format, "")
					c.done.Store(false)
					c.queries = nil
					hc := &http.Client{Transport: &http.Transport{DisableCompression: !gz}}
					p := parse(t, newClient(t, dualresp.ClientOptions{HTTPClient: hc}), resp)
					var resumes []dualresp.Resume
					var out bytes.Buffer
					res, err := p.ExportWith(t.Context(), &out, dualresp.ExportOptions{Format: format,
						OnResume: func(r dualresp.Resume) { resumes = append(resumes, r) }})
					if err != nil {
						t.Fatalf("ExportWith: %v", err)
					}
					if diff := cmp.Diff(rowsOf(t, format, whole), rowsOf(t, format, out.Bytes())); diff != "" {
						t.Errorf("rows (-want +got):\n%s", diff)
					}
					if format != "json" && !bytes.Equal(out.Bytes(), whole) {
						t.Errorf("the spliced %s is not the uncut export byte for byte", format)
					}
					if res.Rows != resumeRows || res.Resumes != 1 || len(resumes) != 1 {
						t.Fatalf("ExportWith = %+v, resumes %+v; want %d rows, 1 resume", res, resumes, resumeRows)
					}
					wantQuery := "format=" + format
					if row := resumes[0].Row; row > 0 {
						wantQuery += fmt.Sprintf("&offset=%d", row)
					}
					if len(c.queries) != 2 || c.queries[1] != wantQuery {
						t.Errorf("export requests %q; want the second %q", c.queries, wantQuery)
					}
				})
			}
		}
	}
}

// flakyStream fails its first stream after failAfter rows (as a data
// source failing for good midway): the server ends that download with
// the marker of an incomplete export.
type flakyStream struct {
	*streamExecutor
	failAfter int64
	failed    atomic.Bool
}

func (f *flakyStream) Prepare(_ context.Context, q dualresp.Query) (dualresp.Plan, error) {
	return flakyPlan{f.plan(q), f}, nil
}

type flakyPlan struct {
	streamPlan
	f *flakyStream
}

func (p flakyPlan) Stream(ctx context.Context, req dualresp.PageRequest, fn func(json.RawMessage) error) error {
	if p.f.failed.Swap(true) {
		return p.streamPlan.Stream(ctx, req, fn)
	}
	var n int64
	return p.streamPlan.Stream(ctx, req, func(row json.RawMessage) error {
		if n++; n > p.f.failAfter {
			return errors.New("the data source went away")
		}
		return fn(row)
	})
}

// An export the server ends as incomplete is resumed too, and its marker
// never reaches the output.
func TestExportResumesAfterIncomplete(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"csv", "ndjson", "json"} {
		exec := &flakyStream{streamExecutor: &streamExecutor{genExecutor: &genExecutor{Total: resumeRows}}, failAfter: 1234}
		srv, _, _ := startServer(t, exec, dualresp.Options{}, nil)
		resp := create(t, srv, dualresp.Spec{})
		p := parse(t, newClient(t, dualresp.ClientOptions{}), resp)
		var out bytes.Buffer
		res, err := p.ExportWith(t.Context(), &out, dualresp.ExportOptions{Format: format})
		if err != nil || res.Resumes != 1 || res.Rows != resumeRows {
			t.Fatalf("%s: ExportWith = %+v, %v; want all %d rows after 1 resume", format, res, err, resumeRows)
		}
		if bytes.Contains(out.Bytes(), []byte("export_incomplete")) {
			t.Errorf("%s: the output holds the marker of an incomplete export", format)
		}
		_, whole := rawExport(t, resp.URL()+"/export?format="+format, "")
		if diff := cmp.Diff(rowsOf(t, format, whole), rowsOf(t, format, out.Bytes())); diff != "" {
			t.Errorf("%s rows (-want +got):\n%s", format, diff)
		}
	}
}

// Resumes are bounded: a server that cuts every download ends the export
// with an error naming the rows written, which are whole.
func TestExportResumesBounded(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv, _, _ := startServer(t, &streamExecutor{genExecutor: &genExecutor{Total: resumeRows}}, dualresp.Options{},
		func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/export") {
					n.Add(1)
					w = &cutWriter{ResponseWriter: w, left: 3_000}
				}
				h.ServeHTTP(w, r)
			})
		})
	p := parse(t, newClient(t, dualresp.ClientOptions{}), create(t, srv, dualresp.Spec{}))
	var out bytes.Buffer
	res, err := p.ExportWith(t.Context(), &out, dualresp.ExportOptions{Format: "ndjson", MaxResumes: 2})
	if err == nil || res.Resumes != 2 || n.Load() != 3 {
		t.Fatalf("ExportWith = %+v, %v after %d requests; want an error after 2 resumes, 3 requests", res, err, n.Load())
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("export with offset %d to continue", res.Rows)) {
		t.Errorf("error %q; want it to name the row to continue from (%d)", err, res.Rows)
	}
	if lines := strings.Count(out.String(), "\n"); int64(lines) != res.Rows || !strings.HasSuffix(out.String(), "\n") {
		t.Errorf("output has %d lines; want the %d whole rows reported", lines, res.Rows)
	}
}
