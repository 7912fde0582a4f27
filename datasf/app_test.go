package datasf_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/datasf/datasftest"
)

// appHostCapabilities are the capabilities of an MCP Apps host.
var appHostCapabilities = mcp.ClientCapabilities{Extensions: map[string]any{
	datasf.AppExtension: map[string]any{"mimeTypes": []any{datasf.AppMIMEType}},
}}

// modelToolNames are the tools of the tool list that the model sees: all
// but the app-only ones (visibility ["app"]). The README's tool table and
// the package comment list these.
func modelToolNames(t *testing.T, h *harness) []string {
	t.Helper()
	var names []string
	for _, tool := range h.srv.Tools() {
		if ui := toolUI(tool.Tool); ui != nil && len(ui.Visibility) > 0 && !slices.Contains(ui.Visibility, "model") {
			continue
		}
		names = append(names, tool.Tool.Name)
	}
	return names
}

type uiMeta struct {
	ResourceURI string   `json:"resourceUri"`
	Visibility  []string `json:"visibility"`
}

// toolUI returns a tool's _meta.ui as a client reads it, or nil.
func toolUI(tool mcp.Tool) *uiMeta {
	b, err := json.Marshal(tool)
	if err != nil {
		return nil
	}
	var v struct {
		Meta struct {
			UI *uiMeta `json:"ui"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(b, &v)
	return v.Meta.UI
}

func listedTools(t *testing.T, c *client.Client) map[string]mcp.Tool {
	t.Helper()
	res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	m := map[string]mcp.Tool{}
	for _, tool := range res.Tools {
		m[tool.Name] = tool
	}
	return m
}

// TestAppOnlyForAppsHosts: an MCP Apps host is told about the extension
// and lists the app-only tool; any other client is not, neither lists nor
// calls it, and gets the same query_datasf payload.
func TestAppOnlyForAppsHosts(t *testing.T) {
	t.Parallel()
	host := sharedHarness(t)
	plain := datasftest.New(t, datasftest.Options{PortalURL: host.fake.URL()})

	if _, ok := host.init.Capabilities.Extensions[datasf.AppExtension]; !ok {
		t.Errorf("initialize of an MCP Apps host: capabilities.extensions = %v; want %s", host.init.Capabilities.Extensions, datasf.AppExtension)
	}
	if ext := plain.Init.Capabilities.Extensions; len(ext) != 0 {
		t.Errorf("initialize of a client without the extension: capabilities.extensions = %v; want none", ext)
	}

	hostTools, plainTools := listedTools(t, host.mcp), listedTools(t, plain.MCP)
	if ui := toolUI(hostTools["result_page"]); ui == nil || ui.ResourceURI != datasf.AppURI || !slices.Equal(ui.Visibility, []string{"app"}) {
		t.Errorf("result_page _meta.ui = %+v; want resourceUri %s, visibility [app]", ui, datasf.AppURI)
	}
	if _, ok := plainTools["result_page"]; ok {
		t.Error("a client without the extension lists result_page; want it hidden")
	}
	for _, name := range []string{"query_datasf", "analyze_results"} {
		for who, tools := range map[string]map[string]mcp.Tool{"host": hostTools, "plain": plainTools} {
			if ui := toolUI(tools[name]); ui == nil || ui.ResourceURI != datasf.AppURI || len(ui.Visibility) != 0 {
				t.Errorf("%s: %s _meta.ui = %+v; want resourceUri %s for model and app", who, name, ui, datasf.AppURI)
			}
		}
	}
	if got, want := len(plainTools), len(modelToolNames(t, host)); got != want {
		t.Errorf("a client without the extension lists %d tools; want the %d the model sees", got, want)
	}

	// The model's payload does not depend on the host.
	args := map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT objectid, applicant, status LIMIT 40"}
	hostRes := host.call(t, "query_datasf", args)
	plainRes, err := plain.Call(t.Context(), "query_datasf", args)
	if err != nil {
		t.Fatal(err)
	}
	hb, pb := mustJSON(t, hostRes), mustJSON(t, plainRes)
	if d := len(hb) - len(pb); d < -len(pb)/50 || d > len(pb)/50 {
		t.Errorf("query_datasf result: %d bytes for an MCP Apps host, %d for another client; want the same size (within 2%%)", len(hb), len(pb))
	}

	// A client without the extension cannot call the app's tool.
	var q struct {
		Resource struct{ URI string } `json:"resource"`
	}
	structured(t, "query_datasf", args, plainRes, &q)
	res, err := plain.Call(t.Context(), "result_page", map[string]any{"result": q.Resource.URI})
	if err == nil && !res.IsError {
		t.Errorf("result_page from a client without the extension = %s; want it refused", mustJSON(t, res))
	}
}

// TestAppResource reads the app: one self-contained HTML document of the
// MCP App MIME type, allowed to reach the REST API, loading nothing.
func TestAppResource(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	req := mcp.ReadResourceRequest{}
	req.Params.URI = datasf.AppURI
	res, err := h.mcp.ReadResource(t.Context(), req)
	if err != nil {
		t.Fatalf("resources/read %s: %v", datasf.AppURI, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %d contents; want 1", datasf.AppURI, len(res.Contents))
	}
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok {
		t.Fatalf("contents are %T; want text", res.Contents[0])
	}
	if tc.URI != datasf.AppURI || tc.MIMEType != datasf.AppMIMEType {
		t.Errorf("contents uri %q, mimeType %q; want %q, %q", tc.URI, tc.MIMEType, datasf.AppURI, datasf.AppMIMEType)
	}
	if !strings.HasPrefix(tc.Text, "<!doctype html>") || tc.Text != datasf.AppHTML() {
		t.Errorf("contents text starts %.40q; want the app's HTML document", tc.Text)
	}
	// Self-contained: no script, style sheet, image or frame from elsewhere.
	if m := regexp.MustCompile(`(?i)<(script|link|img|iframe)[^>]*\s(src|href)=`).FindString(tc.Text); m != "" {
		t.Errorf("the app loads %q; want everything inline", m)
	}
	u, _ := url.Parse(h.srv.URL())
	want := map[string]any{"prefersBorder": true, "csp": map[string]any{"connectDomains": []any{u.Scheme + "://" + u.Host}}}
	var got struct {
		UI map[string]any `json:"ui"`
	}
	b, _ := json.Marshal(tc.Meta)
	_ = json.Unmarshal(b, &got)
	if diff := cmp.Diff(want, got.UI); diff != "" {
		t.Errorf("contents _meta.ui (-want +got):\n%s", diff)
	}
}

type pageOut struct {
	Data       []map[string]any `json:"data"`
	TotalCount int64            `json:"total_count"`
	Returned   int64            `json:"returned_count"`
	Offset     int64            `json:"offset"`
	HasNext    bool             `json:"has_next"`
	NextOffset *int64           `json:"next_offset"`
	Resource   struct {
		URI        string `json:"uri"`
		Query      string `json:"query"`
		TotalCount int64  `json:"total_count"`
	} `json:"resource"`
}

// restPage reads a page from the REST API.
func restPage(t *testing.T, resultURL string, body string) pageOut {
	t.Helper()
	resp, err := http.Post(resultURL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p pageOut
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&p) != nil {
		t.Fatalf("POST %s %s: %s", resultURL, body, resp.Status)
	}
	return p
}

// TestResultPageMatchesREST pages through a whole result with result_page,
// unsorted and sorted, and compares every page with the REST API's.
func TestResultPageMatchesREST(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	q := h.query(t, map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT objectid, applicant, status"})
	if q.Metadata.TotalCount <= 100 {
		t.Fatalf("the result has %d rows; want more than a page of 100", q.Metadata.TotalCount)
	}
	for _, sort := range []map[string]any{nil, {"sort_by": "applicant", "order": "desc"}} {
		var rows int64
		pages := 0
		for offset := int64(0); ; {
			args := map[string]any{"result": q.Resource.URI, "offset": offset, "limit": 100}
			body := fmt.Sprintf(`{"offset":%d,"limit":100}`, offset)
			if sort != nil {
				args["sort_by"], args["order"] = sort["sort_by"], sort["order"]
				body = fmt.Sprintf(`{"offset":%d,"limit":100,"sort":{"field":"applicant","order":"desc"}}`, offset)
			}
			var got pageOut
			structured(t, "result_page", args, h.call(t, "result_page", args), &got)
			want := restPage(t, q.Resource.URL, body)
			if diff := cmp.Diff(want.Data, got.Data); diff != "" {
				t.Fatalf("result_page %v vs REST %s (-REST +tool):\n%s", args, body, diff)
			}
			if got.TotalCount != q.Metadata.TotalCount || got.Resource.TotalCount != q.Metadata.TotalCount || got.Resource.Query != q.Metadata.Query {
				t.Errorf("result_page %v: total %d, resource %+v; want total %d and query %q", args, got.TotalCount, got.Resource, q.Metadata.TotalCount, q.Metadata.Query)
			}
			rows += got.Returned
			pages++
			if !got.HasNext {
				break
			}
			offset = *got.NextOffset
		}
		if rows != q.Metadata.TotalCount {
			t.Errorf("sort %v: paged %d rows in %d pages; want %d", sort, rows, pages, q.Metadata.TotalCount)
		}
	}
}

// TestResultPageOwner: with bearer tokens, result_page reads only the
// caller's own results, as the REST API does.
func TestResultPageOwner(t *testing.T) {
	t.Parallel()
	_, ts := httpEnv(t, datasf.Config{RESTTokens: []string{"token-a", "token-b"}})
	connect := func(token string) *client.Client {
		c, err := client.NewStreamableHttpClient(ts.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
		init.Params.ClientInfo = mcp.Implementation{Name: "host-" + token, Version: "1"}
		init.Params.Capabilities = appHostCapabilities
		if _, err := c.Initialize(t.Context(), init); err != nil {
			t.Fatalf("initialize with %s: %v", token, err)
		}
		return c
	}
	call := func(c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(t.Context(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	a, b := connect("token-a"), connect("token-b")
	qargs := map[string]any{"dataset_id": "rqzj-sfat", "soql": "SELECT applicant LIMIT 5"}
	var q queryOut
	structured(t, "query_datasf", qargs, call(a, "query_datasf", qargs), &q)
	args := map[string]any{"result": q.Resource.URI}
	var own pageOut
	structured(t, "result_page", args, call(a, "result_page", args), &own)
	if own.Returned != 5 {
		t.Errorf("result_page of the owner: %d rows; want 5", own.Returned)
	}
	if e := errorOf(t, "result_page", args, call(b, "result_page", args)); e.ErrorType != "not_found" {
		t.Errorf("result_page of another token: %+v; want not_found", e)
	}
}
