package main

import (
	"bytes"
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
			check: func(t *testing.T, cfg config) {
				if cfg.ToolArgs["domain"] != "data.cityofchicago.org" {
					t.Errorf("ToolArgs = %v; want domain data.cityofchicago.org", cfg.ToolArgs)
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
