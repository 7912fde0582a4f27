package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/localportal"
)

// The command line is a cobra command tree: per-command help, `help CMD`,
// GNU-style flags that may follow the positional arguments, and shell
// completion come with it. parseConfig only parses: every command's RunE
// records the config and returns; run(ctx, cfg) does the work.

// errHelp is returned by parseConfig when it printed help, a version or a
// completion script instead of producing a command to run.
var errHelp = flag.ErrHelp

// usageError is a command-line mistake: main prints it with the usage of
// the command it concerns and exits with status 2.
type usageError struct {
	err   error
	usage string // the command's synopsis and flags
	name  string // the command's path, e.g. "datasf-mcp query"
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// toolCommand is a command that runs one MCP tool.
type toolCommand struct {
	name, tool string
	short      string
	example    string
}

// toolCommands are the commands of the tools, in the order of the tool
// list. Each one's flags are the tool's arguments (datasf.ToolSpecs).
var toolCommands = []toolCommand{
	{"search", "search_datasf", "search the catalog by keywords",
		`datasf-mcp search "police incidents" --limit 3 --offline`},
	{"list", "list_datasf", "the newest datasets, optionally of one category",
		`datasf-mcp list --category "Public Safety" --offline`},
	{"schema", "get_schema", "a dataset's columns and exact row count",
		`datasf-mcp schema wg3w-h783 --offline`},
	{"query", "query_datasf", "run SoQL on a dataset: a sample, the exact total and a link to the whole result",
		`datasf-mcp query rqzj-sfat "SELECT applicant, status WHERE status = 'APPROVED'" --offline --all -o approved.csv`},
	{"results", "list_results", "the stored results of this session (or bearer token) that are still available",
		`datasf-mcp results --server http://127.0.0.1:8080`},
	{"analyze", "analyze_results", "read-only SQL (SQLite) over stored results, for joins across datasets",
		`datasf-mcp analyze "SELECT status, count(*) AS n FROM trucks GROUP BY status" --query "trucks=rqzj-sfat:SELECT applicant, status" --offline`},
}

// namedQuery is analyze's --query NAME=DATASET_ID:SOQL: a query run first,
// in the same session, whose stored result becomes table NAME.
type namedQuery struct {
	Name, DatasetID, SoQL string
}

// Output renderings of the tool commands.
const (
	renderAuto     = "auto"     // markdown on a terminal, JSON otherwise
	renderJSON     = "json"     // the structured content, indented
	renderMarkdown = "markdown" // the tool's text: summary and table
)

// parseConfig reads the command line and the environment, and checks every
// value it can before anything loads. Errors are *usageError. Help, version
// and completion output go to out; parseConfig then returns errHelp.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (config, error) {
	p := &parser{getenv: getenv}
	root := p.commands()
	root.SetOut(out)
	root.SetErr(out)
	root.SetArgs(args)
	if err := singleDashCheck(root, args); err != nil {
		return config{}, err
	}
	cmd, err := root.ExecuteC()
	if err != nil {
		var ue *usageError
		if !errors.As(err, &ue) {
			ue = &usageError{err: err}
		}
		if ue.usage == "" {
			ue.usage, ue.name = usageText(cmd), cmd.CommandPath()
		}
		return p.cfg, ue
	}
	if !p.ran {
		return p.cfg, errHelp
	}
	return p.cfg, nil
}

// parser holds the config the flags fill while one command line is parsed.
type parser struct {
	getenv func(string) string
	cfg    config
	ran    bool

	expiration string
	data       []string
	json       bool
	render     string
	results    []string
	queries    []string
}

func (p *parser) env(name, def string) string {
	if v := p.getenv(name); v != "" {
		return v
	}
	return def
}

func (p *parser) envBool(name string) bool {
	v := strings.ToLower(p.getenv(name))
	return v == "true" || v == "1" || v == "yes"
}

// Flag groups, shown under their own headings in help.
const (
	groupOutput    = "Output"
	groupPortal    = "Portal"
	groupServer    = "Server"
	groupArguments = "Arguments"
)

