package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/validate"
)

// The command line is the table commands: each entry holds one command's
// help, its flags, the checks that complete its config and what it runs.
// parseConfig builds a cobra command tree from the table (per-command help,
// `help CMD`, GNU-style flags after the positional arguments, shell
// completion) and only parses; run(ctx, cfg) runs the entry cfg names.

// command is one entry of the command line.
type command struct {
	name    string // what the user types; "" is datasf-mcp itself (MCP over stdio)
	use     string // the synopsis, when more than the name
	short   string // its line in the list of commands
	long    string
	example string
	// tool makes a tool command: the MCP tool's arguments become flags
	// (sample_size is --sample-size), its required text arguments
	// positional arguments too, and the output and portal flags are added
	// (see toolCommand).
	tool string
	// exports lets a tool command write the complete result: --all, and
	// --format csv or ndjson.
	exports bool
	// argHelp is a tool command's help of the tool's arguments as flags,
	// written for a person (the tool's own descriptions are written for a
	// model); the limits are added from the tool's schema (see argHelp).
	argHelp map[string]string

	args     cobra.PositionalArgs // nil: no positional arguments
	complete cobra.CompletionFunc // completes the positional arguments
	// flags declares the command's own flags, bound to p.
	flags func(p *parser, cmd *cobra.Command)
	// check checks them, after the shared flags (see parser.finish), and
	// completes p.cfg; errors are *usageError.
	check func(p *parser, cmd *cobra.Command, args []string) error
	// run runs the command the config describes; a tool command's is
	// runToolCommand.
	run func(ctx context.Context, cfg config, log *slog.Logger) error
}

