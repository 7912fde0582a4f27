package datasf_test

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// toolNames are the names of the server's tools, from its one tool list
// (Tools), in order. The tests below iterate over them, so a tool added to
// the list is tested like the others or fails them.
func toolNames(t *testing.T, h *harness) []string {
	t.Helper()
	var names []string
	for _, tool := range h.srv.Tools() {
		names = append(names, tool.Tool.Name)
	}
	if len(names) == 0 {
		t.Fatal("the server has no tools")
	}
	return names
}

// TestToolsListed checks that tools/list sends exactly the tools of the
// tool list.
func TestToolsListed(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	wire := wireTools(t, h)
	names := toolNames(t, h)
	if diff := cmp.Diff(slices.Sorted(slices.Values(names)), slices.Sorted(maps.Keys(wire))); diff != "" {
		t.Errorf("tools/list vs Tools() (-Tools +tools/list):\n%s", diff)
	}
}

// wireTools returns the tools exactly as the server sends them in a
// tools/list answer, keyed by name.
func wireTools(t *testing.T, h *harness) map[string]map[string]json.RawMessage {
	t.Helper()
	// As an MCP Apps host sees them: every tool, the app-only one too.
	host := server.NewInProcessSession("wire-tools", nil)
	host.SetClientCapabilities(appHostCapabilities)
	ctx := h.srv.MCPServer().WithContext(t.Context(), host)
	msg := h.srv.MCPServer().HandleMessage(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatalf("marshalling the tools/list answer: %v", err)
	}
	var resp struct {
		Result struct {
			Tools []map[string]json.RawMessage `json:"tools"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatalf("tools/list answer %s: %v", b, err)
	}
	if resp.Error != nil {
		t.Fatalf("tools/list answered an error: %s", resp.Error)
	}
	tools := map[string]map[string]json.RawMessage{}
	for _, tool := range resp.Result.Tools {
		var name string
		if err := json.Unmarshal(tool["name"], &name); err != nil {
			t.Fatalf("tool without a name: %v", tool)
		}
		tools[name] = tool
	}
	return tools
}

// TestToolSchemasGolden compares each tool's name, description, input and
// output schemas and annotations, as sent over the wire, with
// testdata/<tool>.golden.json. go test -update rewrites the files.
func TestToolSchemasGolden(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	tools := wireTools(t, h)
	for _, name := range toolNames(t, h) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tool, ok := tools[name]
			if !ok {
				t.Fatalf("tools/list lacks %s", name)
			}
			for _, k := range []string{"inputSchema", "outputSchema", "annotations"} {
				if _, ok := tool[k]; !ok {
					t.Errorf("tool %s has no %s", name, k)
				}
			}
			picked := map[string]json.RawMessage{}
			for _, k := range []string{"name", "description", "inputSchema", "outputSchema", "annotations"} {
				if v, ok := tool[k]; ok {
					picked[k] = v
				}
			}
			got, err := json.MarshalIndent(picked, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name+".golden.json")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading the golden file (run go test ./datasf/ -update to create it): %v", err)
			}
			var wantV, gotV any
			if err := json.Unmarshal(want, &wantV); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if err := json.Unmarshal(got, &gotV); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantV, gotV); diff != "" {
				t.Errorf("tool %s differs from %s (-want +got):\n%s\nIf the change is intended, run go test ./datasf/ -update", name, path, diff)
			}
		})
	}
}

// TestGoldenFilesHaveTools fails when a golden file is left for a tool the
// server no longer has.
func TestGoldenFilesHaveTools(t *testing.T) {
	t.Parallel()
	if *update {
		t.Skip("rewriting goldens")
	}
	tools := wireTools(t, sharedHarness(t))
	files, err := filepath.Glob(filepath.Join("testdata", "*.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden files in testdata/")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".golden.json")
		if _, ok := tools[name]; !ok {
			t.Errorf("golden file %s has no tool %s on the server", f, name)
		}
	}
}

// TestToolSchemasAreJSONSchemaObjects checks the shape every MCP client
// relies on: object schemas, and input schemas that refuse unknown
// arguments.
func TestToolSchemasAreJSONSchemaObjects(t *testing.T) {
	t.Parallel()
	tools := wireTools(t, sharedHarness(t))
	for name, tool := range tools {
		for _, k := range []string{"inputSchema", "outputSchema"} {
			var s struct {
				Type                 string         `json:"type"`
				Properties           map[string]any `json:"properties"`
				AdditionalProperties *bool          `json:"additionalProperties"`
			}
			if err := json.Unmarshal(tool[k], &s); err != nil {
				t.Errorf("%s %s: %v", name, k, err)
				continue
			}
			if s.Type != "object" || len(s.Properties) == 0 {
				t.Errorf("%s %s: type %q with %d properties; want an object schema with properties", name, k, s.Type, len(s.Properties))
			}
			if k == "inputSchema" && (s.AdditionalProperties == nil || *s.AdditionalProperties) {
				t.Errorf("%s inputSchema: additionalProperties = %v; want false (unknown arguments are refused)", name, s.AdditionalProperties)
			}
		}
	}
}

// TestToolAnnotations checks, through the MCP client, that every tool sets
// its four hints explicitly.
func TestToolAnnotations(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	res, err := h.mcp.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	type hints struct{ ReadOnly, Destructive, Idempotent, OpenWorld *bool }
	ptr := func(b bool) *bool { return &b }
	// The four tools of the DataSF design read a remote portal: open world.
	// list_results and analyze_results read only this server's own results.
	portal := hints{ptr(true), ptr(false), ptr(true), ptr(true)}
	local := hints{ptr(true), ptr(false), ptr(true), ptr(false)}
	want := map[string]hints{
		"search_datasf":   portal,
		"list_datasf":     portal,
		"get_schema":      portal,
		"query_datasf":    portal,
		"list_results":    local,
		"analyze_results": local,
		"result_page":     local,
	}
	seen := map[string]bool{}
	for _, tool := range res.Tools {
		seen[tool.Name] = true
		a := tool.Annotations
		got := hints{a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint}
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("tool %s has no expected annotations in this test; add them", tool.Name)
			continue
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("tool %s annotations (-want +got):\n%s", tool.Name, diff)
		}
		if a.Title == "" {
			t.Errorf("tool %s has no annotations.title", tool.Name)
		}
	}
	for _, name := range toolNames(t, h) {
		if !seen[name] {
			t.Errorf("ListTools lacks %s", name)
		}
	}
}

// TestInstructions checks that the server tells the model the workflow.
func TestInstructions(t *testing.T) {
	t.Parallel()
	h := sharedHarness(t)
	for _, word := range []string{"search_datasf", "get_schema", "query_datasf", "SAMPLE", "total_count", "resource.url"} {
		if !strings.Contains(h.init.Instructions, word) {
			t.Errorf("instructions do not mention %q:\n%s", word, h.init.Instructions)
		}
	}
	// The workflow order: search, then schema, then query.
	i, j, k := strings.Index(h.init.Instructions, "search_datasf"), strings.Index(h.init.Instructions, "get_schema"), strings.Index(h.init.Instructions, "query_datasf")
	if !(i < j && j < k) {
		t.Errorf("instructions name search_datasf at %d, get_schema at %d, query_datasf at %d; want that order", i, j, k)
	}
	if h.init.ServerInfo.Name != "datasf-mcp" {
		t.Errorf("serverInfo.name = %q; want datasf-mcp", h.init.ServerInfo.Name)
	}
	if h.init.Capabilities.Tools == nil || h.init.Capabilities.Resources == nil {
		t.Errorf("capabilities = %+v; want tools and resources", h.init.Capabilities)
	}
}
