// Command datasf-mcp is an MCP server for San Francisco's open data portal
// (data.sf.gov, formerly data.sfgov.org) and any other Socrata portal, with dual responses: the
// model gets a sample, the exact total and a link; the full result is served
// over REST.
//
// Usage:
//
//	datasf-mcp [flags]                      MCP over stdio + REST listener
//	datasf-mcp serve --http ADDR [flags]    Streamable HTTP at /mcp + REST at /resources/
//	datasf-mcp search QUERY [flags]         search_datasf
//	datasf-mcp list [--category C] [flags]  list_datasf
//	datasf-mcp schema DATASET_ID [flags]    get_schema
//	datasf-mcp query DATASET_ID SOQL        query_datasf (--all -o FILE: the complete result)
//	datasf-mcp results [flags]              list_results
//	datasf-mcp analyze SQL --results T=ID   analyze_results
//	datasf-mcp fetch URL [--format csv|ndjson|json] [-o FILE]
//	datasf-mcp doctor [--domain D]          check the portal: one line a check, with the fix
//	datasf-mcp version | help [COMMAND] | completion SHELL
//
// Each tool command takes the tool's arguments as flags (sample_size is
// --sample-size) and prints markdown on a terminal, JSON when piped. Run
// `datasf-mcp help COMMAND` for a command's flags and their environment
// variables.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := parseConfig(os.Args[1:], os.Getenv, os.Stdout)
	if errors.Is(err, errHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "datasf-mcp:", err)
		var ue *usageError
		if errors.As(err, &ue) && ue.usage != "" {
			fmt.Fprintln(os.Stderr)
			fmt.Fprint(os.Stderr, ue.usage)
		}
		os.Exit(2)
	}
	cfg.Stdin, cfg.Stdout, cfg.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := run(ctx, cfg); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "datasf-mcp:", err)
		os.Exit(1)
	}
}

// config is everything run needs. parseConfig builds it from flags and env.
type config struct {
	// Command is "" (stdio), "serve", "fetch", "doctor", "version" or a tool
	// command: "search", "list", "schema", "query", "results", "analyze".
	Command string
	Args    []string // positional arguments of fetch (the URL)

	// Tool is the MCP tool of a tool command, ToolArgs its arguments as
	// given (validated by the tool's own rules).
	Tool     string
	ToolArgs map[string]any
	// Queries are analyze's --query: run first, their results named.
	Queries []namedQuery
	// Render is how a tool command prints: "auto", "json" or "markdown".
	Render string
	// All makes query write the complete result in Format.
	All bool

	Domain        string
	Dataset       string // doctor's --dataset
	BaseURL       string
	DiscoveryURL  string
	AppToken      string
	AppTokens     map[string]string // DATASF_APP_TOKENS: app tokens by domain
	Domains       string            // --domains: the allowlist, comma-separated
	Offline       bool
	Data          []string
	DataStrict    bool
	Catalog       string
	CacheDir      string
	NoCache       bool
	Server        string
	RESTAddr      string
	RESTAddrSet   bool // --rest-addr or DATASF_REST_ADDR given
	PublicURL     string
	HTTPAddr      string
	Store         string
	SampleSize    int
	MaxResults    int // --max-results: the memory store's bound (0: dualresp's default)
	LogLevel      string
	RESTTokens    []string
	MetricsTokens []string // DATASF_METRICS_TOKEN: the operator's tokens for /metrics
	ClientKey     string   // without RESTTokens, the user's key sent to --server (mcphttp.ClientKeyHeader)
	CORSOrigins   string
	Format        string // download format of fetch and query --all: csv, ndjson, json, parquet, geojson, xlsx or csv/ndjson/json.gz
	Output        string // -o FILE
	ImageOut      string // query --image: where the PNG is written (see imageOutput)
	Resume        string // fetch --resume FILE: the partial download to continue
	Expiration    time.Duration
	// ExpirationSet is whether --expiration (or its env) was given: stdio's
	// default differs from serve's.
	ExpirationSet bool

	// The portals' politeness limits and timeout (datasf.UpstreamLimits).
	UpstreamTimeout     time.Duration
	UpstreamConcurrency int
	UpstreamRate        float64
	UpstreamWait        time.Duration
	// Replicas share the limits (datasf.UpstreamLimits.Replicas).
	Replicas int

	Stdin          io.Reader
	Stdout, Stderr io.Writer
}
