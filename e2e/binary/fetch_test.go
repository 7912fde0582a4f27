//go:build e2e

package binary

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A name fetch cannot write, or a --format that contradicts the name, is
// refused with exit 2 before anything is written (no request is made: the
// URL answers nothing).
func TestFetchRefusesNames(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "approved.xls"}, "cannot write"},
		{[]string{"-o", "all.zip"}, "cannot write"},
		{[]string{"-o", "x.parquet", "--format", "csv"}, "contradicts the file name"},
		{[]string{"--format", "xls", "-o", "x.out"}, "--format must be csv, ndjson, json, parquet, geojson, xlsx"},
		{[]string{"-o", "x.xlsx", "--format", "geojson"}, "contradicts the file name"},
		{[]string{"--resume", "x.parquet"}, "cannot be continued"},
		{[]string{"--resume", "x.csv.gz"}, "cannot be continued"},
	} {
		out := filepath.Join(dir, tc.args[1])
		args := append([]string{"fetch", "http://127.0.0.1:1/resources/0123456789abcdef0123456789abcdef"}, tc.args...)
		for i, a := range args {
			if a == tc.args[1] {
				args[i] = out
			}
		}
		cmd := exec.Command(binary(t), args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errorsAs(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("fetch %q: %v, stderr %q; want exit 2 saying %q", tc.args, err, stderr.String(), tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("fetch %q left %s behind (%v)", tc.args, out, err)
		}
	}
}

func errorsAs(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}

// fetchResult runs query --server on inst and returns the result's URL.
func fetchResult(t *testing.T, inst *instance, soql string) string {
	t.Helper()
	out, err := exec.Command(binary(t), "query", "rqzj-sfat", soql, "--server", inst.base, "--sample-size", "1").Output()
	if err != nil {
		t.Fatalf("query --server: %v\n%s", err, out)
	}
	var sc struct {
		Resource struct{ URL string } `json:"resource"`
	}
	if err := json.Unmarshal(out, &sc); err != nil || sc.Resource.URL == "" {
		t.Fatalf("query --server printed %s (%v)", out, err)
	}
	return sc.Resource.URL
}

// cutProxy passes requests to base, cutting the body of the first export
// it serves after cut bytes: the connection closes, as when a replica dies.
func cutProxy(t *testing.T, base string, cut int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	var exports atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/export") && exports.Add(1) == 1 {
			w = &cutAfter{ResponseWriter: w, left: cut}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &exports
}

type cutAfter struct {
	http.ResponseWriter
	left int
}

func (w *cutAfter) Write(p []byte) (int, error) {
	if len(p) >= w.left {
		_, _ = w.ResponseWriter.Write(p[:w.left])
		w.ResponseWriter.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	w.left -= len(p)
	return w.ResponseWriter.Write(p)
}

func (w *cutAfter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// The built binary: a download whose connection is cut midway is resumed
// from its last complete row and says so; .csv.gz writes gzip; --resume
// continues a partial file to the whole; every file equals the plain
// download.
func TestFetchResumesCompressesContinues(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	inst := startInstance(t)
	link := fetchResult(t, inst, "SELECT *")
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.csv")
	if out, err := exec.Command(binary(t), "fetch", link, "-o", whole).CombinedOutput(); err != nil {
		t.Fatalf("fetch: %v\n%s", err, out)
	}
	want, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	rows := bytes.Count(want, []byte("\n")) - 1
	if rows < 100 {
		t.Fatalf("the result has %d rows; the test wants a larger one", rows)
	}

	// A cut connection: resumed, said on stderr, the file whole.
	proxy, exports := cutProxy(t, inst.base, 2_000) // the download is gzip: a few KiB
	cutLink := proxy.URL + strings.TrimPrefix(link, inst.base)
	resumed := filepath.Join(dir, "resumed.csv")
	out, err := exec.Command(binary(t), "fetch", cutLink, "-o", resumed).CombinedOutput()
	if err != nil {
		t.Fatalf("fetch through a cut: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(resumed); !bytes.Equal(got, want) {
		t.Errorf("fetch through a cut connection wrote %d bytes; want the %d of the whole download", len(got), len(want))
	}
	if !strings.Contains(string(out), "resuming it from its last complete row") || exports.Load() != 2 {
		t.Errorf("fetch through a cut: %d export requests, output %q; want 2 and the resume said", exports.Load(), out)
	}

	// .csv.gz is gzip of the same bytes.
	gz := filepath.Join(dir, "all.csv.gz")
	if out, err := exec.Command(binary(t), "fetch", link, "-o", gz).CombinedOutput(); err != nil {
		t.Fatalf("fetch -o all.csv.gz: %v\n%s", err, out)
	}
	f, err := os.Open(gz)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("all.csv.gz is not gzip: %v", err)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, want) {
		t.Errorf("all.csv.gz holds %d bytes (%v); want the %d of the CSV", len(got), err, len(want))
	}

	// --resume: a file cut mid-row (as a killed fetch leaves it) is
	// continued to the whole.
	for _, format := range []string{"csv", "ndjson", "json"} {
		full := filepath.Join(dir, "full."+format)
		if out, err := exec.Command(binary(t), "fetch", link, "-o", full).CombinedOutput(); err != nil {
			t.Fatalf("fetch -o %s: %v\n%s", full, err, out)
		}
		fullBytes, _ := os.ReadFile(full)
		partial := filepath.Join(dir, "partial."+format)
		if err := os.WriteFile(partial, fullBytes[:len(fullBytes)*2/5], 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(binary(t), "fetch", link, "--resume", partial).CombinedOutput()
		if err != nil {
			t.Fatalf("fetch --resume %s: %v\n%s", partial, err, out)
		}
		got, _ := os.ReadFile(partial)
		if format == "json" {
			var a []map[string]any
			if err := json.Unmarshal(got, &a); err != nil {
				t.Fatalf("continued json does not parse: %v", err)
			}
			if !jsonEqual(string(got), string(fullBytes)) {
				t.Errorf("continued json has %d rows; want the whole download's rows", len(a))
			}
		} else if !bytes.Equal(got, fullBytes) {
			t.Errorf("fetch --resume %s: %d bytes; want the %d of the whole download", format, len(got), len(fullBytes))
		}
		if !strings.Contains(string(out), "continuing a partial download") {
			t.Errorf("fetch --resume %s said %q; want it to say it continues", format, out)
		}
	}
}
