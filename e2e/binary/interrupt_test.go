//go:build e2e

package binary

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// stallProxy passes requests to base; the first export it serves stops
// after about n bytes of its body and waits until its client goes (as a
// download stalls midway), so that a signal reaches fetch mid-download
// however fast the machine.
func stallProxy(t *testing.T, base string, n int) *httptest.Server {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	var exports atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/export") && exports.Add(1) == 1 {
			w = &stallAfter{ResponseWriter: w, left: n, gone: r.Context().Done()}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

type stallAfter struct {
	http.ResponseWriter
	left int
	gone <-chan struct{}
}

func (w *stallAfter) Write(p []byte) (int, error) {
	if len(p) >= w.left {
		_, _ = w.ResponseWriter.Write(p[:w.left])
		w.ResponseWriter.(http.Flusher).Flush()
		<-w.gone // the client went: the test's signal stopped it
		return 0, errors.New("client gone")
	}
	w.left -= len(p)
	return w.ResponseWriter.Write(p)
}

func (w *stallAfter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// interrupted runs the binary with args and env, sends sig once file
// holds at least min bytes, and returns its exit code and stderr.
func interrupted(t *testing.T, sig syscall.Signal, file string, min int64, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), "DATASF_REST_TOKEN=", "DATASF_SERVER=", "DATASF_OFFLINE=")
	var stderr bytes.Buffer
	cmd.Stderr = &lockedWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(2 * time.Minute)
	for sent := false; ; {
		select {
		case err := <-done:
			var exit *exec.ExitError
			switch {
			case err == nil:
				return 0, stderr.String()
			case errors.As(err, &exit):
				return exit.ExitCode(), stderr.String()
			}
			t.Fatalf("datasf-mcp %q: %v", args, err)
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("datasf-mcp %q: no end within 2 minutes (signal sent: %v)\n%s", args, sent, stderr.String())
		case <-time.After(10 * time.Millisecond): // polling the file a child process writes
			if sent {
				continue
			}
			// The file itself (a build that writes no .part) counts too:
			// the signal then shows what it leaves.
			for _, f := range []string{file, strings.TrimSuffix(file, ".part")} {
				if fi, err := os.Stat(f); err == nil && fi.Size() >= min {
					if err := cmd.Process.Signal(sig); err != nil {
						t.Fatal(err)
					}
					sent = true
					break
				}
			}
		}
	}
}

// stoppedLine is the line an interrupted download prints: the rows in the
// .part file, of the total, and the command that continues it.
var stoppedLine = regexp.MustCompile(`datasf-mcp: interrupted by (SIG[A-Z]+): (\d+) of (\d+) rows are in (\S+) \(.*\); to continue: datasf-mcp (.*)`)

// posixWords splits a command line printed with shellQuote.
func posixWords(t *testing.T, line string) []string {
	t.Helper()
	var (
		words []string
		cur   strings.Builder
		in    bool // inside single quotes
		any   bool
	)
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\'':
			in, any = !in, true
		case c == ' ' && !in:
			if any {
				words = append(words, cur.String())
				cur.Reset()
				any = false
			}
		case c == '\\' && !in && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			any = true
		default:
			cur.WriteByte(c)
			any = true
		}
	}
	if in {
		t.Fatalf("unbalanced quotes in %q", line)
	}
	if any {
		words = append(words, cur.String())
	}
	return words
}

// dataRows counts a download's rows: the lines of an NDJSON file, of a CSV
// file after its header (the columns here hold no line breaks).
func dataRows(t *testing.T, path, format string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := bytes.Count(b, []byte("\n"))
	if format == "csv" {
		n--
	}
	return n
}

// checkStopped checks what an interrupted download left: its exit status,
// the line on stderr (rows written, the command to continue), no final
// file and a .part file holding exactly the rows it says. It returns the
// command that continues it.
func checkStopped(t *testing.T, code int, stderr string, sig syscall.Signal, final, format string, total int) []string {
	t.Helper()
	name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
	if want := 128 + int(sig); code != want {
		t.Errorf("interrupted by %s: exit %d; want %d\n%s", name, code, want, stderr)
	}
	if _, err := os.Stat(final); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("interrupted by %s: %s exists (%v); want only %s.part until the download is complete", name, final, err, final)
	}
	var m []string
	for _, line := range strings.FieldsFunc(stderr, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if m = stoppedLine.FindStringSubmatch(line); m != nil {
			break
		}
	}
	if m == nil {
		t.Fatalf("interrupted by %s: stderr has no line with the rows written and the command to continue:\n%s", name, stderr)
	}
	rows, _ := strconv.Atoi(m[2])
	all, _ := strconv.Atoi(m[3])
	if m[1] != name || m[4] != final+".part" || all != total || rows <= 0 || rows >= total {
		t.Errorf("interrupted by %s: the line says %s, %d of %d rows in %s; want %s, some of %d rows in %s.part", name, m[1], rows, all, m[4], name, total, final)
	}
	if got := dataRows(t, final+".part", format); got != rows {
		t.Errorf("%s.part holds %d rows; the line says %d", final, got, rows)
	}
	return posixWords(t, m[5])
}

