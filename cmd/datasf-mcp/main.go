// Command datasf-mcp is an MCP server for San Francisco's open data portal
// (data.sfgov.org) and any other Socrata portal, with dual responses: the
// model gets a sample, the exact total and a link; the full result is served
// over REST.
//
// Usage:
//
//	datasf-mcp [flags]                      MCP over stdio + REST listener
//	datasf-mcp serve --http ADDR [flags]    Streamable HTTP at /mcp + REST at /resources/
//	datasf-mcp search QUERY [flags]         search the catalog, print JSON
//	datasf-mcp schema DATASET_ID [flags]    print a dataset's schema as JSON
//	datasf-mcp query DATASET_ID SOQL        print the dual response as JSON
//	datasf-mcp fetch URL [--format csv|ndjson|json] [-o FILE]
//
// Run `datasf-mcp --help` for the flags and their environment variables.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := parseConfig(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "datasf-mcp:", err)
		fmt.Fprintln(os.Stderr, "Run 'datasf-mcp --help' for usage.")
		os.Exit(2)
	}
	cfg.Stdin, cfg.Stdout, cfg.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := run(ctx, cfg); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "datasf-mcp:", err)
		os.Exit(1)
	}
}

// usage is the text of --help.
const usage = `datasf-mcp: an MCP server for San Francisco's open data (any Socrata portal works).

Query results come back as dual responses: the model sees a small sample, the
exact total and a link; the complete result is served at that link by a REST
endpoint (paged JSON, CSV/NDJSON/JSON export).

Usage:
  datasf-mcp [flags]                        MCP over stdio, REST listener on --rest-addr
  datasf-mcp serve --http ADDR [flags]      Streamable HTTP at /mcp and REST at /resources/ on ADDR
  datasf-mcp search QUERY [flags]           search the catalog (prints JSON)
  datasf-mcp schema DATASET_ID [flags]      a dataset's columns and row count (prints JSON)
  datasf-mcp query DATASET_ID SOQL [flags]  run SoQL, print the dual response (JSON)
  datasf-mcp fetch URL [flags]              download a full result (resource URL) to stdout or -o FILE

Examples:
  datasf-mcp --offline                                   # stdio server on the built-in snapshot
  datasf-mcp serve --http 127.0.0.1:8080 --offline
  datasf-mcp --offline --catalog catalog.jsonl --data Police_Department_Incident_Reports__2018_to_Present.csv --data abcd-1234=export.json
  datasf-mcp query wg3w-h783 "SELECT incident_category, count(*) AS n GROUP BY incident_category ORDER BY n DESC" --offline
  datasf-mcp query rqzj-sfat "SELECT applicant, status" --server http://127.0.0.1:8080
  datasf-mcp fetch http://127.0.0.1:8080/resources/ID --format csv -o result.csv

Flags (each falls back to the environment variable shown):
`

const usageTail = `
Environment only:
  SOCRATA_APP_TOKEN   Socrata app token, sent as X-App-Token (never printed or logged)
  DATASF_REST_TOKEN   comma-separated bearer tokens; when set, /resources/ and /mcp require
                      "Authorization: Bearer TOKEN" and each result is visible only to the
                      token that created it (stdio mode creates results as the first token)
`