// commands is the command line: datasf-mcp itself first, then the
// commands in the order of help (the tools in the order of the tool list).
var commands = []command{
	{
		name:  "",
		short: "an MCP server for San Francisco's open data (any Socrata portal works)",
		long: `Without a command, datasf-mcp serves MCP on stdio (as Claude Desktop and Claude
Code run it) and the REST API of full results on --rest-addr.

Query results come back as dual responses: the model sees a small sample, the
exact total and a link; the complete result is served at that link (paged JSON,
CSV/NDJSON/JSON export).`,
		example: `datasf-mcp --offline                      # stdio server on the built-in snapshot
datasf-mcp serve --http 8080 --offline    # Streamable HTTP at http://127.0.0.1:8080/mcp
datasf-mcp query wg3w-h783 "SELECT incident_category, count(*) AS n GROUP BY incident_category ORDER BY n DESC" --offline`,
		flags: func(p *parser, cmd *cobra.Command) {
			p.serverFlags(cmd, func(fs *pflag.FlagSet) {
				fs.StringVar(&p.cfg.RESTAddr, "rest-addr", p.env("DATASF_REST_ADDR", "127.0.0.1:8765"), "serve the REST API of full results on `ADDR`: PORT (127.0.0.1 only), :PORT or HOST:PORT (env DATASF_REST_ADDR)")
			})
			p.portalFlags(cmd)
		},
		check: func(p *parser, cmd *cobra.Command, _ []string) error {
			p.cfg.RESTAddrSet = p.getenv("DATASF_REST_ADDR") != "" || cmd.Flags().Changed("rest-addr")
			return listenAddr(cmd, "rest-addr", &p.cfg.RESTAddr)
		},
		run: serving(func(ctx context.Context, cfg config, svc *datasf.Service) error {
			return svc.ServeStdio(ctx, cfg.Stdin, cfg.Stdout)
		}),
	},
	{name: "search", tool: "search_datasf", short: "search the catalog by keywords",
		long:    "Search finds the portal's datasets whose names, descriptions or ids match QUERY, best match first.",
		argHelp: map[string]string{"query": "the keywords, e.g. \"police incidents\", or a dataset id", "limit": "show at most this many datasets"},
		example: `datasf-mcp search "police incidents" --limit 3 --offline`},
	{name: "list", tool: "list_datasf", short: "the newest datasets, optionally of one category",
		long:    "List shows the portal's datasets, most recently updated first.",
		argHelp: map[string]string{"category": "only datasets of this category, e.g. \"Public Safety\"", "limit": "show at most this many datasets"},
		example: `datasf-mcp list --category "Public Safety" --offline`},
	{name: "schema", tool: "get_schema", short: "a dataset's columns and exact row count",
		long:    "Schema shows a dataset's name, its exact row count, and its columns: the field names SoQL uses, with their types.",
		argHelp: map[string]string{"dataset_id": "the dataset's id, e.g. wg3w-h783, or its URL on the portal"},
		example: `datasf-mcp schema wg3w-h783 --offline`},
	{name: "query", tool: "query_datasf", exports: true,
		short: "run SoQL on a dataset: a sample, the exact total and a link to the whole result",
		long: `Query runs SOQL on the dataset DATASET_ID and prints a sample of the rows, the
exact number of rows and a link to the complete result; with --all, the complete
result itself. SoQL has no FROM: the dataset is DATASET_ID. Column names that are
surely misspelt are corrected, and the answer says so.`,
		argHelp: map[string]string{
			"dataset_id":   "the dataset's id, e.g. wg3w-h783, or its URL on the portal",
			"soql":         "the SoQL query, e.g. \"SELECT incident_category, count(*) AS n GROUP BY incident_category\"",
			"auto_correct": "correct column names that are surely misspelt (--auto-correct=false: run the query as written)",
			"sample_size":  "show this many rows of the result (default: the server's --sample-size)",
			"image":        "also draw the result's chart or map as a PNG (as MCP hosts without the viewer app get it), written to --image-out FILE, else next to -o FILE (its name with .png), else to DATASET_ID.png",
		},
		example: `datasf-mcp query rqzj-sfat "SELECT applicant, status WHERE status = 'APPROVED'" --offline --all -o approved.csv
datasf-mcp query wg3w-h783 "SELECT supervisor_district, count(*) AS n GROUP BY supervisor_district" --offline --image-out districts.png`,
		flags: func(p *parser, cmd *cobra.Command) {
			group(cmd, groupOutput, func(fs *pflag.FlagSet) {
				fs.StringVar(&p.cfg.ImageOut, "image-out", "", "write the result's chart or map as a PNG to `FILE` (implies --image)")
			})
		},
		check: func(p *parser, cmd *cobra.Command, _ []string) error {
			if p.cfg.ImageOut != "" {
				p.cfg.ToolArgs["image"] = true
			}
			if on, _ := p.cfg.ToolArgs["image"].(bool); on {
				p.cfg.ImageOut = imageOutput(p.cfg)
			} else if cmd.Flags().Changed("image-out") {
				return usage(cmd, errors.New("--image-out needs a FILE"))
			}
			return nil
		}},
	{name: "results", tool: "list_results", short: "the stored results of this session (or bearer token) that are still available",
		long:    "Results lists the stored results of this session (with --server, those of its bearer token) that are still kept, newest first.",
		argHelp: map[string]string{"limit": "show at most this many results", "offset": "skip this many results (the next_offset of the previous page)"},
		example: `datasf-mcp results --server http://127.0.0.1:8080`},
	{
		name: "analyze", tool: "analyze_results",
		short: "read-only SQL (SQLite) over stored results, for joins across datasets",
		long: `Analyze runs one read-only SQLite SELECT over stored results, each loaded as a
table named on the command line: joins and calculations across datasets that SoQL
cannot do. It prints at most 1,000 rows; aggregate in the SQL.`,
		argHelp: map[string]string{
			"sql":     "the SQL, e.g. \"SELECT a.x, count(*) FROM a JOIN b ON b.k = a.k GROUP BY 1\"",
			"results": "load the stored RESULT (its id, resource:// URI or URL; up to 100,000 rows) as table NAME",
		},
		example: `datasf-mcp analyze "SELECT status, count(*) AS n FROM trucks GROUP BY status" --query "trucks=rqzj-sfat:SELECT applicant, status" --offline`,
		flags: func(p *parser, cmd *cobra.Command) {
			group(cmd, groupArguments, func(fs *pflag.FlagSet) {
				fs.StringArrayVar(&p.queries, "query", nil,
					"run SOQL on DATASET_ID first (as the query command does) and load its result as table NAME; repeatable `NAME=DATASET_ID:SOQL`")
			})
		},
		check: func(p *parser, cmd *cobra.Command, _ []string) error {
			for _, q := range p.queries {
				name, rest, ok := strings.Cut(q, "=")
				id, soql, ok2 := strings.Cut(rest, ":")
				if !ok || !ok2 || name == "" || strings.TrimSpace(soql) == "" {
					return usage(cmd, fmt.Errorf("--query wants NAME=DATASET_ID:SOQL; got %q", q))
				}
				id = strings.TrimSpace(id)
				p.cfg.Queries = append(p.cfg.Queries, namedQuery{Name: name, DatasetID: id, SoQL: soql})
				if err := toolSpec("query_datasf").Check(map[string]any{"dataset_id": id, "soql": soql}); err != nil {
					return usage(cmd, fmt.Errorf("--query %s: %v", name, err))
				}
			}
			if _, ok := p.cfg.ToolArgs["results"]; !ok && len(p.cfg.Queries) == 0 {
				return usage(cmd, errors.New("analyze needs tables: --results NAME=RESULT (a stored result) or --query NAME=DATASET_ID:SOQL"))
			}
			return nil
		},
	},
	{
		name:  "fetch",
		use:   "fetch URL",
		short: "download a complete result from its link, with a progress bar",
		long: `Fetch downloads the complete result behind a result link (http://HOST/resources/ID,
as printed by query --server or shown to the model) to stdout or -o FILE, in the
format --format or the file's name says (x.csv, x.ndjson, x.json, x.parquet,
x.geojson, x.xlsx, x.csv.gz ...; a name of another format is refused). The download is compressed
on the wire; one broken midway is resumed from its last complete row, and
-o FILE is written as FILE.part, renamed to FILE once complete. Stopped
before (Ctrl-C, SIGTERM), fetch exits 130 or 143 and prints the rows
written and the command that continues FILE.part: --resume FILE.part. With
DATASF_REST_TOKEN set, its first token is sent as the bearer token.`,
		example: `datasf-mcp fetch http://127.0.0.1:8080/resources/ID --format csv -o result.csv`,
		args:    exactArgs(1, "URL"),
		flags: func(p *parser, cmd *cobra.Command) {
			group(cmd, groupOutput, func(fs *pflag.FlagSet) {
				fs.StringVar(&p.cfg.Format, "format", p.env("DATASF_FORMAT", ""), "download as `FORMAT`: csv, ndjson, json, parquet, geojson, xlsx, csv.gz, ndjson.gz or json.gz (default from the file's name, else csv; env DATASF_FORMAT)")
				fs.StringVarP(&p.cfg.Output, "output", "o", p.env("DATASF_OUTPUT", ""), "write to `FILE` instead of stdout (env DATASF_OUTPUT)")
				fs.StringVar(&p.cfg.Resume, "resume", "", "continue the partial download `FILE.part` (csv, ndjson or json) that an interrupted fetch left, from its last complete row; it becomes FILE when complete")
				fs.StringVar(&p.cfg.LogLevel, "log-level", p.env("DATASF_LOG_LEVEL", "info"), "log at `LEVEL`: debug, info, warn or error (env DATASF_LOG_LEVEL)")
			})
			completeWords(cmd, "format", "csv", "ndjson", "json", "parquet", "geojson", "xlsx", "csv.gz", "ndjson.gz", "json.gz")
		},
		check: func(p *parser, cmd *cobra.Command, args []string) error {
			p.cfg.Args = args
			err := resumeCheck(&p.cfg)
			if err == nil {
				p.cfg.Format, err = exportFormat(p.cfg.Format, p.cfg.Output)
			}
			if err == nil && p.cfg.Resume != "" && resumableFormat(p.cfg.Format) == "" {
				err = fmt.Errorf("--resume continues csv, ndjson and json files; a partial %s file cannot be continued: fetch it again", p.cfg.Format)
			}
			if err != nil {
				return usage(cmd, err)
			}
			return nil
		},
		run: runFetch,
	},
	{
		name:  "serve",
		use:   "serve --http ADDR",
		short: "serve MCP over Streamable HTTP at /mcp and the REST API at /resources/",
		long: `Serve runs a shared server: MCP over Streamable HTTP at /mcp and the REST API of
full results at /resources/, on one address. Result links from it stay valid
while it runs, so query --server URL and fetch work against it.`,
		example: `datasf-mcp serve --http 8080 --offline`,
		flags: func(p *parser, cmd *cobra.Command) {
			p.serverFlags(cmd, func(fs *pflag.FlagSet) {
				fs.StringVar(&p.cfg.HTTPAddr, "http", p.env("DATASF_HTTP", ""), "listen on `ADDR` for MCP (Streamable HTTP at /mcp) and REST: PORT (127.0.0.1 only), :PORT (every interface) or HOST:PORT (env DATASF_HTTP)")
			})
			p.portalFlags(cmd)
		},
		check: func(p *parser, cmd *cobra.Command, _ []string) error {
			if p.cfg.HTTPAddr == "" {
				return usage(cmd, errors.New("serve needs --http ADDR, e.g. --http 8080 (127.0.0.1:8080), --http :8080 (every interface) or --http HOST:PORT"))
			}
			return listenAddr(cmd, "http", &p.cfg.HTTPAddr)
		},
		run: serving(func(ctx context.Context, _ config, svc *datasf.Service) error {
			return svc.Serve(ctx)
		}),
	},
	{
		name:  "doctor",
		short: "check the portal: its name, TLS, a move, Discovery, a schema, a query, a count, the token, the limits",
		long: `Doctor checks what a user runs into when the portal misbehaves and prints one
line a check: ok, FAIL with the fix, or skip with why. It exits 0 only when
no check failed. It reads --domain (default data.sf.gov), and a dataset of
it (--dataset; default police incidents on data.sf.gov, else one Discovery
lists).`,
		example: `datasf-mcp doctor --domain data.sf.gov`,
		flags: func(p *parser, cmd *cobra.Command) {
			group(cmd, groupArguments, func(fs *pflag.FlagSet) {
				fs.StringVar(&p.cfg.Dataset, "dataset", "", "read the dataset `ID` (default: wg3w-h783 on data.sf.gov, else one Discovery lists)")
			})
			p.portalFlags(cmd)
		},
		run: runDoctor,
	},
	{
		name:    "version",
		short:   "print the version, commit and build of this binary",
		example: "datasf-mcp version",
		run: func(_ context.Context, cfg config, _ *slog.Logger) error {
			_, err := fmt.Fprintln(cfg.Stdout, versionString())
			return err
		},
	},
	{
		name:     "help",
		use:      "help [COMMAND]",
		short:    "print the help of datasf-mcp or of one command",
		example:  "datasf-mcp help query",
		args:     cobra.MaximumNArgs(1),
		complete: completeCommandNames,
		check: func(_ *parser, cmd *cobra.Command, args []string) error {
			target := cmd.Root()
			if len(args) == 1 {
				c, rest, err := target.Find(args)
				if err != nil || c == target || len(rest) > 0 {
					return usage(cmd, unknownCommand(target, args[0]))
				}
				target = c
			}
			fmt.Fprint(cmd.OutOrStdout(), helpText(target))
			return errHelp
		},
	},
}

