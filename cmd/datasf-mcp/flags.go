package main

import (
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

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

// usage is err, a mistake in the use of cmd.
func usage(cmd *cobra.Command, err error) error {
	return &usageError{err: err, usage: usageText(cmd), name: cmd.CommandPath()}
}

// exactArgs wants n positional arguments, named in the error.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usage(cmd, fmt.Errorf("%s takes %s; got %d argument(s)", cmd.Name(), names, len(args)))
		}
		return nil
	}
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

// parser holds the config one command's flags fill while a command line
// is parsed, and the flag values that need reading before they go in it.
type parser struct {
	getenv func(string) string
	cfg    config
	ran    bool // the command was parsed and checked: cfg is complete

	expiration string
	upTimeout  string
	upWait     string
	data       []string
	exports    bool // the tool command has --all
	json       bool
	render     string
	results    []string
	queries    []string
	badEnv     []string // environment values that did not parse
}

// newParser returns a parser whose config holds the defaults of what a
// command has no flag for.
func newParser(getenv func(string) string) *parser {
	return &parser{getenv: getenv, cfg: config{
		Store: "memory", SampleSize: 15, Expiration: 15 * time.Minute, LogLevel: "info",
	}}
}

func (p *parser) env(name, def string) string {
	if v := p.getenv(name); v != "" {
		return v
	}
	return def
}

// envInt and envFloat read a number from the environment; what does not
// parse is kept as an out-of-range value that finish reports.
func (p *parser) envInt(name string) int {
	v := p.getenv(name)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		p.badEnv = append(p.badEnv, fmt.Sprintf("%s must be a whole number; got %q", name, v))
	}
	return n
}

func (p *parser) envFloat(name string) float64 {
	v := p.getenv(name)
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		p.badEnv = append(p.badEnv, fmt.Sprintf("%s must be a number; got %q", name, v))
	}
	return f
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

// groupKey is the flag annotation naming its help heading.
const groupKey = "datasf-mcp/group"

// orderKey is the flag annotation giving its place in help: the order in
// which the flags were declared (the tool's arguments in schema order).
const orderKey = "datasf-mcp/order"