// config is everything run needs. parseConfig builds it from flags and env.
type config struct {
	Command string   // "" (stdio), "serve", "search", "schema", "query", "fetch"
	Args    []string // positional arguments of the command

	Domain       string
	BaseURL      string
	DiscoveryURL string
	AppToken     string
	Offline      bool
	Data         []string
	DataStrict   bool
	Catalog      string
	Server       string
	RESTAddr     string
	RESTAddrSet  bool // --rest-addr or DATASF_REST_ADDR given
	PublicURL    string
	HTTPAddr     string
	Store        string
	SampleSize   int
	LogLevel     string
	RESTTokens   []string
	CORSOrigins  string
	Format       string
	Output       string
	Expiration   time.Duration

	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

var commands = map[string]bool{"serve": true, "search": true, "schema": true, "query": true, "fetch": true}

// parseConfig reads the command line and the environment. Flags may come
// before or after the command's positional arguments.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var cfg config
	if len(args) > 0 && commands[args[0]] {
		cfg.Command, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("datasf-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	str := func(p *string, name, envName, def, help string) {
		fs.StringVar(p, name, env(envName, def), help+" (env "+envName+")")
	}
	str(&cfg.Domain, "domain", "DATASF_DOMAIN", "data.sfgov.org", "Socrata portal domain")
	str(&cfg.BaseURL, "base-url", "DATASF_BASE_URL", "", "base URL of the portal's APIs (default https://DOMAIN)")
	str(&cfg.DiscoveryURL, "discovery-url", "DATASF_DISCOVERY_URL", "https://api.us.socrata.com", "Socrata Discovery API base URL")
	if v := getenv("DATASF_DATA"); v != "" {
		cfg.Data = filepath.SplitList(v)
	}
	dataFromFlags := false
	fs.Func("data", "with --offline: serve the portal's exports as downloaded: a CSV, JSON, GeoJSON or rows.json(+view.json) file, a directory of them, or ID=FILE; repeatable (env DATASF_DATA, a list separated by "+string(filepath.ListSeparator)+")", func(v string) error {
		if !dataFromFlags {
			cfg.Data, dataFromFlags = nil, true
		}
		cfg.Data = append(cfg.Data, v)
		return nil
	})
	fs.BoolVar(&cfg.DataStrict, "data-strict", env("DATASF_DATA_STRICT", "") == "true" || env("DATASF_DATA_STRICT", "") == "1",
		"with --data: load every file before serving and stop at the first file or value that does not load (env DATASF_DATA_STRICT=true)")
	str(&cfg.Catalog, "catalog", "DATASF_CATALOG", "", "with --offline: load a catalog JSONL (one Views-like document per line, as shared/fixtures/catalog) for search and schemas")
	str(&cfg.Server, "server", "DATASF_SERVER", "", "search/schema/query: call a running `serve --http` server at this URL (e.g. http://127.0.0.1:8080), so result links stay valid")
	str(&cfg.RESTAddr, "rest-addr", "DATASF_REST_ADDR", "127.0.0.1:8765", "stdio mode: address of the REST listener for full results")
	str(&cfg.PublicURL, "public-url", "DATASF_PUBLIC_URL", "", "base URL used in result links, when behind a proxy (default http://LISTEN-ADDR)")
	str(&cfg.HTTPAddr, "http", "DATASF_HTTP", "", "serve: listen address for Streamable HTTP and REST, e.g. 127.0.0.1:8080")
	str(&cfg.Store, "store", "DATASF_STORE", "memory", "result store: memory | sqlite:PATH | redis://HOST:PORT/DB")
	str(&cfg.LogLevel, "log-level", "DATASF_LOG_LEVEL", "info", "log level: debug | info | warn | error (logs go to stderr)")
	str(&cfg.Format, "format", "DATASF_FORMAT", "csv", "fetch: output format csv | ndjson | json")
	str(&cfg.Output, "o", "DATASF_OUTPUT", "", "fetch: write to this file instead of stdout")
	str(&cfg.CORSOrigins, "cors-origins", "DATASF_CORS_ORIGINS", "", "comma-separated browser origins allowed to call the REST API cross-origin (default: none)")
	var expiration string
	str(&expiration, "expiration", "DATASF_EXPIRATION", "15m", "how long a stored result stays available after its last access")
	fs.BoolVar(&cfg.Offline, "offline", env("DATASF_OFFLINE", "") == "true" || env("DATASF_OFFLINE", "") == "1",
		"serve a built-in generated snapshot from an in-process fake Socrata server; no network (env DATASF_OFFLINE=true)")
	fs.IntVar(&cfg.SampleSize, "sample-size", 15, "sample rows returned to the model per query (1-100)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), usageTail)
	}

	// Interleave flags and positional arguments.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return cfg, err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	cfg.Args = positional
	cfg.RESTAddrSet = getenv("DATASF_REST_ADDR") != ""
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "rest-addr" {
			cfg.RESTAddrSet = true
		}
	})
	if d, err := time.ParseDuration(expiration); err != nil || d <= 0 {
		return cfg, fmt.Errorf("--expiration must be a positive duration such as 15m; got %q", expiration)
	} else {
		cfg.Expiration = d
	}
	cfg.AppToken = getenv("SOCRATA_APP_TOKEN")
	for _, tok := range strings.Split(getenv("DATASF_REST_TOKEN"), ",") {
		if tok = strings.TrimSpace(tok); tok != "" {
			cfg.RESTTokens = append(cfg.RESTTokens, tok)
		}
	}

	want := map[string]int{"": 0, "serve": 0, "search": 1, "schema": 1, "query": 2, "fetch": 1}
	if n := want[cfg.Command]; len(cfg.Args) != n {
		if cfg.Command == "" {
			return cfg, fmt.Errorf("unknown command %q; commands: serve, search, schema, query, fetch", cfg.Args[0])
		}
		return cfg, fmt.Errorf("%s takes %d argument(s), got %d", cfg.Command, n, len(cfg.Args))
	}
	if cfg.Command == "serve" && cfg.HTTPAddr == "" {
		return cfg, errors.New("serve needs --http ADDR (for example --http 127.0.0.1:8080)")
	}
	if cfg.SampleSize < 1 || cfg.SampleSize > 100 {
		return cfg, fmt.Errorf("--sample-size must be between 1 and 100; got %d", cfg.SampleSize)
	}
	switch cfg.Format {
	case "csv", "ndjson", "json":
	default:
		return cfg, fmt.Errorf("--format must be csv, ndjson or json; got %q", cfg.Format)
	}
	switch cfg.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return cfg, fmt.Errorf("--log-level must be debug, info, warn or error; got %q", cfg.LogLevel)
	}
	if (len(cfg.Data) > 0 || cfg.Catalog != "") && !cfg.Offline {
		return cfg, errors.New("--data and --catalog need --offline (they load files into the in-process fake portal)")
	}
	return cfg, nil
}
