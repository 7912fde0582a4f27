package mcpgo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo"
	"github.com/datasf-mcp/datasf-mcp/dualresp/spill"
)

// env is a dualresp Server behind a real HTTP listener.
type env struct {
	results *dualresp.Server
	blobs   *spill.Store
	ts      *httptest.Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, spill.StoreOptions{})
}

// newEnvWith is newEnv with a spill.Store of the given options.
func newEnvWith(t *testing.T, opts spill.StoreOptions) *env {
	t.Helper()
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	blobs := spill.NewStore(opts)
	srv, err := dualresp.New(dualresp.Options{BaseURL: ts.URL, CleanupInterval: -1,
		Executors: map[string]dualresp.Executor{spill.Kind: blobs}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	h = srv.Handler()
	return &env{results: srv, blobs: blobs, ts: ts}
}

// wrap returns handler with its large results spilled by a new Spiller.
func wrap(e *env, opts spill.Options, handler server.ToolHandlerFunc) server.ToolHandlerFunc {
	return mcpgo.NewSpiller(e.results, e.blobs, opts).Wrap(handler)
}

// item is row i of a generated tool result; about 150 bytes of JSON.
func item(i int) map[string]any {
	return map[string]any{
		"id":          fmt.Sprintf("ds-%05d", i),
		"name":        fmt.Sprintf("Dataset number %d", i),
		"description": strings.Repeat(fmt.Sprintf("words about %d; ", i), 4),
		"rank":        i,
	}
}

func items(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = item(i)
	}
	return out
}

// listResult is a tool result with n items in "results", its JSON also in
// the text content (as tools do for clients without structured content).
func listResult(n int) *mcp.CallToolResult {
	sc := map[string]any{"summary": fmt.Sprintf("%d datasets", n), "count": n, "results": items(n)}
	b, _ := json.Marshal(sc)
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(b))}, StructuredContent: sc}
}

