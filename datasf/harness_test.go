package datasf_test

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
	"github.com/datasf-mcp/datasf-mcp/internal/fixtures/fixtureportal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// update rewrites the golden files in testdata/ instead of comparing.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// harness is the product assembled for a test (package datasftest): a
// fake portal serving the real fixtures, the product with its REST API
// on a loopback listener, and an initialized in-process MCP client session
// (with output schema validation, so structured content that does not
// match a tool's outputSchema fails the call).
type harness struct {
	fake *socratatest.Server
	env  *datasftest.Env
	srv  *datasf.Service
	mcp  *client.Client
	init *mcp.InitializeResult
}

// harnessOptions configures the Socrata client of a harness. The zero value
// is the client's defaults.
type harnessOptions struct {
	timeout    time.Duration
	maxRetries int
}

// fixtureDirs returns the catalog and datasets directories of the
// repository's fixtures (testdata/).
func fixtureDirs(tb testing.TB) (catalogDir, datasetsDir string) {
	tb.Helper()
	return fixtures.Path(tb, "catalog"), fixtures.Path(tb, "datasets")
}

// buildHarness assembles a harness over a new fake portal of the
// fixtures, which are loaded once per test binary
// (fixtureportal.Start). closeAll releases everything it
// started, also when err is not nil.
func buildHarness(opts harnessOptions) (h *harness, closeAll func(), err error) {
	ctx := context.Background()
	h = &harness{}
	var closers []func()
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	if h.fake, err = fixtureportal.Start(socratatest.Options{}); err != nil {
		return nil, closeAll, err
	}
	closers = append(closers, h.fake.Close)
	h.env, err = datasftest.Start(ctx, datasftest.Options{
		PortalURL: h.fake.URL(),
		// An MCP Apps host, which sees every tool (app_test.go checks
		// what other clients see).
		Capabilities: appHostCapabilities,
		Config: datasf.Config{
			Socrata: socrata.Options{Timeout: opts.timeout, MaxRetries: opts.maxRetries},
		},
	})
	if err != nil {
		return nil, closeAll, err
	}
	closers = append(closers, func() { _ = h.env.Close() })
	h.srv, h.mcp, h.init = h.env.Service, h.env.MCP, h.env.Init
	return h, closeAll, nil
}

// newHarness builds a harness of the test's own, closed when the test ends:
// its own product (empty caches) and fake portal (faults, latency, request
// counts), over the fixtures every harness shares. Use it when the test
// injects faults, counts requests or needs the product's caches empty.
func newHarness(t *testing.T, opts harnessOptions) *harness {
	t.Helper()
	h, closeAll, err := buildHarness(opts)
	t.Cleanup(closeAll)
	if err != nil {
		t.Fatalf("building the harness: %v", err)
	}
	return h
}

// stubPortal is a portal with no data, for calls that must be answered
// without reaching the portal (argument and SoQL syntax errors): it counts
// the requests it gets and answers each with Socrata's not-found envelope.
type stubPortal struct {
	*httptest.Server
	requests atomic.Int64
}

