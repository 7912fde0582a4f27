package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) {
	// The commands run in process keep a key in the user's cache
	// directory, and the offline portal builds its cache: both in a
	// temporary directory, not the real user's. The go command's build
	// cache stays where it was (it defaults to one in that directory).
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		panic(err)
	}
	os.Setenv("GOCACHE", strings.TrimSpace(string(gocache)))
	cache, err := os.MkdirTemp("", "datasf-mcp-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	// DATASF_MCP_TEST_CACHE, which make test sets, is the offline cache
	// the e2e tier's processes share (the offline portal locks a dataset's
	// file while it builds it, so a second process reuses what the first
	// built): TestREADMECommandsRun queries wg3w-h783 (250,000 rows).
	offline := os.Getenv("DATASF_MCP_TEST_CACHE")
	if offline == "" {
		offline = filepath.Join(cache, "offline")
	}
	os.Setenv("DATASF_CACHE_DIR", offline)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}

func TestParseConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(t *testing.T, cfg config)
		wantErr string
		secrets []string // what the error must not show (app tokens)
	}{
		{
			name: "defaults",
			check: func(t *testing.T, cfg config) {
				if cfg.Command != "" || cfg.Domain != "data.sf.gov" || cfg.RESTAddr != "127.0.0.1:8765" || cfg.Store != "" || cfg.SampleSize != 15 || cfg.Expiration != 15*time.Minute {
					t.Errorf("defaults = %+v", cfg)
				}
			},
		},
		{
			name: "env fallbacks and token only from env",
			env:  map[string]string{"DATASF_DOMAIN": "data.cityofchicago.org", "DATASF_STORE": "sqlite:/tmp/x.db", "SOCRATA_APP_TOKEN": "tok-123", "DATASF_OFFLINE": "true"},
			check: func(t *testing.T, cfg config) {
				if cfg.Domain != "data.cityofchicago.org" || cfg.Store != "sqlite:/tmp/x.db" || cfg.AppToken != "tok-123" || !cfg.Offline {
					t.Errorf("cfg = %+v", cfg)
				}
			},
		},
		{
			name: "flags beat env",
			args: []string{"--domain", "data.ny.gov"},
			env:  map[string]string{"DATASF_DOMAIN": "data.cityofchicago.org"},
			check: func(t *testing.T, cfg config) {
				if cfg.Domain != "data.ny.gov" {
					t.Errorf("Domain = %q; want data.ny.gov", cfg.Domain)
				}
			},
		},
		{
			name: "query with flags after positionals",
			args: []string{"query", "wg3w-h783", "SELECT count(*)", "--offline", "--sample-size", "3"},
			check: func(t *testing.T, cfg config) {
				want := map[string]any{"dataset_id": "wg3w-h783", "soql": "SELECT count(*)", "sample_size": 3}
				if cfg.Command != "query" || cfg.Tool != "query_datasf" || !cfg.Offline || cfg.Render != renderAuto {
					t.Errorf("cfg = %+v", cfg)
				}
				if diff := cmp.Diff(want, cfg.ToolArgs); diff != "" {
					t.Errorf("ToolArgs (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "tool arguments as flags, with _ or -",
			args: []string{"query", "--dataset-id", "WG3W-H783", "--soql", "SELECT 1", "--auto_correct=false", "--json"},
			check: func(t *testing.T, cfg config) {
				want := map[string]any{"dataset_id": "WG3W-H783", "soql": "SELECT 1", "auto_correct": false}
				if diff := cmp.Diff(want, cfg.ToolArgs); diff != "" {
					t.Errorf("ToolArgs (-want +got):\n%s", diff)
				}
				if cfg.Render != renderJSON {
					t.Errorf("Render = %q; want json", cfg.Render)
				}
			},
		},
		{
			name: "list by category",
			args: []string{"list", "--category", "Public Safety", "--limit", "3", "--format", "markdown"},
			check: func(t *testing.T, cfg config) {
				want := map[string]any{"category": "Public Safety", "limit": 3}
				if diff := cmp.Diff(want, cfg.ToolArgs); diff != "" || cfg.Tool != "list_datasf" || cfg.Render != renderMarkdown {
					t.Errorf("cfg = %+v (-want +got ToolArgs):\n%s", cfg, diff)
				}
			},
		},
		{
			name: "query --all picks the format from -o",
			args: []string{"query", "wg3w-h783", "SELECT 1", "--all", "-o", "x.ndjson"},
			check: func(t *testing.T, cfg config) {
				if !cfg.All || cfg.Format != "ndjson" || cfg.Output != "x.ndjson" {
					t.Errorf("cfg = %+v", cfg)
				}
			},
		},
		{
			name: "analyze with --results and --query",
			args: []string{"analyze", "SELECT * FROM a JOIN b USING (x)", "--results", "a=0123456789abcdef0123456789abcdef", "--query", "b=rqzj-sfat:SELECT x, y"},
			check: func(t *testing.T, cfg config) {
				if diff := cmp.Diff([]namedQuery{{Name: "b", DatasetID: "rqzj-sfat", SoQL: "SELECT x, y"}}, cfg.Queries); diff != "" {
					t.Errorf("Queries (-want +got):\n%s", diff)
				}
				if got := cfg.ToolArgs["results"]; !cmp.Equal(got, map[string]any{"a": "0123456789abcdef0123456789abcdef"}) {
					t.Errorf("results = %v", got)
				}
			},
		},
		{
			name: "serve",
			args: []string{"serve", "--http", "127.0.0.1:0"},
			check: func(t *testing.T, cfg config) {
				if cfg.Command != "serve" || cfg.HTTPAddr != "127.0.0.1:0" {
					t.Errorf("cfg = %+v", cfg)
				}
			},
		},
		{
			name: "serve on a bare port listens on loopback",
			args: []string{"serve", "--http", "8081"},
			check: func(t *testing.T, cfg config) {
				if cfg.HTTPAddr != "127.0.0.1:8081" {
					t.Errorf("HTTPAddr = %q; want 127.0.0.1:8081", cfg.HTTPAddr)
				}
			},
		},
		{
			// Each command has its own flags: the environment of another
			// command's flag does not reach it.
			name: "version ignores the env of other commands' flags",
			args: []string{"version"},
			env:  map[string]string{"DATASF_SERVER": "http://127.0.0.1:1", "DATASF_OFFLINE": "true", "DATASF_DATA": "/nowhere"},
			check: func(t *testing.T, cfg config) {
				if cfg.Command != "version" || cfg.Server != "" || len(cfg.Data) != 0 {
					t.Errorf("cfg = %+v", cfg)
				}
			},
		},
		{
			name: "a tool command's -o has no env; fetch's has",
			args: []string{"search", "trees"},
			env:  map[string]string{"DATASF_OUTPUT": "out.json", "DATASF_FORMAT": "ndjson", "DATASF_STORE": "sqlite:/tmp/x.db"},
			check: func(t *testing.T, cfg config) {
				if cfg.Output != "" || cfg.Format != "" || cfg.Store != "memory" {
					t.Errorf("Output, Format, Store = %q, %q, %q; want \"\", \"\", memory", cfg.Output, cfg.Format, cfg.Store)
				}
			},
		},
		{
			name: "fetch reads DATASF_OUTPUT and DATASF_FORMAT",
			args: []string{"fetch", "http://127.0.0.1:1/resources/a"},
			env:  map[string]string{"DATASF_OUTPUT": "out.jsonl", "DATASF_FORMAT": "ndjson"},
			check: func(t *testing.T, cfg config) {
				if cfg.Command != "fetch" || cfg.Output != "out.jsonl" || cfg.Format != "ndjson" {
					t.Errorf("cfg = %+v", cfg)
				}
			},
		},
		{name: "serve without addr", args: []string{"serve"}, wantErr: "serve needs --http"},
		{name: "serve bad addr", args: []string{"serve", "--http", "80x"}, wantErr: "--http: want PORT, :PORT or HOST:PORT"},
		{name: "bad expiration", args: []string{"serve", "--http", "8081", "--expiration", "5"}, wantErr: `--expiration must be a positive duration such as 15m or 2h; got "5" (a number needs a unit`},
		{name: "query missing soql", args: []string{"query", "wg3w-h783"}, wantErr: "query needs SOQL (or --soql)"},
		{name: "query too many arguments", args: []string{"query", "a", "b", "c"}, wantErr: "accepts at most 2 arg(s), received 3"},
		{name: "query bad dataset id", args: []string{"query", "x", "SELECT 1"}, wantErr: "DATASET_ID must be a dataset id"},
		{name: "query csv without --all", args: []string{"query", "wg3w-h783", "SELECT 1", "--format", "csv"}, wantErr: "--format csv is a format of the complete result: add --all"},
		{name: "search limit over the tool's", args: []string{"search", "trees", "--limit", "50"}, wantErr: "--limit must be between 1 and 20"},
		{name: "search without words", args: []string{"search"}, wantErr: "search needs QUERY"},
		{name: "list unknown flag", args: []string{"list", "--categry", "x"}, wantErr: "unknown flag: --categry"},
		{name: "analyze without tables", args: []string{"analyze", "SELECT 1"}, wantErr: "analyze needs tables"},
		{name: "analyze bad --query", args: []string{"analyze", "SELECT 1", "--query", "t=rqzj-sfat"}, wantErr: "--query wants NAME=DATASET_ID:SOQL"},
		{name: "unknown command", args: []string{"frobnicate"}, wantErr: `unknown command "frobnicate"`},
		{name: "help of an unknown command", args: []string{"help", "frobnicate"}, wantErr: `unknown command "frobnicate"`},
		{name: "long flag with one dash", args: []string{"query", "a", "b", "-offline"}, wantErr: "-offline: long flags take two dashes: --offline"},
		{name: "bad sample size", args: []string{"--sample-size", "0"}, wantErr: "--sample-size must be between 1 and 100"},
		{name: "bad fetch format", args: []string{"fetch", "http://x/resources/a", "--format", "xml"}, wantErr: "--format must be csv, ndjson, json, parquet"},
		{name: "bad log level", args: []string{"--log-level", "loud"}, wantErr: "--log-level must be"},
		{name: "data without offline", args: []string{"--data", "/tmp"}, wantErr: "--data and --catalog need --offline"},
		{name: "server and offline", args: []string{"search", "x", "--server", "http://127.0.0.1:1", "--offline"}, wantErr: "--server and --offline exclude each other"},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "unknown flag: --nope"},
		// The portal flags and variables: --domains (DATASF_DOMAINS),
		// DATASF_APP_TOKENS (environment only), and a tool command's --domain,
		// which is the tool's domain argument.
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
		{name: "an allowlist entry that is no host name", args: []string{"--domains", "data.ny.gov, localhost"}, wantErr: "--domains: domain \"localhost\" is refused"},
		{name: "an allowlist entry from the environment", args: []string{"serve", "--http", "8080"}, env: map[string]string{"DATASF_DOMAINS": "10.0.0.1"}, wantErr: "--domains: domain \"10.0.0.1\" is refused"},
		{name: "token entry without =", env: map[string]string{"DATASF_APP_TOKENS": "data.ny.gov"}, wantErr: "DATASF_APP_TOKENS: entry 1 is not DOMAIN=TOKEN"},
		{name: "token for a bad domain", env: map[string]string{"DATASF_APP_TOKENS": "data.ny.gov=a,https://x.org=secret-b"}, wantErr: "DATASF_APP_TOKENS: entry 2: domain \"https://x.org\" is refused", secrets: []string{"secret-b", "=a"}},
		{name: "two tokens for a domain", env: map[string]string{"DATASF_APP_TOKENS": "data.ny.gov=a,DATA.NY.GOV=b"}, wantErr: "data.ny.gov has two tokens", secrets: []string{"=a", "=b"}},
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
				for _, secret := range tt.secrets {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("the error %q shows a token", err)
					}
				}
				var ue *usageError
				if !errors.As(err, &ue) || !strings.Contains(ue.usage, "Usage:\n  datasf-mcp") {
					t.Errorf("parseConfig(%q) error %v carries no usage", tt.args, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseConfig(%q) = %v", tt.args, err)
			}
			tt.check(t, cfg)
		})
	}
}

