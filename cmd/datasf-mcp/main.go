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
	ctx, stop := signalContext()
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
	err = run(ctx, cfg)
	// A command stopped by SIGINT or SIGTERM before it finished says so
	// and exits 128 + the signal's number (130, 143), as a shell reports a
	// command the signal killed: a script never takes its output for a
	// whole one. The servers shut down cleanly on a signal: that is how
	// they end.
	var sig signalCause
	if err != nil && errors.As(context.Cause(ctx), &sig) && !servingCommand(cfg.Command) {
		var stopped *stoppedError
		if errors.As(err, &stopped) {
			fmt.Fprintln(os.Stderr, "datasf-mcp:", err)
		} else {
			fmt.Fprintf(os.Stderr, "datasf-mcp: %s before the command finished\n", sig)
		}
		os.Exit(sig.exitCode())
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "datasf-mcp:", err)
		os.Exit(1)
	}
}

// signalCause is the cause of main's context when SIGINT or SIGTERM
// stopped the command.
type signalCause struct{ sig syscall.Signal }

func (s signalCause) Error() string { return "interrupted by " + signalName(s.sig) }

// exitCode is the shell's status of a command the signal ended: 128 + its
// number.
func (s signalCause) exitCode() int { return 128 + int(s.sig) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// signalContext is a context cancelled by the first SIGINT or SIGTERM,
// with the signal as its cause (signalCause). A second signal ends the
// process at once, with the same status a shell gives.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			case s := <-sigs:
				sc := signalCause{sig: s.(syscall.Signal)}
				if n > 0 {
					fmt.Fprintf(os.Stderr, "datasf-mcp: %s again: stopping now\n", sc)
					os.Exit(sc.exitCode())
				}
				cancel(sc)
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(context.Canceled)
	}
}

// servingCommand reports whether command serves until it is stopped
// (stdio, serve): a signal is its normal end.
func servingCommand(command string) bool {
	return command == "" || command == "serve"
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
	// Resume is fetch's and query --all's --resume FILE: the partial file
	// to continue (FILE.part, left by an interrupted download).
	Resume string
	// Argv is the command line as given (without the program's name): an
	// interrupted download says the command that continues it.
	Argv       []string
	Expiration time.Duration
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