// addGroup adds the flags of fs to cmd, marked to show under the heading
// name in help.
func addGroup(cmd *cobra.Command, name string, fs *pflag.FlagSet) {
	fs.SortFlags = false
	n := 0
	cmd.Flags().VisitAll(func(*pflag.Flag) { n++ })
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[groupKey] = []string{name}
		f.Annotations[orderKey] = []string{fmt.Sprintf("%04d", n)}
		n++
	})
	cmd.Flags().AddFlagSet(fs)
}

func init() {
	cobra.EnableCommandSorting = false // the commands in the order of the tools
}

// groupKey is the flag annotation naming its help heading.
const groupKey = "datasf-mcp/group"

// orderKey is the flag annotation giving its place in help: the order in
// which the flags were declared (the tool's arguments in schema order).
const orderKey = "datasf-mcp/order"

// portalFlags are the flags of every command that reads the portal.
func (p *parser) portalFlags(cmd *cobra.Command) {
	c := &p.cfg
	fs := pflag.NewFlagSet(groupPortal, pflag.ContinueOnError)
	fs.BoolVar(&c.Offline, "offline", p.envBool("DATASF_OFFLINE"),
		"serve a built-in generated snapshot from an in-process fake portal; no network (env DATASF_OFFLINE=true)")
	fs.StringArrayVar(&p.data, "data", nil,
		"with --offline: serve the portal's exports as downloaded: a CSV, JSON, GeoJSON or rows.json(+view.json) `FILE`, a directory of them, or ID=FILE; DOMAIN=FILE or DOMAIN=ID=FILE serves it on another portal domain; repeatable (env DATASF_DATA, a list separated by "+string(filepath.ListSeparator)+")")
	fs.BoolVar(&c.DataStrict, "data-strict", p.envBool("DATASF_DATA_STRICT"),
		"with --data: load every file before serving and stop at the first that does not load (env DATASF_DATA_STRICT=true)")
	fs.StringVar(&c.Catalog, "catalog", p.env("DATASF_CATALOG", ""),
		"with --offline: load a catalog JSONL `FILE` (one Views-like document a line) for search and schemas (env DATASF_CATALOG)")
	fs.StringVar(&c.CacheDir, "cache-dir", p.env("DATASF_CACHE_DIR", localportal.DefaultCacheDir()),
		"with --offline: keep the datasets built into SQLite files in `DIR` for later starts; rebuilt when their source changes (env DATASF_CACHE_DIR)")
	fs.BoolVar(&c.NoCache, "no-cache", p.envBool("DATASF_NO_CACHE"),
		"with --offline: build the datasets in a temporary directory for this process only (env DATASF_NO_CACHE=true)")
	fs.StringVar(&c.Domain, "domain", p.env("DATASF_DOMAIN", "data.sfgov.org"), "the Socrata portal's `DOMAIN`, the tools' default (env DATASF_DOMAIN); search also takes a,b or * (every portal), list * (the portals)")
	fs.StringVar(&c.Domains, "domains", p.env("DATASF_DOMAINS", ""), "allow the tools only these other portal `DOMAINS` (comma-separated); default any public Socrata portal (env DATASF_DOMAINS)")
	fs.StringVar(&c.BaseURL, "base-url", p.env("DATASF_BASE_URL", ""), "base `URL` of the portal's APIs (default https://DOMAIN; env DATASF_BASE_URL)")
	fs.StringVar(&c.DiscoveryURL, "discovery-url", p.env("DATASF_DISCOVERY_URL", "https://api.us.socrata.com"), "Socrata Discovery API base `URL` (env DATASF_DISCOVERY_URL)")
	fs.StringVar(&c.LogLevel, "log-level", p.env("DATASF_LOG_LEVEL", "info"), "log at `LEVEL`: debug, info, warn or error; logs go to stderr (env DATASF_LOG_LEVEL)")
	addGroup(cmd, groupPortal, fs)
}

