package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

var update = flag.Bool("update", false, "rewrite the tools of bundle/manifest.json from the registered tools")

const manifestPath = "../../bundle/manifest.json"

// TestBundleManifestTools: the MCP Bundle's manifest lists exactly the
// tools the server registers, with their descriptions (go test -update
// rewrites the list), and passes the user settings to the server as the
// environment variables it reads.
func TestBundleManifestTools(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	type tool struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	var want []tool
	for _, s := range datasf.ToolSpecs() {
		want = append(want, tool{s.Name, s.Description})
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if *update {
		// Rewrite only the tools, keeping the order of the other fields.
		var ordered struct{ Tools []tool }
		_ = json.Unmarshal(b, &ordered)
		if ordered.Tools == nil {
			ordered.Tools = []tool{}
		}
		old, _ := json.Marshal(ordered.Tools)
		fresh, _ := json.Marshal(want)
		var doc bytes.Buffer
		key := []byte(`"tools":`)
		if err := json.Indent(&doc, bytes.Replace(compact(t, b), append(key, old...), append(key, fresh...), 1), "", "  "); err != nil {
			t.Fatal(err)
		}
		doc.WriteByte('\n')
		if err := os.WriteFile(manifestPath, doc.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	var got []tool
	if err := json.Unmarshal(m["tools"], &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bundle/manifest.json tools vs the registered tools (-registered +manifest); go test ./cmd/datasf-mcp -run TestBundleManifestTools -update rewrites them:\n%s", diff)
	}

	var server struct {
		MCPConfig struct {
			Env map[string]string `json:"env"`
		} `json:"mcp_config"`
	}
	if err := json.Unmarshal(m["server"], &server); err != nil {
		t.Fatal(err)
	}
	wantEnv := map[string]string{
		"SOCRATA_APP_TOKEN": "${user_config.app_token}",
		"DATASF_DOMAIN":     "${user_config.domain}",
		"DATASF_OFFLINE":    "${user_config.offline}",
		"DATASF_DOMAINS":    "${user_config.domains}",
		"DATASF_APP_TOKENS": "${user_config.app_tokens}",
	}
	if diff := cmp.Diff(wantEnv, server.MCPConfig.Env); diff != "" {
		t.Errorf("manifest server env (-want +got):\n%s", diff)
	}
	// The values the bundle host substitutes parse as the flags' fallbacks.
	cfg, err := parseConfig(nil, func(k string) string {
		return map[string]string{"SOCRATA_APP_TOKEN": "", "DATASF_DOMAIN": "data.cityofchicago.org", "DATASF_OFFLINE": "true",
			"DATASF_DOMAINS": "", "DATASF_APP_TOKENS": ""}[k]
	}, &bytes.Buffer{})
	if err != nil || !cfg.Offline || cfg.Domain != "data.cityofchicago.org" {
		t.Errorf("the bundle's environment parses as %+v, %v", cfg, err)
	}
	// Filled in, the other portals' settings parse too.
	cfg, err = parseConfig(nil, func(k string) string {
		return map[string]string{"DATASF_DOMAINS": "data.cityofchicago.org", "DATASF_APP_TOKENS": "data.cityofchicago.org=chi-token"}[k]
	}, &bytes.Buffer{})
	if err != nil || len(cfg.AppTokens) != 1 || cfg.AppTokens["data.cityofchicago.org"] != "chi-token" || cfg.Domains != "data.cityofchicago.org" {
		t.Errorf("the other portals' settings parse as Domains %q and %d app tokens, %v; want the allowlist and one token", cfg.Domains, len(cfg.AppTokens), err)
	}
}

func compact(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