func size(t *testing.T, v any) int {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// roundTrip returns v as generic JSON values.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// spillMeta returns the _meta spill information of a result, or nil.
func spillMeta(res *mcp.CallToolResult) map[string]any {
	if res == nil || res.Meta == nil {
		return nil
	}
	m, _ := res.Meta.AdditionalFields[spill.MetaKey].(map[string]any)
	return m
}

// fetchAll pages through a resource URL over HTTP with the given page size
// and returns every row.
func fetchAll(t *testing.T, url string, limit int) []any {
	t.Helper()
	var rows []any
	offset := 0
	for pages := 0; ; pages++ {
		if pages > 10_000 {
			t.Fatal("too many pages")
		}
		resp, err := http.Get(fmt.Sprintf("%s?offset=%d&limit=%d", url, offset, limit))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s offset %d: HTTP %d: %s", url, offset, resp.StatusCode, body)
		}
		var page struct {
			Data       []any  `json:"data"`
			HasNext    bool   `json:"has_next"`
			NextOffset *int   `json:"next_offset"`
			Total      int    `json:"total_count"`
			Error      string `json:"error"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, page.Data...)
		if !page.HasNext {
			return rows
		}
		offset = *page.NextOffset
	}
}

func TestSmallResultPassesThroughUntouched(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	orig := listResult(3)
	if n := size(t, orig); n < 900 || n > 4000 {
		t.Fatalf("test result is %d bytes; want about 1 KB", n)
	}
	h := wrap(e, spill.Options{}, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return orig, nil
	})
	got, err := h(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "search"}})
	if err != nil {
		t.Fatal(err)
	}
	if got != orig {
		t.Errorf("small result was replaced: %+v", got)
	}
	if diff := cmp.Diff(roundTrip(t, listResult(3)), roundTrip(t, got)); diff != "" {
		t.Errorf("small result changed (-want +got):\n%s", diff)
	}
}

func TestLargeResultIsSpilledAndFullyRetrievable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 1000
	orig := listResult(n)
	origSize := size(t, orig)
	if origSize < 250_000 || origSize > 350_000 {
		t.Fatalf("test result is %d bytes; want about 300 KB", origSize)
	}
	want := roundTrip(t, items(n)).([]any)
	sp := mcpgo.NewSpiller(e.results, e.blobs, spill.Options{})
	got := sp.Spill(t.Context(), "search", orig)
	gotSize := size(t, got)
	t.Logf("spilled a %d-byte result (%d items); the model gets %d bytes", origSize, n, gotSize)
	if gotSize > spill.DefaultMaxBytes {
		t.Errorf("replacement is %d bytes; want at most %d", gotSize, spill.DefaultMaxBytes)
	}
	meta := spillMeta(got)
	if meta == nil {
		t.Fatalf("no _meta[%q] in the replacement", spill.MetaKey)
	}
	if meta["item_count"] != json.Number(fmt.Sprint(n)) {
		t.Errorf("item_count = %v; want %d", meta["item_count"], n)
	}
	if meta["array_field"] != "results" {
		t.Errorf("array_field = %v; want results", meta["array_field"])
	}
	if meta["original_bytes"] != json.Number(fmt.Sprint(origSize)) {
		t.Errorf("original_bytes = %v; want %d", meta["original_bytes"], origSize)
	}
	// Without a schema the structured content is the summary shape.
	sc, _ := got.StructuredContent.(map[string]any)
	for _, k := range []string{"summary", "preview", "resource", "metadata"} {
		if _, ok := sc[k]; !ok {
			t.Errorf("structured content has no %q: keys %v", k, keysOf(sc))
		}
	}
	preview := roundTrip(t, sc["preview"]).([]any)
	if len(preview) == 0 || len(preview) > spill.DefaultPreviewItems {
		t.Errorf("preview has %d items; want 1..%d", len(preview), spill.DefaultPreviewItems)
	}
	if diff := cmp.Diff(want[:len(preview)], preview); diff != "" {
		t.Errorf("preview is not the first items (-want +got):\n%s", diff)
	}
	url, _ := meta["url"].(string)
	if !strings.HasPrefix(url, e.ts.URL+"/resources/") {
		t.Fatalf("url = %q; want one under %s/resources/", url, e.ts.URL)
	}
	if !strings.Contains(textOf(got), url) {
		t.Errorf("text content does not contain the url %s", url)
	}
	for _, limit := range []int{1, 7, 333, 1000} {
		rows := fetchAll(t, url, limit)
		if diff := cmp.Diff(want, rows); diff != "" {
			t.Errorf("paging by %d: rows differ from the original items (-want +got):\n%s", limit, diff)
		}
	}
	itemsSize := int64(size(t, items(n)))
	if c, b := sp.Stats(); c != 1 || b < itemsSize-n-1 || b > itemsSize {
		t.Errorf("Stats() = %d blobs, %d bytes; want 1 blob of the items' %d bytes less commas", c, b, itemsSize)
	}
}

func TestSortedPagesOfASpilledResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := mcpgo.NewSpiller(e.results, e.blobs, spill.Options{})
	got := sp.Spill(t.Context(), "search", listResult(500))
	url := spillMeta(got)["url"].(string)
	body := `{"offset":0,"limit":3,"sort":{"field":"rank","order":"desc"}}`
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct{ Data []map[string]any }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	var ranks []float64
	for _, r := range page.Data {
		ranks = append(ranks, r["rank"].(float64))
	}
	if diff := cmp.Diff([]float64{499, 498, 497}, ranks); diff != "" {
		t.Errorf("ranks sorted desc (-want +got):\n%s", diff)
	}
}

func TestPlainTextResultIsSpilledInParts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var sb strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&sb, "line %d: héllo wörld, some text to make it long enough\n", i)
	}
	text := sb.String()
	orig := mcp.NewToolResultText(text)
	got := mcpgo.NewSpiller(e.results, e.blobs, spill.Options{}).Spill(t.Context(), "logs", orig)
	if got == orig {
		t.Fatal("a large text result was not spilled")
	}
	if n := size(t, got); n > spill.DefaultMaxBytes {
		t.Errorf("replacement is %d bytes; want at most %d", n, spill.DefaultMaxBytes)
	}
	sc := got.StructuredContent.(map[string]any)
	pv, _ := sc["preview"].(string)
	if pv == "" || !strings.HasPrefix(text, strings.TrimSuffix(pv, dualresp.TruncationMark)) {
		t.Errorf("preview is not the start of the text: %.80q", pv)
	}
	rows := fetchAll(t, spillMeta(got)["url"].(string), 10)
	var rebuilt strings.Builder
	for i, r := range rows {
		m := r.(map[string]any)
		if m["part"] != float64(i) {
			t.Fatalf("row %d has part %v", i, m["part"])
		}
		rebuilt.WriteString(m["text"].(string))
	}
	if rebuilt.String() != text {
		t.Errorf("concatenated parts (%d bytes) differ from the original text (%d bytes)", rebuilt.Len(), len(text))
	}
	t.Logf("text result: %d bytes in %d parts", len(text), len(rows))
}

func TestObjectWithoutArrayIsOneRow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	obj := map[string]any{"name": "wide", "blob": strings.Repeat("x", 40_000), "n": 3}
	orig := &mcp.CallToolResult{StructuredContent: obj, Content: []mcp.Content{mcp.NewTextContent("wide")}}
	got := mcpgo.NewSpiller(e.results, e.blobs, spill.Options{}).Spill(t.Context(), "wide", orig)
	rows := fetchAll(t, spillMeta(got)["url"].(string), 100)
	if diff := cmp.Diff([]any{roundTrip(t, obj)}, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func TestThresholds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	opts := spill.Options{Tools: map[string]spill.ToolOptions{
		"tight":  {MaxBytes: 2000},
		"tokens": {MaxTokens: 500}, // 2,000 bytes
		"always": {Always: true},
		"never":  {Never: true},
	}}
	small := listResult(3)  // about 1 KB
	medium := listResult(8) // about 3 KB
	huge := listResult(1000)
	tests := []struct {
		tool   string
		res    *mcp.CallToolResult
		spills bool
	}{
		{"other", small, false},
		{"other", medium, false},
		{"other", huge, true},
		{"tight", small, false},
		{"tight", medium, true},
		{"tokens", medium, true},
		{"tokens", small, false},
		{"always", small, true},
		{"never", huge, false},
	}
	sp := mcpgo.NewSpiller(e.results, e.blobs, opts)
	for _, tt := range tests {
		got := sp.Spill(t.Context(), tt.tool, tt.res)
		if spilled := spillMeta(got) != nil; spilled != tt.spills {
			t.Errorf("Spill(%s, %d bytes) spilled = %v; want %v", tt.tool, size(t, tt.res), spilled, tt.spills)
		}
	}
}

func TestAlwaysSpillsSmallResultRetrievably(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := wrap(e, spill.Options{Tools: map[string]spill.ToolOptions{"get": {Always: true, PreviewItems: 1}}},
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return listResult(2), nil })
	got, err := h(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "get"}})
	if err != nil {
		t.Fatal(err)
	}
	m := spillMeta(got)
	if m == nil {
		t.Fatal("Always did not spill")
	}
	if m["preview_count"] != json.Number("1") {
		t.Errorf("preview_count = %v; want 1 (the tool's PreviewItems)", m["preview_count"])
	}
	if diff := cmp.Diff(roundTrip(t, items(2)), fetchAll(t, m["url"].(string), 1)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func TestErrorResultsAreNeverSpilled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	huge := mcp.NewToolResultError(strings.Repeat("error detail ", 50_000))
	h := wrap(e, spill.Options{Tools: map[string]spill.ToolOptions{"t": {Always: true}}},
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return huge, nil })
	got, err := h(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	if got != huge {
		t.Error("an isError result was replaced")
	}
	// A Go error passes through too.
	boom := fmt.Errorf("boom")
	h = wrap(e, spill.Options{}, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, boom })
	if _, err := h(t.Context(), mcp.CallToolRequest{}); err != boom {
		t.Errorf("handler error = %v; want %v", err, boom)
	}
}

func TestEvictedResultAnswersNotFound(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, spill.StoreOptions{MaxBlobs: 2, MaxBlobsPerOwner: 2})
	sp := mcpgo.NewSpiller(e.results, e.blobs, spill.Options{Tools: map[string]spill.ToolOptions{"t": {Always: true}}})
	var urls []string
	for i := range 3 {
		got := sp.Spill(t.Context(), "t", listResult(i+1))
		urls = append(urls, spillMeta(got)["url"].(string))
	}
	if c, _ := sp.Stats(); c != 2 {
		t.Errorf("Stats() count = %d; want 2", c)
	}
	resp, err := http.Get(urls[0] + "?offset=0&limit=10")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET evicted result: HTTP %d; want 404", resp.StatusCode)
	}
	if rows := fetchAll(t, urls[2], 10); len(rows) != 3 {
		t.Errorf("newest result has %d rows; want 3", len(rows))
	}
}

func TestSweepDropsBlobsOfDeletedRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := mcpgo.NewSpiller(e.results, e.blobs, spill.Options{Tools: map[string]spill.ToolOptions{"t": {Always: true}}})
	got := sp.Spill(t.Context(), "t", listResult(3))
	uri := spillMeta(got)["uri"].(string)
	if err := e.results.Delete(t.Context(), strings.TrimPrefix(uri, "resource://")); err != nil {
		t.Fatal(err)
	}
	n, err := sp.Sweep(t.Context())
	if err != nil || n != 1 {
		t.Errorf("Sweep() = %d, %v; want 1, nil", n, err)
	}
	if c, _ := sp.Stats(); c != 0 {
		t.Errorf("Stats() count = %d after sweep; want 0", c)
	}
}

func TestConcurrentSpills(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := mcpgo.NewSpiller(e.results, e.blobs, spill.Options{MaxBytes: 4096})
	h := sp.Wrap(func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := req.GetInt("n", 1)
		return listResult(n), nil
	})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Go(func() {
			for i := range 4 {
				n := 20 + g*4 + i
				res, err := h(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "t", Arguments: map[string]any{"n": n}}})
				if err != nil {
					errs <- err
					return
				}
				m := spillMeta(res)
				if m == nil {
					errs <- fmt.Errorf("n=%d not spilled", n)
					return
				}
				rows, err := fetchRows(m["url"].(string))
				if err != nil {
					errs <- err
					return
				}
				if len(rows) != n || rows[n-1]["rank"] != float64(n-1) {
					errs <- fmt.Errorf("n=%d: got %d rows", n, len(rows))
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// fetchRows fetches a whole result in one page, for use off the test
// goroutine.
func fetchRows(url string) ([]map[string]any, error) {
	resp, err := http.Get(url + "?offset=0&limit=10000")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var page struct{ Data []map[string]any }
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	return page.Data, json.NewDecoder(resp.Body).Decode(&page)
}

func TestStoreServesSpilledRows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sp := mcpgo.NewSpiller(e.results, e.blobs, spill.Options{Tools: map[string]spill.ToolOptions{"t": {Always: true}}})
	got := sp.Spill(t.Context(), "t", listResult(4))
	id := strings.TrimPrefix(spillMeta(got)["uri"].(string), "resource://")
	rec, err := e.results.Resource(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Query.Kind != spill.Kind {
		t.Errorf("record query kind = %q; want %q", rec.Query.Kind, spill.Kind)
	}
	plan, err := e.blobs.Prepare(t.Context(), rec.Query)
	if err != nil {
		t.Fatal(err)
	}
	n, err := plan.Count(t.Context())
	if err != nil || n != 4 {
		t.Errorf("Store.Count = %d, %v; want 4, nil", n, err)
	}
	var streamed int
	for _, err := range e.results.Rows(t.Context(), rec, dualresp.RowsOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		streamed++
	}
	if streamed != 4 {
		t.Errorf("Server.Rows gave %d rows; want 4", streamed)
	}
	other := &dualresp.Record{Query: dualresp.Query{Kind: "soql"}, TotalCount: 1}
	_, err = e.results.Page(t.Context(), other, dualresp.PageRequest{})
	if err == nil || !strings.Contains(err.Error(), `"soql"`) || !strings.Contains(err.Error(), "spill") {
		t.Errorf("Page(kind soql) error = %v; want one naming the kind and the known kinds", err)
	}
	if plan, err = e.blobs.Prepare(t.Context(), dualresp.Query{Kind: spill.Kind, Text: "nope"}); err == nil {
		_, err = plan.Count(t.Context())
	}
	if err != spill.ErrGone {
		t.Errorf("Count(unknown key) error = %v; want ErrGone", err)
	}
}

// mcpSession serves tools through a real MCPServer with output schema
// validation and the spill middleware, and returns a connected client.
func mcpSession(t *testing.T, e *env, opts spill.Options, tools ...server.ServerTool) *client.Client {
	t.Helper()
	s := server.NewMCPServer("test", "1.0", server.WithOutputSchemaValidation(),
		server.WithToolHandlerMiddleware(mcpgo.NewSpiller(e.results, e.blobs, opts).Middleware()))
	s.AddTools(tools...)
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "spill-test", Version: "1"}
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatal(err)
	}
	return c
}

const itemSchema = `{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"},
	"description":{"type":"string"},"rank":{"type":"integer"}},"required":["id","name","rank"],"additionalProperties":false}`

func TestOutputSchemaStaysValid(t *testing.T) {
	t.Parallel()
	open := `{"type":"object","properties":{"summary":{"type":"string"},"count":{"type":"integer"},
		"results":{"type":"array","items":` + itemSchema + `}},"required":["summary","count","results"]}`
	closed := `{"type":"object","properties":{"summary":{"type":"string"},"count":{"type":"integer"},
		"results":{"type":"array","items":` + itemSchema + `}},"required":["summary","count","results"],"additionalProperties":false}`
	tests := []struct {
		name      string
		schema    string
		wantField bool
	}{
		{"open schema", open, true},
		{"closed schema", closed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			const n = 1000
			tool := mcp.NewTool("search", mcp.WithRawOutputSchema(json.RawMessage(tt.schema)))
			c := mcpSession(t, e, spill.Options{}, server.ServerTool{Tool: tool,
				Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return listResult(n), nil }})
			var req mcp.CallToolRequest
			req.Params.Name = "search"
			res, err := c.CallTool(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("the spilled result failed validation: %s", textOf(res))
			}
			sc := roundTrip(t, res.StructuredContent).(map[string]any)
			if got := len(sc["results"].([]any)); got < 1 || got > spill.DefaultPreviewItems {
				t.Errorf("results has %d items; want the preview (1..%d)", got, spill.DefaultPreviewItems)
			}
			if sc["count"] != float64(n) {
				t.Errorf("count = %v; want %d (other fields kept)", sc["count"], n)
			}
			fr, hasField := sc[spill.FieldName].(map[string]any)
			if hasField != tt.wantField {
				t.Errorf("structured content has %s = %v; want %v", spill.FieldName, hasField, tt.wantField)
			}
			if hasField && !strings.HasPrefix(fr["url"].(string), e.ts.URL) {
				t.Errorf("%s.url = %v", spill.FieldName, fr["url"])
			}
			if !strings.Contains(textOf(res), e.ts.URL+"/resources/") {
				t.Error("text content has no link to the full result")
			}
			var link *mcp.ResourceLink
			for _, ct := range res.Content {
				if l, ok := ct.(mcp.ResourceLink); ok {
					link = &l
				}
			}
			if link == nil || !strings.HasPrefix(link.URI, "resource://") {
				t.Errorf("no resource_link content: %+v", res.Content)
			}
			if n := size(t, res); n > spill.DefaultMaxBytes {
				t.Errorf("result the model gets is %d bytes; want at most %d", n, spill.DefaultMaxBytes)
			}
			url := e.ts.URL + "/resources/" + strings.TrimPrefix(link.URI, "resource://")
			if diff := cmp.Diff(roundTrip(t, items(n)), fetchAll(t, url, 400)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestToolWithSchemaButNoStructuredContent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tool := mcp.NewTool("txt", mcp.WithRawOutputSchema(json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)))
	c := mcpSession(t, e, spill.Options{}, server.ServerTool{Tool: tool,
		Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strings.Repeat("abc\n", 20_000)), nil
		}})
	var req mcp.CallToolRequest
	req.Params.Name = "txt"
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.StructuredContent != nil {
		t.Errorf("IsError = %v, structured content = %v; want a text-only replacement", res.IsError, res.StructuredContent)
	}
	if !strings.Contains(textOf(res), "/resources/") {
		t.Error("no link in the text")
	}
}

func textOf(res *mcp.CallToolResult) string {
	var sb bytes.Buffer
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