// serverFlags are the flags of the commands that keep serving.
func (p *parser) serverFlags(cmd *cobra.Command) {
	c := &p.cfg
	fs := pflag.NewFlagSet(groupServer, pflag.ContinueOnError)
	if cmd.Name() == "serve" {
		fs.StringVar(&c.HTTPAddr, "http", p.env("DATASF_HTTP", ""), "listen on `ADDR` for MCP (Streamable HTTP at /mcp) and REST: PORT (127.0.0.1 only), :PORT (every interface) or HOST:PORT (env DATASF_HTTP)")
	} else {
		fs.StringVar(&c.RESTAddr, "rest-addr", p.env("DATASF_REST_ADDR", "127.0.0.1:8765"), "serve the REST API of full results on `ADDR`: PORT (127.0.0.1 only), :PORT or HOST:PORT (env DATASF_REST_ADDR)")
	}
	fs.StringVar(&c.PublicURL, "public-url", p.env("DATASF_PUBLIC_URL", ""), "base `URL` of result links, when behind a proxy (default http://LISTEN-ADDR; env DATASF_PUBLIC_URL)")
	fs.StringVar(&c.Store, "store", p.env("DATASF_STORE", "memory"), "keep results in `STORE`: memory, sqlite:PATH or redis://HOST:PORT/DB (env DATASF_STORE)")
	fs.StringVar(&p.expiration, "expiration", p.env("DATASF_EXPIRATION", "15m"), "keep a stored result for `DURATION` (such as 15m or 2h) after its last access (env DATASF_EXPIRATION)")
	fs.IntVar(&c.SampleSize, "sample-size", 15, fmt.Sprintf("sample rows a query returns to the model when it asks for no number (1-%d)", datasf.MaxSampleSize))
	fs.StringVar(&c.CORSOrigins, "cors-origins", p.env("DATASF_CORS_ORIGINS", ""), "browser `ORIGINS` (comma-separated) allowed to call the REST API cross-origin (env DATASF_CORS_ORIGINS)")
	addGroup(cmd, groupServer, fs)
}