// toolCommand makes cmd the command of the tool command c: its synopsis
// names the positional arguments, and its flags are, in the order of help,
// the tool's arguments, c's own flags, the output flags and the portal
// flags. It returns the command's check: the arguments as the tool will
// check them, then c's check, then the output flags.
func (p *parser) toolCommand(cmd *cobra.Command, c command) func(*parser, *cobra.Command, []string) error {
	spec := toolSpec(c.tool)
	var positional []datasf.ArgSpec
	for _, a := range spec.Args {
		if a.Required && a.Kind == "string" {
			positional = append(positional, a)
			cmd.Use += " " + strings.ToUpper(a.Name)
		}
	}
	cmd.Long = fmt.Sprintf("%s\n\nIt calls the MCP tool %s, with the flags below as its arguments.", c.long, spec.Name)
	cmd.Aliases = []string{spec.Name}
	cmd.Args = cobra.MaximumNArgs(len(positional))

	// values reads each argument's flag: its value and whether it was given.
	values := map[string]func() (any, bool){}
	group(cmd, groupArguments, func(fs *pflag.FlagSet) {
		for _, a := range spec.Args {
			if a.Name != "format" && a.Name != "domain" { // --domain is a portal flag
				if words, ok := c.argHelp[a.Name]; ok {
					a.Description = words
				}
				values[a.Name] = p.argFlag(fs, a)
			}
		}
	})
	for _, a := range spec.Args {
		if values[a.Name] != nil && a.Enum != nil {
			completeWords(cmd, flagName(a.Name), a.Enum...)
		}
	}
	if c.flags != nil {
		c.flags(p, cmd)
	}
	p.exports = c.exports
	formats := []string{renderAuto, renderJSON, renderMarkdown}
	group(cmd, groupOutput, func(fs *pflag.FlagSet) {
		formatHelp := "print as `FORMAT`: auto (markdown tables on a terminal, JSON when piped or to a file), json or markdown"
		if c.exports {
			formats = append(formats, "csv", "ndjson")
			formatHelp += "; with --all also csv or ndjson (default from -o's extension, else csv)"
			fs.BoolVar(&p.cfg.All, "all", false, "write the complete result (not the sample) to stdout, or to -o FILE (through FILE.part until complete) and the answer to stdout; with a progress bar")
			fs.StringVar(&p.cfg.Resume, "resume", "", "with --all, continue `FILE.part`, left by an interrupted --all -o FILE, from its last complete row (csv, ndjson or json): the query runs again and the rows after it are added")
		}
		fs.StringVar(&p.render, "format", "", formatHelp)
		fs.BoolVar(&p.json, "json", false, "print JSON (the structured result) even on a terminal; same as --format json")
		fs.StringVarP(&p.cfg.Output, "output", "o", "", "write to `FILE` instead of stdout")
		fs.StringVar(&p.cfg.Server, "server", p.env("DATASF_SERVER", ""),
			"call a running datasf-mcp serve at `URL` (e.g. http://127.0.0.1:8080), so result links stay valid after this command (env DATASF_SERVER)")
	})
	completeWords(cmd, "format", formats...)
	p.portalFlags(cmd)

	return func(p *parser, cmd *cobra.Command, pos []string) error {
		p.cfg.Tool = spec.Name
		p.cfg.ToolArgs = map[string]any{}
		fromFlag := map[string]bool{}
		for _, a := range spec.Args {
			if get, ok := values[a.Name]; ok {
				if v, given := get(); given {
					p.cfg.ToolArgs[a.Name] = v
					fromFlag[a.Name] = true
				}
			}
		}
		if f := cmd.Flags().Lookup("domain"); f != nil && f.Changed {
			p.toolDomain()
		}
		for i, v := range pos {
			a := positional[i]
			if fromFlag[a.Name] {
				return usage(cmd, fmt.Errorf("%s is given twice: as an argument and as --%s", strings.ToUpper(a.Name), flagName(a.Name)))
			}
			p.cfg.ToolArgs[a.Name] = v
		}
		for _, a := range positional {
			if _, ok := p.cfg.ToolArgs[a.Name]; !ok {
				return usage(cmd, fmt.Errorf("%s needs %s (or --%s)", c.name, strings.ToUpper(a.Name), flagName(a.Name)))
			}
		}
		for _, kv := range p.results {
			if k, v, ok := strings.Cut(kv, "="); !ok || k == "" || v == "" {
				return usage(cmd, fmt.Errorf("--results wants NAME=RESULT (a result id, resource:// URI or URL); got %q", kv))
			}
		}
		if c.check != nil {
			if err := c.check(p, cmd, pos); err != nil {
				return err
			}
		}
		if err := p.toolArgsCheck(cmd, spec, fromFlag); err != nil {
			return err
		}
		return p.outputCheck(cmd)
	}
}