// group adds to cmd the flags declare declares, marked to show under the
// heading name in help, after the flags cmd has.
func group(cmd *cobra.Command, name string, declare func(fs *pflag.FlagSet)) {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	declare(fs)
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

// portalFlags are the flags of every command that reads the portal;
// finish checks them.
func (p *parser) portalFlags(cmd *cobra.Command) {
	c := &p.cfg
	group(cmd, groupPortal, func(fs *pflag.FlagSet) {
		fs.BoolVar(&c.Offline, "offline", p.envBool("DATASF_OFFLINE"),
			"serve a built-in generated snapshot from an in-process fake portal; no network (env DATASF_OFFLINE=true)")
		fs.StringArrayVar(&p.data, "data", nil,
			"with --offline: serve the portal's exports as downloaded: a CSV, JSON, GeoJSON or rows.json(+view.json) `FILE`, a directory of them, or ID=FILE; DOMAIN=FILE or DOMAIN=ID=FILE serves it on another portal domain; repeatable (env DATASF_DATA, a list separated by "+string(filepath.ListSeparator)+")")
		fs.BoolVar(&c.DataStrict, "data-strict", p.envBool("DATASF_DATA_STRICT"),
			"with --data: load every file before serving and stop at the first that does not load (env DATASF_DATA_STRICT=true)")
		fs.StringVar(&c.Catalog, "catalog", p.env("DATASF_CATALOG", ""),
			"with --offline: load a catalog JSONL `FILE` (one Views-like document a line, with tags and page_views_total where known) for search and schemas; default on DataSF: the built-in catalog of its 630 datasets; none: the sample datasets alone (env DATASF_CATALOG)")
		fs.StringVar(&c.CacheDir, "cache-dir", p.env("DATASF_CACHE_DIR", localportal.DefaultCacheDir()),
			"keep in `DIR`: with --offline, the datasets built into SQLite files for later starts (rebuilt when their source changes); on a live portal, the column values search ranks by, for a day (env DATASF_CACHE_DIR)")
		fs.BoolVar(&c.NoCache, "no-cache", p.envBool("DATASF_NO_CACHE"),
			"keep nothing on disk: with --offline, build the datasets in a temporary directory for this process only; on a live portal, keep search's column values in memory (env DATASF_NO_CACHE=true)")
		fs.StringVar(&c.Domain, "domain", p.env("DATASF_DOMAIN", socrata.DefaultDomain), "the Socrata portal's `DOMAIN`, the tools' default (env DATASF_DOMAIN); search also takes a,b or * (every portal), list * (the portals)")
		fs.StringVar(&c.Domains, "domains", p.env("DATASF_DOMAINS", ""), "allow the tools only these other portal `DOMAINS` (comma-separated); default any public Socrata portal (env DATASF_DOMAINS)")
		fs.StringVar(&c.BaseURL, "base-url", p.env("DATASF_BASE_URL", ""), "base `URL` of the portal's APIs (default https://DOMAIN; env DATASF_BASE_URL)")
		fs.StringVar(&c.DiscoveryURL, "discovery-url", p.env("DATASF_DISCOVERY_URL", "https://api.us.socrata.com"), "Socrata Discovery API base `URL` (env DATASF_DISCOVERY_URL)")
		fs.StringVar(&p.upTimeout, "upstream-timeout", p.env("DATASF_UPSTREAM_TIMEOUT", "30s"),
			"bound each request to a portal, its answer's body included, by `DURATION` (env DATASF_UPSTREAM_TIMEOUT)")
		fs.IntVar(&c.UpstreamConcurrency, "upstream-concurrency", p.envInt("DATASF_UPSTREAM_CONCURRENCY"),
			fmt.Sprintf("at most `N` requests in flight to each portal, shared by tools, pages and exports; 0: %d (none with --offline), -1: no bound; x%d for a portal with an app token (env DATASF_UPSTREAM_CONCURRENCY)", datasf.DefaultUpstreamConcurrency, datasf.DefaultTokenFactor))
		fs.Float64Var(&c.UpstreamRate, "upstream-rate", p.envFloat("DATASF_UPSTREAM_RATE"),
			fmt.Sprintf("start at most `R` requests a second to each portal; 0: %g (none with --offline), -1: no bound; x%d for a portal with an app token (env DATASF_UPSTREAM_RATE)", datasf.DefaultUpstreamRate, datasf.DefaultTokenFactor))
		fs.StringVar(&p.upWait, "upstream-wait", p.env("DATASF_UPSTREAM_WAIT", "30s"),
			"a request waits for its turn under those limits at most `DURATION`, then fails with 503 and Retry-After (a tool: a rate_limit error) (env DATASF_UPSTREAM_WAIT)")
		fs.StringVar(&c.LogLevel, "log-level", p.env("DATASF_LOG_LEVEL", "info"), "log at `LEVEL`: debug, info, warn or error; logs go to stderr (env DATASF_LOG_LEVEL)")
	})
}

// serverFlags are the flags of the commands that keep serving: listen
// declares the address flag, then come the flags of the results they keep;
// finish checks them.
func (p *parser) serverFlags(cmd *cobra.Command, listen func(fs *pflag.FlagSet)) {
	c := &p.cfg
	group(cmd, groupServer, func(fs *pflag.FlagSet) {
		listen(fs)
		fs.StringVar(&c.PublicURL, "public-url", p.env("DATASF_PUBLIC_URL", ""), "base `URL` of result links, when behind a proxy (default http://LISTEN-ADDR; env DATASF_PUBLIC_URL)")
		fs.StringVar(&c.Store, "store", p.env("DATASF_STORE", ""), "keep results in `STORE`: memory, sqlite:PATH or redis://HOST:PORT/DB; with redis:// every replica sharing it shares sessions and the portals' limits too (default: serve memory, stdio a SQLite file in the user's cache directory, so links outlive the process; env DATASF_STORE)")
		fs.IntVar(&c.Replicas, "replicas", p.envInt("DATASF_REPLICAS"), "the `N` replicas that share the portals' limits: each keeps to 1/N of them when the store's Redis is unreachable (without Redis: always) (env DATASF_REPLICAS)")
		fs.StringVar(&p.expiration, "expiration", p.env("DATASF_EXPIRATION", "15m"), "keep a stored result for `DURATION` (such as 15m or 2h) after its last access (env DATASF_EXPIRATION)")
		fs.IntVar(&c.SampleSize, "sample-size", 15, fmt.Sprintf("show this many rows of a result as its sample when a call names no number (1 to %d)", datasf.MaxSampleSize))
		fs.StringVar(&c.CORSOrigins, "cors-origins", p.env("DATASF_CORS_ORIGINS", ""), "browser `ORIGINS` (comma-separated) allowed to call the REST API cross-origin (env DATASF_CORS_ORIGINS)")
		fs.IntVar(&c.MaxResults, "max-results", p.envInt("DATASF_MAX_RESULTS"),
			fmt.Sprintf("with --store memory, keep at most `N` results, pinned ones included (at most half pinned; default %d; env DATASF_MAX_RESULTS)", dualresp.DefaultMaxResources))
	})
}

// finish checks the values of the shared flags cmd has (the server and
// portal flags, --log-level) and reads the settings that are environment
// only. The command's own check comes after.
func (p *parser) finish(cmd *cobra.Command) error {
	c := &p.cfg
	has := func(name string) bool { return cmd.Flags().Lookup(name) != nil }
	fail := func(format string, a ...any) error { return usage(cmd, fmt.Errorf(format, a...)) }

	if has("expiration") {
		d, err := time.ParseDuration(p.expiration)
		if err != nil || d <= 0 {
			hint := ""
			if _, nerr := strconv.Atoi(p.expiration); nerr == nil {
				hint = " (a number needs a unit: " + p.expiration + "m, " + p.expiration + "s)"
			}
			return fail("--expiration must be a positive duration such as 15m or 2h; got %q%s", p.expiration, hint)
		}
		c.Expiration = d
		c.ExpirationSet = cmd.Flags().Changed("expiration") || p.getenv("DATASF_EXPIRATION") != ""
	}
	if has("upstream-timeout") {
		if len(p.badEnv) > 0 {
			return fail("%s", p.badEnv[0])
		}
		for _, d := range []struct {
			flag, value string
			to          *time.Duration
		}{{"upstream-timeout", p.upTimeout, &c.UpstreamTimeout}, {"upstream-wait", p.upWait, &c.UpstreamWait}} {
			v, err := time.ParseDuration(d.value)
			if err != nil || v <= 0 {
				return fail("--%s must be a positive duration such as 30s or 2m; got %q", d.flag, d.value)
			}
			*d.to = v
		}
		if c.UpstreamConcurrency < -1 {
			return fail("--upstream-concurrency must be -1 (no bound), 0 (the default) or more; got %d", c.UpstreamConcurrency)
		}
		if c.UpstreamRate < 0 && c.UpstreamRate != -1 {
			return fail("--upstream-rate must be -1 (no bound), 0 (the default) or more; got %g", c.UpstreamRate)
		}
	}
	if c.SampleSize < 1 || c.SampleSize > datasf.MaxSampleSize {
		return fail("--sample-size must be between 1 and %d; got %d", datasf.MaxSampleSize, c.SampleSize)
	}
	if c.MaxResults < 0 {
		return fail("--max-results must be 0 (the default, %d) or more; got %d", dualresp.DefaultMaxResources, c.MaxResults)
	}
	if has("replicas") && c.Replicas < 0 {
		return fail("--replicas must be 0 or more (0 and 1: this replica alone); got %d", c.Replicas)
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fail("--log-level must be debug, info, warn or error; got %q", c.LogLevel)
	}
	if has("data") {
		if cmd.Flags().Changed("data") {
			c.Data = p.data
		} else if v := p.getenv("DATASF_DATA"); v != "" {
			c.Data = filepath.SplitList(v)
		}
		if (len(c.Data) > 0 || c.Catalog != "") && !c.Offline {
			return fail("--data and --catalog need --offline (they load files into the in-process fake portal)")
		}
	}
	for _, tok := range strings.Split(p.getenv("DATASF_REST_TOKEN"), ",") {
		if tok = strings.TrimSpace(tok); tok != "" {
			c.RESTTokens = append(c.RESTTokens, tok)
		}
	}
	for _, tok := range strings.Split(p.getenv("DATASF_METRICS_TOKEN"), ",") {
		if tok = strings.TrimSpace(tok); tok != "" {
			c.MetricsTokens = append(c.MetricsTokens, tok)
		}
	}
	c.AppToken = p.getenv("SOCRATA_APP_TOKEN")
	tokens, err := appTokens(p.getenv("DATASF_APP_TOKENS"))
	if err != nil {
		return fail("%v", err)
	}
	for _, d := range splitList(c.Domains) { // before anything starts
		if _, err := socrata.CheckDomain(d); err != nil {
			return fail("--domains: %v", err)
		}
	}
	c.AppTokens = tokens
	return nil
}

// outputCheck resolves --server, --format, --json, --all and -o of a tool
// command.
func (p *parser) outputCheck(cmd *cobra.Command) error {
	c := &p.cfg
	fail := func(format string, a ...any) error { return usage(cmd, fmt.Errorf(format, a...)) }
	if c.Server != "" {
		if c.Offline {
			return fail("--server and --offline exclude each other: the server at --server answers (start it with --offline)")
		}
		if !strings.HasPrefix(c.Server, "http://") && !strings.HasPrefix(c.Server, "https://") {
			return fail("--server wants the URL of a running datasf-mcp serve, e.g. http://127.0.0.1:8080; got %q", c.Server)
		}
	}
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
		if !p.exports {
			return fail("--format must be auto, json or markdown; got %q", render)
		}
		if !c.All {
			return fail("--format %s is a format of the complete result: add --all (the sample prints as json or markdown)", render)
		}
		c.Format = render
	default:
		if p.exports {
			return fail("--format must be auto, json or markdown, or with --all csv, ndjson or json; got %q", render)
		}
		return fail("--format must be auto, json or markdown; got %q", render)
	}
	if c.Resume != "" {
		if !c.All {
			return fail("--resume %s continues the complete result of an interrupted --all: add --all", c.Resume)
		}
		if err := resumeCheck(c); err != nil {
			return fail("%v", err)
		}
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
		if c.Resume != "" && resumableFormat(c.Format) == "" {
			return fail("--resume continues csv, ndjson and json files; a partial %s file cannot be continued: run the query again", c.Format)
		}
	}
	return nil
}