// commands builds the command tree.
func (p *parser) commands() *cobra.Command {
	root := &cobra.Command{
		Use:   "datasf-mcp",
		Short: "an MCP server for San Francisco's open data (any Socrata portal works)",
		Long: `Without a command, datasf-mcp serves MCP on stdio (as Claude Desktop and Claude
Code run it) and the REST API of full results on --rest-addr.

Query results come back as dual responses: the model sees a small sample, the
exact total and a link; the complete result is served at that link (paged JSON,
CSV/NDJSON/JSON export).`,
		Example: `datasf-mcp --offline                      # stdio server on the built-in snapshot
datasf-mcp serve --http 8080 --offline    # Streamable HTTP at http://127.0.0.1:8080/mcp
datasf-mcp query wg3w-h783 "SELECT incident_category, count(*) AS n GROUP BY incident_category ORDER BY n DESC" --offline`,
		Version:       versionString(),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.finish(cmd, "")
		},
	}
	root.SetVersionTemplate("{{.Version}}\n")
	// The tools' argument names work as flags too: --sample_size is --sample-size.
	root.SetGlobalNormalizationFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &usageError{err: err, usage: usageText(cmd), name: cmd.CommandPath()}
	})
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) { fmt.Fprint(cmd.OutOrStdout(), helpText(cmd)) })
	root.SetUsageFunc(func(cmd *cobra.Command) error { fmt.Fprint(cmd.OutOrStderr(), usageText(cmd)); return nil })
	root.CompletionOptions.HiddenDefaultCmd = false
	p.serverFlags(root)
	p.portalFlags(root)
	// cobra adds -v, --version only when the root command itself runs;
	// added now, `datasf-mcp help` lists it as --help does.
	root.InitDefaultVersionFlag()

	for _, tc := range toolCommands {
		root.AddCommand(p.toolCommand(tc))
	}

	fetch := &cobra.Command{
		Use:   "fetch URL",
		Short: "download a complete result from its link, with a progress bar",
		Long: `Fetch downloads the complete result behind a result link (http://HOST/resources/ID,
as printed by query --server or shown to the model) to stdout or -o FILE. With
DATASF_REST_TOKEN set, its first token is sent as the bearer token.`,
		Example: `datasf-mcp fetch http://127.0.0.1:8080/resources/ID --format csv -o result.csv`,
		Args:    p.exactArgs(1, "URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p.cfg.Args = args
			return p.finish(cmd, "fetch")
		},
	}
	out := pflag.NewFlagSet(groupOutput, pflag.ContinueOnError)
	out.StringVar(&p.cfg.Format, "format", p.env("DATASF_FORMAT", ""), "download as `FORMAT`: csv, ndjson or json (default from -o's extension, else csv; env DATASF_FORMAT)")
	out.StringVarP(&p.cfg.Output, "output", "o", p.env("DATASF_OUTPUT", ""), "write to `FILE` instead of stdout (env DATASF_OUTPUT)")
	out.StringVar(&p.cfg.LogLevel, "log-level", p.env("DATASF_LOG_LEVEL", "info"), "log at `LEVEL`: debug, info, warn or error (env DATASF_LOG_LEVEL)")
	addGroup(fetch, groupOutput, out)
	completeWords(fetch, "format", "csv", "ndjson", "json")
	root.AddCommand(fetch)

	serve := &cobra.Command{
		Use:   "serve --http ADDR",
		Short: "serve MCP over Streamable HTTP at /mcp and the REST API at /resources/",
		Long: `Serve runs a shared server: MCP over Streamable HTTP at /mcp and the REST API of
full results at /resources/, on one address. Result links from it stay valid
while it runs, so query --server URL and fetch work against it.`,
		Example: `datasf-mcp serve --http 8080 --offline`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.finish(cmd, "serve")
		},
	}
	p.serverFlags(serve)
	p.portalFlags(serve)
	root.AddCommand(serve)

	version := &cobra.Command{
		Use:     "version",
		Short:   "print the version, commit and build of this binary",
		Example: "datasf-mcp version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.finish(cmd, "version")
		},
	}
	root.AddCommand(version)

	help := &cobra.Command{
		Use:     "help [COMMAND]",
		Short:   "print the help of datasf-mcp or of one command",
		Example: "datasf-mcp help query",
		Args:    cobra.MaximumNArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			var names []string
			for _, c := range root.Commands() {
				if c.IsAvailableCommand() {
					names = append(names, c.Name())
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			target := root
			if len(args) == 1 {
				c, rest, err := root.Find(args)
				if err != nil || c == root || len(rest) > 0 {
					return &usageError{err: fmt.Errorf("unknown command %q; commands: %s", args[0], commandNames(root)), usage: usageText(cmd), name: cmd.CommandPath()}
				}
				target = c
			}
			fmt.Fprint(cmd.OutOrStdout(), helpText(target))
			return nil
		},
	}
	root.SetHelpCommand(help)
	return root
}