// fetch -o FILE stopped by SIGINT, and query --all -o FILE by SIGTERM,
// through the built binary: exit 130 and 143, a line on stderr with the
// rows written and the --resume command, no FILE but FILE.part; that
// command completes FILE with every row exactly once (the whole download,
// byte for byte).
func TestInterruptedDownloadsResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	const soql = "SELECT incident_id, incident_category, police_district, incident_datetime"

	t.Run("fetch", func(t *testing.T) {
		t.Parallel()
		inst := startInstance(t)
		res := inst.query(t, "wg3w-h783", soql)
		link := res["resource"].(map[string]any)["url"].(string)
		total := int(res["metadata"].(map[string]any)["total_count"].(float64))
		dir := t.TempDir()
		whole := filepath.Join(dir, "whole.csv")
		if out, err := exec.Command(binary(t), "fetch", link, "-o", whole).CombinedOutput(); err != nil {
			t.Fatalf("fetch: %v\n%s", err, out)
		}
		want, _ := os.ReadFile(whole)

		proxy := stallProxy(t, inst.base, 64<<10) // the download is gzip: some thousand rows
		stalled := proxy.URL + strings.TrimPrefix(link, inst.base)
		final := filepath.Join(dir, "incidents.csv")
		code, stderr := interrupted(t, syscall.SIGINT, final+".part", 10<<10, "fetch", stalled, "-o", final)
		args := checkStopped(t, code, stderr, syscall.SIGINT, final, "csv", total)
		if len(args) == 0 || args[0] != "fetch" || !strings.Contains(strings.Join(args, " "), "--resume "+final+".part") {
			t.Fatalf("the command to continue is %q; want fetch ... --resume %s.part", args, final)
		}
		out, err := exec.Command(binary(t), args...).CombinedOutput()
		if err != nil {
			t.Fatalf("datasf-mcp %q: %v\n%s", args, err, out)
		}
		got, _ := os.ReadFile(final)
		if !bytes.Equal(got, want) {
			t.Errorf("continued %s: %d bytes, %d rows; want the whole download's %d bytes, %d rows", final, len(got), bytes.Count(got, []byte("\n"))-1, len(want), total)
		}
		if _, err := os.Stat(final + ".part"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s.part is left after the download completed (%v)", final, err)
		}
	})

	t.Run("query --all", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		final := filepath.Join(dir, "incidents.ndjson")
		// Offline, the query runs in the command's own process: 250,000
		// rows take seconds; the signal goes after the first few.
		code, stderr := interrupted(t, syscall.SIGTERM, final+".part", 256<<10,
			"query", "wg3w-h783", soql, "--offline", "--all", "-o", final, "--log-level", "warn")
		args := checkStopped(t, code, stderr, syscall.SIGTERM, final, "ndjson", 250000)
		if len(args) == 0 || args[0] != "query" || !strings.Contains(strings.Join(args, " "), "--resume "+final+".part") {
			t.Fatalf("the command to continue is %q; want query ... --resume %s.part", args, final)
		}
		cmd := exec.Command(binary(t), args...)
		cmd.Env = append(os.Environ(), "DATASF_REST_TOKEN=", "DATASF_SERVER=", "DATASF_OFFLINE=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("datasf-mcp %q: %v\n%s", args, err, out)
		}
		whole := filepath.Join(dir, "whole.ndjson")
		if out, code := runBinaryCode(t, "query", "wg3w-h783", soql, "--offline", "--all", "-o", whole, "--log-level", "warn"); code != 0 {
			t.Fatalf("query --all: exit %d\n%s", code, out)
		}
		got, _ := os.ReadFile(final)
		want, _ := os.ReadFile(whole)
		if !bytes.Equal(got, want) {
			t.Errorf("continued %s: %d bytes, %d rows; want the whole download's %d bytes, %d rows", final, len(got), bytes.Count(got, []byte("\n")), len(want), bytes.Count(want, []byte("\n")))
		}
		if _, err := os.Stat(final + ".part"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s.part is left after the download completed (%v)", final, err)
		}
	})
}

// runBinaryCode runs the binary and returns its stderr and exit code.
func runBinaryCode(t *testing.T, args ...string) (string, int) {
	t.Helper()
	_, stderr, code := runBinary(t, args...)
	return stderr, code
}