// downloadFormats are the formats fetch and query --all write, by the
// file name endings that name them.
var downloadFormats = []struct{ format, ext string }{
	{"csv", ".csv"}, {"ndjson", ".ndjson"}, {"ndjson", ".jsonl"}, {"json", ".json"}, {"parquet", ".parquet"},
	{"geojson", ".geojson"}, {"xlsx", ".xlsx"},
	{"csv.gz", ".csv.gz"}, {"ndjson.gz", ".ndjson.gz"}, {"ndjson.gz", ".jsonl.gz"}, {"json.gz", ".json.gz"},
}

// formatOfName returns the download format a file name ends in, or "".
func formatOfName(name string) string {
	lower := strings.ToLower(name)
	format := ""
	for _, f := range downloadFormats {
		if strings.HasSuffix(lower, f.ext) && (format == "" || len(f.format) > len(format)) {
			format = f.format // .csv.gz over .gz's shorter matches
		}
	}
	return format
}

// exportFormat checks a download format, or picks it from the output
// file's name (csv for stdout or a name without an extension). A name
// whose ending is no format we write (x.xls, x.zip) is refused unless
// --format says what to write, and a --format that contradicts the name
// (--format csv -o x.parquet) is refused: a file is what its name says.
func exportFormat(format, output string) (string, error) {
	const known = "csv, ndjson, json, parquet, geojson, xlsx, csv.gz, ndjson.gz or json.gz"
	named := ""
	if output != "" && output != "-" {
		named = formatOfName(output)
	}
	if format == "" {
		ext := filepath.Ext(output)
		switch {
		case named != "":
			return named, nil
		case output == "" || output == "-" || ext == "":
			return "csv", nil
		}
		return "", fmt.Errorf("cannot write %s: its name ends in %s, which is no format datasf-mcp writes; name it .csv, .ndjson, .json, .parquet, .geojson, .xlsx, .csv.gz, .ndjson.gz or .json.gz, or give --format (%s)", output, ext, known)
	}
	if !slices.ContainsFunc(downloadFormats, func(f struct{ format, ext string }) bool { return f.format == format }) {
		return "", fmt.Errorf("--format must be %s; got %q", known, format)
	}
	if named != "" && named != format {
		return "", fmt.Errorf("--format %s contradicts the file name %s (which names %s): rename the file or drop --format", format, output, named)
	}
	return format, nil
}

