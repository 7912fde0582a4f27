package localportal_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A query SQLite cannot run is answered in a portal's words, not SQLite's
// ("Expression tree is too large (maximum depth 1000)"), and its log line
// keeps SQLite's message but not the whole of a 15 KB SoQL (a
// 64 KB log line was once seen). The query fails before it reads a row, so the sample
// datasets are built small (at the product's size, 250,000 incidents, the
// build took 195 s of the package's 220 s under the race detector).
func TestExecutionErrorsInOurWords(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	p, err := localportal.StartOffline(t.Context(), localportal.OfflineOptions{NoCache: true, SampleScale: 0.001,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	where := strings.Repeat("1=1 OR ", 2200) + "1=1"
	resp, err := p.Client().Get(p.URL() + "/resource/wg3w-h783.json?$where=" + url.QueryEscape(where))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "nested too deeply") ||
		strings.Contains(string(body), "Expression tree") || strings.Contains(string(body), "SQL logic") {
		t.Errorf("a query nested 2,200 deep = %d %.300s; want 400 saying it is nested too deeply, without SQLite's words", resp.StatusCode, body)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if len(line) > 8<<10 {
			t.Errorf("a log line of %d bytes (a %d-byte SoQL); want at most 8 KiB: %.200s…", len(line), len(where), line)
		}
		if strings.Contains(line, "query failed") && !strings.Contains(line, "Expression tree is too large") {
			t.Errorf("the log line of the failed query lacks SQLite's message: %.300s", line)
		}
	}
}