// commandNames lists the commands a user can run.
func commandNames(root *cobra.Command) string {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

// toolCommand builds the command of one tool: a flag per argument of the
// tool (names with - for _), the required text arguments also as
// positional arguments, and the output flags.
func (p *parser) toolCommand(tc toolCommand) *cobra.Command {
	spec := toolSpec(tc.tool)
	var positional []datasf.ArgSpec
	for _, a := range spec.Args {
		if a.Required && a.Kind == "string" {
			positional = append(positional, a)
		}
	}
	use := tc.name
	for _, a := range positional {
		use += " " + strings.ToUpper(a.Name)
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   tc.short,
		Long:    fmt.Sprintf("Runs the tool %s. %s", spec.Name, spec.Description),
		Example: tc.example,
		Aliases: []string{spec.Name},
		Args:    cobra.MaximumNArgs(len(positional)),
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{err: err, usage: usageText(c), name: c.CommandPath()}
	})
	args := pflag.NewFlagSet(groupArguments, pflag.ContinueOnError)
	flags := map[string]func() (any, bool){}
	for _, a := range spec.Args {
		if a.Name == "format" || a.Name == "domain" { // --domain is a portal flag
			continue
		}
		name := flagName(a.Name)
		help := argHelp(a)
		switch a.Kind {
		case "string":
			v := args.String(name, "", help)
			flags[a.Name] = func() (any, bool) { return *v, args.Changed(name) }
			if a.Enum != nil {
				completeWords(cmd, name, a.Enum...)
			}
		case "integer":
			def, _ := a.Default.(int)
			v := args.Int(name, def, help)
			if strings.Contains(help, "default") {
				args.Lookup(name).DefValue = "0" // the help says it already
			}
			flags[a.Name] = func() (any, bool) { return *v, args.Changed(name) }
		case "boolean":
			def, _ := a.Default.(bool)
			v := args.Bool(name, def, help)
			flags[a.Name] = func() (any, bool) { return *v, args.Changed(name) }
		case "object":
			args.StringArrayVar(&p.results, name, nil, strings.TrimSuffix(help, ".")+"; repeatable `NAME=RESULT`")
			flags[a.Name] = func() (any, bool) {
				m := map[string]any{}
				for _, kv := range p.results {
					k, v, _ := strings.Cut(kv, "=")
					m[k] = v
				}
				return m, len(p.results) > 0
			}
		}
	}
	if tc.name == "analyze" {
		args.StringArrayVar(&p.queries, "query", nil,
			"run query_datasf first, in the same session, and load its result as table NAME; repeatable `NAME=DATASET_ID:SOQL`")
	}
	addGroup(cmd, groupArguments, args)

	out := pflag.NewFlagSet(groupOutput, pflag.ContinueOnError)
	formats := []string{renderAuto, renderJSON, renderMarkdown}
	formatHelp := "print as `FORMAT`: auto (markdown tables on a terminal, JSON when piped or to a file), json or markdown"
	if tc.name == "query" {
		formats = append(formats, "csv", "ndjson")
		formatHelp += "; with --all also csv or ndjson (default from -o's extension, else csv)"
		out.BoolVar(&p.cfg.All, "all", false, "write the complete result (not the sample) to stdout, or to -o FILE and the answer to stdout; with a progress bar")
	}
	out.StringVar(&p.render, "format", "", formatHelp)
	completeWords(cmd, "format", formats...)
	out.BoolVar(&p.json, "json", false, "print JSON (the structured result) even on a terminal; same as --format json")
	out.StringVarP(&p.cfg.Output, "output", "o", "", "write to `FILE` instead of stdout")
	out.StringVar(&p.cfg.Server, "server", p.env("DATASF_SERVER", ""),
		"call a running datasf-mcp serve at `URL` (e.g. http://127.0.0.1:8080), so result links stay valid after this command (env DATASF_SERVER)")
	addGroup(cmd, groupOutput, out)
	p.portalFlags(cmd)

	cmd.RunE = func(c *cobra.Command, pos []string) error {
		p.cfg.Tool = spec.Name
		p.cfg.ToolArgs = map[string]any{}
		fromFlag := map[string]bool{}
		for _, a := range spec.Args {
			get, ok := flags[a.Name]
			if !ok {
				continue
			}
			if v, given := get(); given {
				p.cfg.ToolArgs[a.Name] = v
				fromFlag[a.Name] = true
			}
		}
		if f := c.Flags().Lookup("domain"); f != nil && f.Changed {
			p.toolDomain()
		}
		for i, v := range pos {
			a := positional[i]
			if fromFlag[a.Name] {
				return p.usage(c, fmt.Errorf("%s is given twice: as an argument and as --%s", strings.ToUpper(a.Name), flagName(a.Name)))
			}
			p.cfg.ToolArgs[a.Name] = v
		}
		for _, a := range positional {
			if _, ok := p.cfg.ToolArgs[a.Name]; !ok {
				return p.usage(c, fmt.Errorf("%s needs %s (or --%s)", tc.name, strings.ToUpper(a.Name), flagName(a.Name)))
			}
		}
		if err := p.toolArgsCheck(c, spec, fromFlag); err != nil {
			return err
		}
		return p.finish(c, tc.name)
	}
	return cmd
}