// listenAddr normalizes *addr, the value of the listen address flag
// --name of cmd.
func listenAddr(cmd *cobra.Command, name string, addr *string) error {
	a, err := normalizeAddr(*addr)
	if err != nil {
		return usage(cmd, fmt.Errorf("--%s: %v", name, err))
	}
	*addr = a
	return nil
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
			return usage(cmd, fmt.Errorf("-%s: long flags take two dashes: --%s", name, a[1:]))
		}
	}
	return nil
}

// flagName is the flag of a tool argument: sample_size -> sample-size.
func flagName(arg string) string { return strings.ReplaceAll(arg, "_", "-") }

// argHelp is a tool argument's flag help: its words, then its limits
// unless the words name them already.
func argHelp(a datasf.ArgSpec) string {
	help := strings.TrimSuffix(a.Description, ".")
	var limits string
	switch {
	case a.Kind == "string" && a.Max > 0 && !strings.Contains(help, strconv.Itoa(a.Max)):
		limits = fmt.Sprintf("at most %d characters", a.Max)
		if a.Min > 0 {
			limits = fmt.Sprintf("%d to %d characters", a.Min, a.Max)
		}
	case a.Kind == "integer" && !strings.Contains(help, fmt.Sprintf("%d-%d", a.Min, a.Max)):
		limits = fmt.Sprintf("%d to %d", a.Min, a.Max)
	case a.Kind == "object":
		limits = fmt.Sprintf("%d to %d entries", a.Min, a.Max)
	}
	if limits != "" {
		help += " (" + limits + ")"
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
	err := cmd.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return words, cobra.ShellCompDirectiveNoFileComp
	})
	if err != nil {
		panic("datasf-mcp: " + err.Error()) // the flag is not declared yet
	}
}

