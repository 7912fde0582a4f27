package localportal

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
)

// shared is one server loaded with every fixture dataset and the catalog,
// used read-only by the tests that need real data.
var shared struct {
	once sync.Once
	srv  *Emulator
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Close()
	}
	os.Exit(code)
}

// newPortal returns a started, empty portal closed when t ends.
func newPortal(t *testing.T) *Emulator {
	t.Helper()
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

// fixtureServer returns the shared server holding all fixture data.
func fixtureServer(t *testing.T) *Emulator {
	t.Helper()
	catalogDir := fixtures.Path(t, "catalog")
	datasetsDir := fixtures.Path(t, "datasets")
	shared.once.Do(func() {
		srv, err := New(Options{})
		if err != nil {
			shared.err = err
			return
		}
		shared.srv = srv
		if shared.err = srv.Start(); shared.err != nil {
			return
		}
		catalogs, _ := filepath.Glob(filepath.Join(catalogDir, "*.jsonl"))
		_, shared.err = srv.LoadFiles(context.Background(), append(catalogs, datasetsDir), LoadOptions{})
	})
	if shared.err != nil {
		t.Fatalf("loading fixtures: %v", shared.err)
	}
	return shared.srv
}

// fixtureFile returns the path of the fixture dataset file for id with suffix.
func fixtureFile(t *testing.T, id, suffix string) string {
	t.Helper()
	dir := fixtures.Path(t, "datasets")
	matches, _ := filepath.Glob(filepath.Join(dir, id+"*"+suffix))
	for _, m := range matches {
		if suffix == ".json" && (strings.HasSuffix(m, ".rows.json") || strings.HasSuffix(m, ".view.json")) {
			continue
		}
		return m
	}
	t.Fatalf("no fixture file %s*%s in %s", id, suffix, dir)
	return ""
}

// readResourceRows reads a Resource API JSON fixture independently of the server.
func readResourceRows(t *testing.T, id string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(fixtureFile(t, id, ".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func get(t *testing.T, srv *Emulator, path string, params url.Values) response {
	t.Helper()
	u := srv.URL() + path
	if len(params) > 0 {
		u += "?" + params.Encode()
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", u, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// query runs one $query and returns the rows, failing unless the status is 200.
func query(t *testing.T, srv *Emulator, id, soqlText string) []map[string]any {
	t.Helper()
	r := get(t, srv, "/resource/"+id+".json", url.Values{"$query": {soqlText}})
	if r.status != http.StatusOK {
		t.Fatalf("query %s %q: status %d: %s", id, soqlText, r.status, r.body)
	}
	return decodeRows(t, r.body)
}

func decodeRows(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var rows []map[string]any
	if err := json.Unmarshal(body, &rows); err != nil {
		t.Fatalf("decoding rows: %v: %.300s", err, body)
	}
	return rows
}

func decodeObject(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("decoding object: %v: %.300s", err, body)
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