func TestHelpListsEveryFlagAndItsEnvVar(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	_, err := parseConfig([]string{"--help"}, func(string) string { return "" }, &out)
	if !errors.Is(err, errHelp) {
		t.Fatalf("parseConfig(--help) error = %v; want errHelp", err)
	}
	help := out.String()
	for _, want := range []string{"--offline", "--rest-addr", "DATASF_REST_ADDR", "--public-url", "--store", "DATASF_STORE", "SOCRATA_APP_TOKEN", "serve", "fetch", "list", "results", "analyze", "version", "completion"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help output lacks %q", want)
		}
	}
}

// TestHelpEqualsDashDashHelp: `datasf-mcp help` prints what --help does,
// the -v, --version line included.
func TestHelpEqualsDashDashHelp(t *testing.T) {
	t.Parallel()
	help := func(args ...string) string {
		var out bytes.Buffer
		if _, err := parseConfig(args, func(string) string { return "" }, &out); !errors.Is(err, errHelp) {
			t.Fatalf("parseConfig(%q) error = %v; want errHelp", args, err)
		}
		return out.String()
	}
	dashHelp, helpCmd := help("--help"), help("help")
	if !strings.Contains(dashHelp, "-v, --version") {
		t.Errorf("--help lacks the -v, --version line:\n%s", dashHelp)
	}
	if diff := cmp.Diff(dashHelp, helpCmd); diff != "" {
		t.Errorf("datasf-mcp help vs --help (-(--help) +(help)):\n%s", diff)
	}
}

func TestNormalizeAddr(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want, wantErr string }{
		{in: ":8081", want: ":8081"},
		{in: "8081", want: "127.0.0.1:8081"},
		{in: "127.0.0.1:8081", want: "127.0.0.1:8081"},
		{in: "localhost:0", want: "localhost:0"},
		{in: "[::1]:8081", want: "[::1]:8081"},
		{in: "http://127.0.0.1:8081/", want: "127.0.0.1:8081"},
		{in: "8081x", wantErr: "want PORT, :PORT or HOST:PORT"},
		{in: "host", wantErr: "want PORT, :PORT or HOST:PORT"},
		{in: "host:http", wantErr: "is not a number from 0 to 65535"},
		{in: "99999", wantErr: "want PORT, :PORT or HOST:PORT"},
	} {
		got, err := normalizeAddr(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("normalizeAddr(%q) = %q, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("normalizeAddr(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