// completeCommandNames completes a command name, for help.
func completeCommandNames(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var names []string
	for _, c := range cmd.Root().Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
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

// unknownCommand is the error of a word that is no command of root: with
// the command it most likely misspells ("serch": did you mean search?),
// else the list of commands.
func unknownCommand(root *cobra.Command, word string) error {
	if meant := meantCommands(root, word); len(meant) > 0 {
		return fmt.Errorf("unknown command %q: did you mean %s? (commands: %s)", word, strings.Join(meant, " or "), commandNames(root))
	}
	return fmt.Errorf("unknown command %q; commands: %s", word, commandNames(root))
}

// meantCommands are the commands of root that word most likely misspells:
// those nearest it in edits (at most 2, ignoring case), else those it
// begins ("sch" for schema).
func meantCommands(root *cobra.Command, word string) []string {
	w := strings.ToLower(word)
	best, nearest := 3, []string(nil)
	var prefixed []string
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() && c.Name() != "help" {
			continue
		}
		name := c.Name()
		d := editDistance(w, name)
		for _, a := range c.Aliases { // search_datasf is search
			d = min(d, editDistance(w, a))
		}
		switch {
		case d > 2:
		case d < best:
			best, nearest = d, []string{name}
		case d == best:
			nearest = append(nearest, name)
		}
		if len(w) >= 2 && strings.HasPrefix(name, w) {
			prefixed = append(prefixed, name)
		}
	}
	if len(nearest) > 0 {
		return nearest
	}
	return prefixed
}

// editDistance is the Damerau-Levenshtein distance of a and b (optimal
// string alignment: a swap of two neighbours is one edit, "qeury").
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range y {
		d[0][j+1] = j + 1
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// resumeCheck completes --resume FILE.part: the file it becomes, FILE, is
// the output; an -o given too must name it (FILE or FILE.part), so that
// the command an interrupted download prints, -o and all, runs.
func resumeCheck(c *config) error {
	if c.Resume == "" {
		return nil
	}
	final := strings.TrimSuffix(c.Resume, partSuffix)
	switch {
	case final == "" || c.Resume == "-":
		return fmt.Errorf("--resume wants the partial file to continue, FILE.part; got %q", c.Resume)
	case c.Output == "-":
		return fmt.Errorf("--resume %s writes %s, not stdout: drop -o -", c.Resume, final)
	case c.Output != "" && strings.TrimSuffix(c.Output, partSuffix) != final:
		return fmt.Errorf("--resume %s continues %s: drop -o %s", c.Resume, final, c.Output)
	}
	c.Output = final
	return nil
}