// toolArgsCheck parses analyze's --query and --results, and validates the
// arguments as the tool will, so mistakes are reported before anything
// loads.
func (p *parser) toolArgsCheck(c *cobra.Command, spec datasf.ToolSpec, fromFlag map[string]bool) error {
	check := map[string]any{}
	for k, v := range p.cfg.ToolArgs {
		check[k] = v
	}
	for _, kv := range p.results {
		if k, v, ok := strings.Cut(kv, "="); !ok || k == "" || v == "" {
			return p.usage(c, fmt.Errorf("--results wants NAME=RESULT (a result id, resource:// URI or URL); got %q", kv))
		}
	}
	for _, q := range p.queries {
		name, rest, ok := strings.Cut(q, "=")
		id, soql, ok2 := strings.Cut(rest, ":")
		if !ok || !ok2 || name == "" || strings.TrimSpace(soql) == "" {
			return p.usage(c, fmt.Errorf("--query wants NAME=DATASET_ID:SOQL; got %q", q))
		}
		p.cfg.Queries = append(p.cfg.Queries, namedQuery{Name: name, DatasetID: strings.TrimSpace(id), SoQL: soql})
		if err := toolSpec("query_datasf").Check(map[string]any{"dataset_id": strings.TrimSpace(id), "soql": soql}); err != nil {
			return p.usage(c, fmt.Errorf("--query %s: %v", name, err))
		}
		// The result does not exist yet; validate with a stand-in.
		m := map[string]any{}
		if given, ok := check["results"].(map[string]any); ok {
			for k, v := range given {
				m[k] = v
			}
		}
		m[name] = "resource://" + name
		check["results"] = m
	}
	if _, ok := check["results"]; !ok && spec.Name == "analyze_results" {
		return p.usage(c, errors.New("analyze needs tables: --results NAME=RESULT (a stored result) or --query NAME=DATASET_ID:SOQL"))
	}
	if err := spec.Check(check); err != nil {
		msg := err.Error()
		for _, a := range spec.Args {
			if fromFlag[a.Name] {
				msg = regexp.MustCompile(`\b`+a.Name+`\b`).ReplaceAllString(msg, "--"+flagName(a.Name))
			}
		}
		return p.usage(c, errors.New(msg))
	}
	return nil
}

func (p *parser) usage(c *cobra.Command, err error) error {
	return &usageError{err: err, usage: usageText(c), name: c.CommandPath()}
}

// exactArgs wants n positional arguments, named in the error.
func (p *parser) exactArgs(n int, names string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return p.usage(c, fmt.Errorf("%s takes %s; got %d argument(s)", c.Name(), names, len(args)))
		}
		return nil
	}
}