// argFlag declares the flag of the tool argument a and returns what reads
// it: the value and whether it was given.
func (p *parser) argFlag(fs *pflag.FlagSet, a datasf.ArgSpec) func() (any, bool) {
	name, help := flagName(a.Name), argHelp(a)
	switch a.Kind {
	case "integer":
		def, _ := a.Default.(int)
		v := fs.Int(name, def, help)
		if strings.Contains(help, "default") {
			fs.Lookup(name).DefValue = "0" // the help says it already
		}
		return func() (any, bool) { return *v, fs.Changed(name) }
	case "boolean":
		def, _ := a.Default.(bool)
		v := fs.Bool(name, def, help)
		return func() (any, bool) { return *v, fs.Changed(name) }
	case "object":
		fs.StringArrayVar(&p.results, name, nil, strings.TrimSuffix(help, ".")+"; repeatable `NAME=RESULT`")
		return func() (any, bool) {
			m := map[string]any{}
			for _, kv := range p.results {
				k, v, _ := strings.Cut(kv, "=")
				m[k] = v
			}
			return m, len(p.results) > 0
		}
	default: // "string"
		v := fs.String(name, "", help)
		return func() (any, bool) { return *v, fs.Changed(name) }
	}
}

// toolArgsCheck validates the arguments as the tool will, so mistakes are
// reported before anything loads; the tables analyze's --query will make
// stand in for their results.
func (p *parser) toolArgsCheck(cmd *cobra.Command, spec datasf.ToolSpec, fromFlag map[string]bool) error {
	check := map[string]any{}
	for k, v := range p.cfg.ToolArgs {
		check[k] = v
	}
	if len(p.cfg.Queries) > 0 {
		m := map[string]any{}
		if given, ok := check["results"].(map[string]any); ok {
			for k, v := range given {
				m[k] = v
			}
		}
		for _, q := range p.cfg.Queries {
			m[q.Name] = "resource://" + q.Name
		}
		check["results"] = m
	}
	err := spec.Check(check)
	var verr *validate.Error
	if !errors.As(err, &verr) {
		if err != nil {
			return usage(cmd, err)
		}
		return nil
	}
	// Each argument is named as the user gave it: its flag, or its place
	// in the synopsis (DATASET_ID).
	msgs := make([]string, len(verr.Fields))
	for i, f := range verr.Fields {
		name := strings.ToUpper(f.Field)
		if fromFlag[f.Field] {
			name = "--" + flagName(f.Field)
		}
		msgs[i] = name + " " + f.Problem
	}
	return usage(cmd, errors.New(strings.Join(msgs, "; ")))
}

