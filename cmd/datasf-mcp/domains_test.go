package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The portal flags and variables of issue 25: --domains (DATASF_DOMAINS),
// DATASF_APP_TOKENS (environment only), and a tool command's --domain,
// which is the tool's domain argument.
func TestParseDomains(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(t *testing.T, cfg config)
		wantErr string
	}{
		{
			name: "allowlist from the flag",
			args: []string{"--domains", "data.cityofchicago.org, data.ny.gov"},
			check: func(t *testing.T, cfg config) {
				if got := serviceConfig(cfg, nil).Domains; !cmp.Equal(got, []string{"data.cityofchicago.org", "data.ny.gov"}) {
					t.Errorf("Domains = %q", got)
				}
			},
		},
		{
			name: "allowlist and tokens from the environment",
			env:  map[string]string{"DATASF_DOMAINS": "data.ny.gov", "DATASF_APP_TOKENS": "Data.NY.gov=ny-tok, data.cityofchicago.org=chi-tok"},
			check: func(t *testing.T, cfg config) {
				sc := serviceConfig(cfg, nil)
				if !cmp.Equal(sc.Domains, []string{"data.ny.gov"}) {
					t.Errorf("Domains = %q", sc.Domains)
				}
				if want := map[string]string{"data.ny.gov": "ny-tok", "data.cityofchicago.org": "chi-tok"}; !cmp.Equal(sc.AppTokens, want) {
					t.Errorf("AppTokens has %d entries; want %d", len(sc.AppTokens), len(want))
				}
			},
		},
		{
			name: "a tool command's --domain is the tool's argument",
			args: []string{"schema", "abcd-1234", "--domain", "data.cityofchicago.org"},
			env:  map[string]string{"DATASF_DOMAIN": "data.ny.gov"},
			check: func(t *testing.T, cfg config) {
				if cfg.ToolArgs["domain"] != "data.cityofchicago.org" || cfg.Domain != "data.ny.gov" {
					t.Errorf("ToolArgs = %v, Domain = %q; want domain data.cityofchicago.org and the configured data.ny.gov", cfg.ToolArgs, cfg.Domain)
				}
			},
		},
		{
			name: "search every portal keeps the configured domain",
			args: []string{"search", "potholes", "--domain", "*"},
			env:  map[string]string{"DATASF_DOMAIN": "data.sfgov.org"},
			check: func(t *testing.T, cfg config) {
				if cfg.ToolArgs["domain"] != "*" || cfg.Domain != "data.sfgov.org" {
					t.Errorf("ToolArgs = %v, Domain = %q; want domain * and the configured data.sfgov.org", cfg.ToolArgs, cfg.Domain)
				}
			},
		},
		{
			name: "no --domain, no domain argument",
			args: []string{"schema", "abcd-1234"},
			check: func(t *testing.T, cfg config) {
				if _, ok := cfg.ToolArgs["domain"]; ok {
					t.Errorf("ToolArgs = %v; want no domain", cfg.ToolArgs)
				}
			},
		},
		{name: "token entry without =", env: map[string]string{"DATASF_APP_TOKENS": "data.ny.gov"}, wantErr: "DATASF_APP_TOKENS: entry 1 is not DOMAIN=TOKEN"},
		{name: "token for a bad domain", env: map[string]string{"DATASF_APP_TOKENS": "data.ny.gov=a,https://x.org=secret-b"}, wantErr: "DATASF_APP_TOKENS: entry 2: domain \"https://x.org\" is refused"},
		{name: "two tokens for a domain", env: map[string]string{"DATASF_APP_TOKENS": "data.ny.gov=a,DATA.NY.GOV=b"}, wantErr: "data.ny.gov has two tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			getenv := func(k string) string { return tt.env[k] }
			var out bytes.Buffer
			cfg, err := parseConfig(tt.args, getenv, &out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseConfig(%q) error = %v; want it to contain %q", tt.args, err, tt.wantErr)
				}
				for _, secret := range []string{"secret-b", "=a", "=b"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("the error %q shows a token", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("parseConfig(%q): %v", tt.args, err)
			}
			tt.check(t, cfg)
		})
	}
}

// The README's offline example of another portal: a file placed on
// data.cityofchicago.org with --data DOMAIN=ID=FILE, queried with --domain.
func TestQueryOtherDomainOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "chicago-311.csv")
	if err := os.WriteFile(file, []byte("status,ward\nOpen,1\nClosed,2\nOpen,3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t), "query", "v6vf-nfxy", "SELECT status, count(*) AS n GROUP BY status ORDER BY status",
		"--domain", "data.cityofchicago.org", "--offline", "--no-cache", "--log-level", "warn", "--json",
		"--data", "data.cityofchicago.org=v6vf-nfxy="+file)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("datasf-mcp query --domain: %v\n%s", err, stderr.String())
	}
	var sc struct {
		Results  []map[string]any `json:"results"`
		Metadata struct {
			Domain     string `json:"domain"`
			TotalCount int    `json:"total_count"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(out, &sc); err != nil {
		t.Fatalf("output is not the dual response: %v\n%s", err, out)
	}
	if sc.Metadata.Domain != "data.cityofchicago.org" || sc.Metadata.TotalCount != 2 || len(sc.Results) != 2 || sc.Results[1]["n"] != "2" {
		t.Errorf("query on data.cityofchicago.org offline = domain %q, total %d, rows %v; want the file's 2 groups (Open: 2)",
			sc.Metadata.Domain, sc.Metadata.TotalCount, sc.Results)
	}
}