// finish checks the values that do not depend on the command's tool and
// completes the config.
func (p *parser) finish(cmd *cobra.Command, command string) error {
	c := &p.cfg
	c.Command = command
	fail := func(format string, a ...any) error { return p.usage(cmd, fmt.Errorf(format, a...)) }
	changed := func(name string) bool { f := cmd.Flags().Lookup(name); return f != nil && f.Changed }

	if changed("data") {
		c.Data = p.data
	} else if v := p.getenv("DATASF_DATA"); v != "" {
		c.Data = filepath.SplitList(v)
	}
	c.RESTAddrSet = p.getenv("DATASF_REST_ADDR") != "" || changed("rest-addr")
	if cmd.Flags().Lookup("expiration") != nil {
		d, err := time.ParseDuration(p.expiration)
		if err != nil || d <= 0 {
			hint := ""
			if _, nerr := strconv.Atoi(p.expiration); nerr == nil {
				hint = " (a number needs a unit: " + p.expiration + "m, " + p.expiration + "s)"
			}
			return fail("--expiration must be a positive duration such as 15m or 2h; got %q%s", p.expiration, hint)
		}
		c.Expiration = d
	} else {
		c.Expiration = 15 * time.Minute
	}
	if c.SampleSize < 1 || c.SampleSize > datasf.MaxSampleSize {
		return fail("--sample-size must be between 1 and %d; got %d", datasf.MaxSampleSize, c.SampleSize)
	}
	if c.Store == "" {
		c.Store = "memory"
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fail("--log-level must be debug, info, warn or error; got %q", c.LogLevel)
	}
	if (len(c.Data) > 0 || c.Catalog != "") && !c.Offline {
		return fail("--data and --catalog need --offline (they load files into the in-process fake portal)")
	}
	if c.Server != "" {
		if c.Offline {
			return fail("--server and --offline exclude each other: the server at --server answers (start it with --offline)")
		}
		if !strings.HasPrefix(c.Server, "http://") && !strings.HasPrefix(c.Server, "https://") {
			return fail("--server wants the URL of a running datasf-mcp serve, e.g. http://127.0.0.1:8080; got %q", c.Server)
		}
	}
	var err error
	switch command {
	case "":
		if c.RESTAddr, err = normalizeAddr(c.RESTAddr); err != nil {
			return fail("--rest-addr: %v", err)
		}
	case "serve":
		if c.HTTPAddr == "" {
			return fail("serve needs --http ADDR, e.g. --http 8080 (127.0.0.1:8080), --http :8080 (every interface) or --http HOST:PORT")
		}
		if c.HTTPAddr, err = normalizeAddr(c.HTTPAddr); err != nil {
			return fail("--http: %v", err)
		}
	case "fetch":
		if c.Format, err = exportFormat(c.Format, c.Output); err != nil {
			return fail("%v", err)
		}
	}
	if c.Tool != "" {
		if err := p.outputFlags(cmd); err != nil {
			return err
		}
	}
	for _, tok := range strings.Split(p.getenv("DATASF_REST_TOKEN"), ",") {
		if tok = strings.TrimSpace(tok); tok != "" {
			c.RESTTokens = append(c.RESTTokens, tok)
		}
	}
	c.AppToken = p.getenv("SOCRATA_APP_TOKEN")
	if c.AppTokens, err = appTokens(p.getenv("DATASF_APP_TOKENS")); err != nil {
		return fail("%v", err)
	}
	p.ran = true
	return nil
}

// outputFlags resolves --format, --json, --all and -o of a tool command.
func (p *parser) outputFlags(cmd *cobra.Command) error {
	c := &p.cfg
	fail := func(format string, a ...any) error { return p.usage(cmd, fmt.Errorf(format, a...)) }
	render := p.render
	if p.json {
		if render != "" && render != renderJSON {
			return fail("--json and --format %s exclude each other", render)
		}
		render = renderJSON
	}
	switch render {
	case "", renderAuto:
		c.Render = renderAuto
	case renderJSON, renderMarkdown:
		c.Render = render
	case "csv", "ndjson":
		if c.Tool != "query_datasf" {
			return fail("--format must be auto, json or markdown; got %q", render)
		}
		if !c.All {
			return fail("--format %s is a format of the complete result: add --all (the sample prints as json or markdown)", render)
		}
		c.Format = render
	default:
		if c.Tool == "query_datasf" {
			return fail("--format must be auto, json or markdown, or with --all csv, ndjson or json; got %q", render)
		}
		return fail("--format must be auto, json or markdown; got %q", render)
	}
	if c.All {
		if c.Format == "" && render == renderJSON {
			c.Format = "json"
		}
		if render == renderMarkdown {
			return fail("--all writes the complete result as csv, ndjson or json, not markdown")
		}
		var err error
		if c.Format, err = exportFormat(c.Format, c.Output); err != nil {
			return fail("%v", err)
		}
	}
	return nil
}

