package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(t *testing.T, cfg config)
		wantErr string
	}{
		{
			name: "defaults",
			check: func(t *testing.T, cfg config) {
				if cfg.Command != "" || cfg.Domain != "data.sfgov.org" || cfg.RESTAddr != "127.0.0.1:8765" || cfg.Store != "memory" || cfg.SampleSize != 15 {
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
				if cfg.Command != "query" || len(cfg.Args) != 2 || cfg.Args[1] != "SELECT count(*)" || !cfg.Offline || cfg.SampleSize != 3 {
					t.Errorf("cfg = %+v", cfg)
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
		{name: "serve without addr", args: []string{"serve"}, wantErr: "serve needs --http"},
		{name: "query missing soql", args: []string{"query", "wg3w-h783"}, wantErr: "query takes 2 argument(s), got 1"},
		{name: "unknown command", args: []string{"frobnicate"}, wantErr: `unknown command "frobnicate"`},
		{name: "bad sample size", args: []string{"--sample-size", "0"}, wantErr: "--sample-size must be between 1 and 100"},
		{name: "bad format", args: []string{"fetch", "http://x/resources/a", "--format", "xml"}, wantErr: "--format must be csv, ndjson or json"},
		{name: "bad log level", args: []string{"--log-level", "loud"}, wantErr: "--log-level must be"},
		{name: "data without offline", args: []string{"--data", "/tmp"}, wantErr: "--data and --catalog need --offline"},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "flag provided but not defined: -nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			getenv := func(k string) string { return tt.env[k] }
			var stderr bytes.Buffer
			cfg, err := parseConfig(tt.args, getenv, &stderr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseConfig(%q) error = %v; want it to contain %q", tt.args, err, tt.wantErr)
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
	var stderr bytes.Buffer
	_, err := parseConfig([]string{"--help"}, func(string) string { return "" }, &stderr)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseConfig(--help) error = %v; want flag.ErrHelp", err)
	}
	help := stderr.String()
	for _, want := range []string{"-offline", "-rest-addr", "DATASF_REST_ADDR", "-public-url", "-store", "DATASF_STORE", "SOCRATA_APP_TOKEN", "serve --http", "fetch URL"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help output lacks %q", want)
		}
	}
}