// parseConfig reads the command line and the environment, and checks every
// value it can before anything loads. Errors are *usageError. Help, version
// and completion output go to out; parseConfig then returns errHelp.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (config, error) {
	root, parsers := commandTree(getenv)
	root.SetOut(out)
	root.SetErr(out)
	root.SetArgs(args)
	if err := singleDashCheck(root, args); err != nil {
		return config{}, err
	}
	cmd, err := root.ExecuteC()
	p := parsers[cmd]
	if p == nil { // cobra's completion commands
		p = newParser(getenv)
	}
	if errors.Is(err, errHelp) {
		return p.cfg, errHelp
	}
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
	p.cfg.Argv = slices.Clone(args)
	return p.cfg, nil
}

// commandTree builds the cobra commands of the table, each with its own
// parser: a command's flags and environment fill only its config.
func commandTree(getenv func(string) string) (*cobra.Command, map[*cobra.Command]*parser) {
	parsers := map[*cobra.Command]*parser{}
	var root *cobra.Command
	for _, c := range commands {
		p := newParser(getenv)
		cmd := c.cobra(p)
		parsers[cmd] = p
		switch c.name {
		case "":
			root = cmd
			// A word that is no command is a mistyped one, most often:
			// it is said with the command meant (cobra's own suggestion
			// does not run when a command declares its arguments).
			root.Args = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return usage(cmd, unknownCommand(cmd, args[0]))
				}
				return nil
			}
			root.Version = versionString()
			root.SilenceErrors, root.SilenceUsage = true, true
			root.SetVersionTemplate("{{.Version}}\n")
			// The tools' argument names work as flags too: --sample_size is --sample-size.
			root.SetGlobalNormalizationFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
				return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
			})
			root.SetHelpFunc(func(cmd *cobra.Command, _ []string) { fmt.Fprint(cmd.OutOrStdout(), helpText(cmd)) })
			root.SetUsageFunc(func(cmd *cobra.Command) error { fmt.Fprint(cmd.OutOrStderr(), usageText(cmd)); return nil })
			root.CompletionOptions.HiddenDefaultCmd = false
			// cobra adds -v, --version only when the root command itself
			// runs; added now, `datasf-mcp help` lists it as --help does.
			root.InitDefaultVersionFlag()
			root.Flags().Lookup("version").Usage = "print the version of this binary and exit"
		case "help":
			root.SetHelpCommand(cmd)
		default:
			root.AddCommand(cmd)
		}
	}
	return root, parsers
}

func init() {
	cobra.EnableCommandSorting = false // the commands in the order of the table
}

// cobra makes the cobra command of c, its flags bound to p.
func (c command) cobra(p *parser) *cobra.Command {
	cmd := &cobra.Command{
		Use: c.use, Short: c.short, Long: c.long, Example: c.example,
		Args: c.args, ValidArgsFunction: c.complete,
	}
	if cmd.Use == "" {
		cmd.Use = c.name
		if c.name == "" {
			cmd.Use = "datasf-mcp"
		}
	}
	if cmd.Args == nil {
		cmd.Args = cobra.NoArgs
	}
	cmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usage(cmd, err) })
	check := c.check
	if c.tool != "" {
		check = p.toolCommand(cmd, c)
	} else if c.flags != nil {
		c.flags(p, cmd)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		p.cfg.Command = c.name
		if err := p.finish(cmd); err != nil {
			return err
		}
		if check != nil {
			if err := check(p, cmd, args); err != nil {
				return err
			}
		}
		p.ran = true
		return nil
	}
	return cmd
}