// exportFormat checks a download format, or picks it from the output
// file's extension (csv by default).
func exportFormat(format, output string) (string, error) {
	if format == "" {
		switch strings.ToLower(filepath.Ext(output)) {
		case ".ndjson", ".jsonl":
			return "ndjson", nil
		case ".json":
			return "json", nil
		}
		return "csv", nil
	}
	switch format {
	case "csv", "ndjson", "json":
		return format, nil
	}
	return "", fmt.Errorf("--format must be csv, ndjson or json; got %q", format)
}

// normalizeAddr turns PORT, :PORT, HOST:PORT (or http://HOST:PORT) into a
// listen address. A bare port listens on 127.0.0.1 only.
func normalizeAddr(addr string) (string, error) {
	a := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(addr), "http://"), "/")
	if _, err := strconv.ParseUint(a, 10, 16); err == nil {
		a = "127.0.0.1:" + a
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return "", fmt.Errorf("want PORT, :PORT or HOST:PORT; got %q", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("port %q is not a number from 0 to 65535 (in %q)", port, addr)
	}
	if strings.ContainsAny(host, "/ ") {
		return "", fmt.Errorf("want PORT, :PORT or HOST:PORT; got %q", addr)
	}
	return a, nil
}

// singleDashCheck refuses a long flag written with one dash (-offline):
// GNU-style parsing would read it as -o ffline.
func singleDashCheck(root *cobra.Command, args []string) error {
	cmd := root
	if c, _, err := root.Find(args); err == nil {
		cmd = c
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") || len(a) < 3 {
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		if cmd.Flags().Lookup(name) != nil || cmd.InheritedFlags().Lookup(name) != nil || name == "help" {
			return &usageError{err: fmt.Errorf("-%s: long flags take two dashes: --%s", name, a[1:]), usage: usageText(cmd), name: cmd.CommandPath()}
		}
	}
	return nil
}

// flagName is the flag of a tool argument: sample_size -> sample-size.
func flagName(arg string) string { return strings.ReplaceAll(arg, "_", "-") }

// argHelp is a tool argument's flag help: its description, which already
// names its limits and default in most cases, and the limits when not.
func argHelp(a datasf.ArgSpec) string {
	help := a.Description
	var limits []string
	switch {
	case a.Kind == "string" && a.Max > 0 && !strings.Contains(help, strconv.Itoa(a.Max)):
		if a.Min > 0 {
			limits = append(limits, fmt.Sprintf("%d-%d characters", a.Min, a.Max))
		} else {
			limits = append(limits, fmt.Sprintf("at most %d characters", a.Max))
		}
	case a.Kind == "integer" && !strings.Contains(help, fmt.Sprintf("%d-%d", a.Min, a.Max)):
		limits = append(limits, fmt.Sprintf("%d-%d", a.Min, a.Max))
	case a.Kind == "object":
		limits = append(limits, fmt.Sprintf("%d-%d entries", a.Min, a.Max))
	}
	if len(limits) > 0 {
		help = strings.TrimSuffix(help, ".") + " (" + strings.Join(limits, ", ") + ")."
	}
	return help
}

// toolSpecs is the description of every tool, built once per process.
var toolSpecs = sync.OnceValue(datasf.ToolSpecs)

// toolSpec returns the description of the tool named name.
func toolSpec(name string) datasf.ToolSpec {
	specs := toolSpecs()
	i := slices.IndexFunc(specs, func(s datasf.ToolSpec) bool { return s.Name == name })
	if i < 0 {
		panic("datasf-mcp: no tool " + name) // the command table names a tool that is gone
	}
	return specs[i]
}

// completeWords completes a flag's value from a fixed list.
func completeWords(cmd *cobra.Command, flag string, words ...string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return words, cobra.ShellCompDirectiveNoFileComp
	})
}