// newStubHarness builds a harness of the test's own over a stubPortal
// (h.fake is nil), closed when the test ends. The test fails, once it and
// its subtests end, if any call reached the portal.
func newStubHarness(t *testing.T) *harness {
	t.Helper()
	stub := &stubPortal{}
	stub.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stub.requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"code":"not_found","error":true,"message":"stub portal: no data"}`) //nolint:errcheck // the client went away
	}))
	t.Cleanup(stub.Close)
	env := datasftest.New(t, datasftest.Options{PortalURL: stub.URL, Capabilities: appHostCapabilities})
	t.Cleanup(func() {
		if n := stub.requests.Load(); n != 0 {
			t.Errorf("the calls made %d portal requests; want none (they are refused before any)", n)
		}
	})
	return &harness{env: env, srv: env.Service, mcp: env.MCP, init: env.Init}
}

// shared is a harness built once and used read-only by tests that neither
// change the fake portal nor count its requests.
var shared struct {
	once     sync.Once
	h        *harness
	closeAll func()
	err      error
}

func sharedHarness(t *testing.T) *harness {
	t.Helper()
	shared.once.Do(func() {
		shared.h, shared.closeAll, shared.err = buildHarness(harnessOptions{})
	})
	if shared.err != nil {
		t.Fatalf("building the shared harness: %v", shared.err)
	}
	return shared.h
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if shared.closeAll != nil {
		shared.closeAll()
	}
	os.Exit(code)
}

// call runs a tool with the given arguments (any JSON value) through the MCP
// session. A protocol error fails the test: tools answer problems as results.
func (h *harness) call(t *testing.T, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := h.mcp.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", tool, args, err)
	}
	return res
}

// toolError is the JSON text of an isError result.
type toolError struct {
	Error     string         `json:"error"`
	ErrorType string         `json:"error_type"`
	Details   map[string]any `json:"details"`
}

// errorOf checks that res is an isError result whose first content item is
// text holding JSON {error, error_type, details}, and returns it.
func errorOf(t *testing.T, tool string, args any, res *mcp.CallToolResult) toolError {
	t.Helper()
	if !res.IsError {
		t.Fatalf("%s(%v) = success %s; want an isError result", tool, args, mustJSON(t, res.StructuredContent))
	}
	if len(res.Content) == 0 {
		t.Fatalf("%s(%v): error result has no content", tool, args)
	}
	tc, ok := mcp.AsTextContent(res.Content[0])
	if !ok {
		t.Fatalf("%s(%v): error content[0] is %T, want text", tool, args, res.Content[0])
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(tc.Text), &raw); err != nil {
		t.Fatalf("%s(%v): error text %q is not a JSON object: %v", tool, args, tc.Text, err)
	}
	for _, k := range []string{"error", "error_type"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("%s(%v): error text %s lacks %q", tool, args, tc.Text, k)
		}
	}
	if _, ok := raw["message"]; ok {
		t.Errorf("%s(%v): error text %s says its error twice (error and message)", tool, args, tc.Text)
	}
	var e toolError
	if err := json.Unmarshal([]byte(tc.Text), &e); err != nil {
		t.Fatalf("%s(%v): error text %q: %v", tool, args, tc.Text, err)
	}
	if e.Error == "" {
		t.Errorf("%s(%v): error text %s has an empty error", tool, args, tc.Text)
	}
	switch e.ErrorType {
	case "validation", "not_found", "rate_limit", "timeout", "api_error":
	default:
		t.Errorf("%s(%v): error_type %q is not one of validation, not_found, rate_limit, timeout, api_error", tool, args, e.ErrorType)
	}
	return e
}

// structured checks that res is a successful result whose first content
// item is text and decodes its structuredContent into v.
func structured(t *testing.T, tool string, args any, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := mcp.AsTextContent(res.Content[0]); ok {
				text = tc.Text
			}
		}
		t.Fatalf("%s(%v) = isError %s; want success", tool, args, text)
	}
	if len(res.Content) == 0 {
		t.Fatalf("%s(%v): result has no content", tool, args)
	}
	if tc, ok := mcp.AsTextContent(res.Content[0]); !ok || tc.Text == "" {
		t.Errorf("%s(%v): content[0] is %T, want non-empty text", tool, args, res.Content[0])
	}
	if res.StructuredContent == nil {
		t.Fatalf("%s(%v): no structuredContent", tool, args)
	}
	b := mustJSON(t, res.StructuredContent)
	if err := json.Unmarshal([]byte(b), v); err != nil {
		t.Fatalf("%s(%v): structuredContent %s: %v", tool, args, b, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%T): %v", v, err)
	}
	return string(b)
}

// getJSON GETs url over HTTP and decodes its JSON body into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(getText(t, url)), v); err != nil {
		t.Fatalf("GET %s: decoding: %v", url, err)
	}
}

// getText GETs url over HTTP and returns its body; any status but 200 OK
// fails the test.
func getText(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	return string(b)
}

// --- fixtures read by the tests themselves, independently of the server ---

// fixtureFile returns the one dataset fixture file for id ending in suffix
// (".json" excludes the .rows.json and .view.json files).
func fixtureFile(t *testing.T, id, suffix string) string {
	t.Helper()
	_, dir := fixtureDirs(t)
	matches, err := filepath.Glob(filepath.Join(dir, id+"*"+suffix))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range matches {
		if suffix == ".json" && (strings.HasSuffix(m, ".rows.json") || strings.HasSuffix(m, ".view.json")) {
			continue
		}
		return m
	}
	t.Fatalf("no fixture %s*%s in %s", id, suffix, dir)
	return ""
}

// resourceRows reads a Resource API JSON fixture (a JSON array of rows).
func resourceRows(t *testing.T, id string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(fixtureFile(t, id, ".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatalf("fixture %s: %v", id, err)
	}
	return rows
}

// rowsJSONCount counts the rows of a legacy rows.json fixture.
func rowsJSONCount(t *testing.T, id string) int {
	t.Helper()
	b, err := os.ReadFile(fixtureFile(t, id, ".rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("fixture %s rows.json: %v", id, err)
	}
	return len(doc.Data)
}

// fixtureColumn is a column as a catalog line or Views document gives it.
type fixtureColumn struct {
	Name        string `json:"name"`
	FieldName   string `json:"fieldName"`
	DataType    string `json:"dataTypeName"`
	Description string `json:"description"`
	Position    int    `json:"position"`
}

// catalogEntry is one line of the catalog fixture.
type catalogEntry struct {
	Endpoint      string          `json:"endpoint"`
	Title         string          `json:"title"`
	Description   string          `json:"description"`
	Category      string          `json:"category"`
	RowsUpdatedAt json.RawMessage `json:"rows_updated_at"`
	Columns       []fixtureColumn `json:"columns"`
}

// catalog reads every line of the catalog fixtures.
func catalog(t *testing.T) []catalogEntry {
	t.Helper()
	dir, _ := fixtureDirs(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []catalogEntry
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			var e catalogEntry
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("%s line %d: %v", f, i+1, err)
			}
			out = append(out, e)
		}
	}
	return out
}

func catalogEntryFor(t *testing.T, id string) catalogEntry {
	t.Helper()
	for _, e := range catalog(t) {
		if e.Endpoint == id {
			return e
		}
	}
	t.Fatalf("dataset %s is not in the catalog fixture", id)
	return catalogEntry{}
}

// viewColumns reads the columns of a Views API document fixture, system
// columns (":id", …) left out.
func viewColumns(t *testing.T, id string) (name string, cols []fixtureColumn) {
	t.Helper()
	b, err := os.ReadFile(fixtureFile(t, id, ".view.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Name    string          `json:"name"`
		Columns []fixtureColumn `json:"columns"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("fixture %s view.json: %v", id, err)
	}
	for _, c := range doc.Columns {
		if !strings.HasPrefix(c.FieldName, ":") {
			cols = append(cols, c)
		}
	}
	return doc.Name, cols
}

// rowsJSON reads a legacy rows.json fixture into maps keyed by field name
// (system columns left out, null cells omitted).
func rowsJSON(t *testing.T, id string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(fixtureFile(t, id, ".rows.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Meta struct {
			View struct {
				Columns []struct {
					FieldName string `json:"fieldName"`
				} `json:"columns"`
			} `json:"view"`
		} `json:"meta"`
		Data [][]any `json:"data"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("fixture %s rows.json: %v", id, err)
	}
	rows := make([]map[string]any, len(doc.Data))
	for i, cells := range doc.Data {
		rows[i] = map[string]any{}
		for j, c := range doc.Meta.View.Columns {
			if j < len(cells) && cells[j] != nil && !strings.HasPrefix(c.FieldName, ":") {
				rows[i][c.FieldName] = cells[j]
			}
		}
	}
	return rows
}
