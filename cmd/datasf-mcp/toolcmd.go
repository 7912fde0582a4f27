package main

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// runToolCommand runs a tool command: through the running server at
// --server, whose result links stay valid, or else in this process.
func runToolCommand(ctx context.Context, cfg config, log *slog.Logger) error {
	if cfg.Server != "" {
		if len(cfg.RESTTokens) == 0 {
			key, err := userClientKey()
			if err != nil {
				log.Warn("results --server will not list this command's results", "err", err)
			}
			cfg.ClientKey = key
		}
		c, err := client.NewStreamableHttpClient(strings.TrimRight(cfg.Server, "/")+"/mcp", transport.WithHTTPHeaders(serverHeaders(cfg)))
		if err != nil {
			return err
		}
		return withNextStep(cfg, runTool(ctx, cfg, c, nil))
	}
	svc, err := newService(ctx, cfg, nil, log)
	if err != nil {
		return err
	}
	defer svc.Close()
	c, err := client.NewInProcessClient(svc.MCPServer())
	if err != nil {
		return err
	}
	return withNextStep(cfg, runTool(ctx, cfg, c, svc))
}

// runTool calls cfg's tool through c (a running server's with --server,
// else svc's in this process) and prints the answer: the tool's markdown on
// a terminal, its structured result as JSON otherwise; query --all writes
// the complete result instead.
func runTool(ctx context.Context, cfg config, c *client.Client, svc *datasf.Service) error {
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "datasf-mcp-cli", Version: datasf.Version}
	if _, err := c.Initialize(ctx, init); err != nil {
		switch {
		case cfg.Server != "" && (errors.Is(err, transport.ErrUnauthorized) || errors.Is(err, transport.ErrAuthorizationRequired)) && len(cfg.RESTTokens) == 0:
			return fmt.Errorf("connecting to %s: the server requires a bearer token (HTTP 401): set DATASF_REST_TOKEN to one of its tokens", cfg.Server)
		case cfg.Server != "" && (errors.Is(err, transport.ErrUnauthorized) || errors.Is(err, transport.ErrAuthorizationRequired)):
			return fmt.Errorf("connecting to %s: the server did not accept the token of DATASF_REST_TOKEN (HTTP 401)", cfg.Server)
		case cfg.Server != "":
			return fmt.Errorf("connecting to %s: %w", cfg.Server, err)
		}
		return err
	}

	args := make(map[string]any, len(cfg.ToolArgs)+1)
	for k, v := range cfg.ToolArgs {
		args[k] = v
	}
	if len(cfg.Queries) > 0 {
		results, _ := args["results"].(map[string]any)
		if results == nil {
			results = map[string]any{}
		}
		for _, q := range cfg.Queries {
			res, err := callTool(ctx, c, "query_datasf", map[string]any{"dataset_id": q.DatasetID, "soql": q.SoQL, "sample_size": 1})
			if err != nil {
				return fmt.Errorf("--query %s: %w", q.Name, err)
			}
			var sc struct {
				Resource struct{ URI string } `json:"resource"`
			}
			if err := remarshal(res.StructuredContent, &sc); err != nil || sc.Resource.URI == "" {
				return fmt.Errorf("--query %s: query_datasf answered without a resource URI", q.Name)
			}
			results[q.Name] = sc.Resource.URI
		}
		args["results"] = results
	}

	// The answer prints to out; with --all the complete result goes there
	// (exportAll opens it: a file is made only once there is a result to
	// write), and the answer to stdout when out is a file.
	var (
		printTo  io.Writer
		closeOut = func() error { return nil }
	)
	if !cfg.All {
		out, closeFile, err := openOutput(cfg)
		if err != nil {
			return err
		}
		printTo, closeOut = out, closeFile
	} else if cfg.Output != "" && cfg.Output != "-" {
		printTo = cfg.Stdout
	}
	markdown := printTo != nil && (cfg.Render == renderMarkdown || cfg.Render == renderAuto && isTerminal(printTo))
	if markdown {
		args["format"] = "markdown" // the tool's format argument: a summary and a table
	}
	res, err := callTool(ctx, c, cfg.Tool, args)
	if err != nil {
		_ = closeOut()
		return err
	}
	if cfg.All {
		err = exportAll(ctx, cfg, svc, res)
	}
	if err == nil && cfg.ImageOut != "" {
		err = writePicture(cfg, res)
	}
	if err == nil && printTo != nil {
		err = printResult(cfg, res, printTo, markdown)
	}
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	return err
}

// callTool calls a tool and turns an isError result into a *toolCallError.
// It asks for the next step apart (datasf.MetaNextStep), so that an error
// says the reason alone and an answer what it found, and the command line
// its own next step (nextStep, answerStep); and for the answer whole
// (datasf.MetaWhole): a person who asks for 100 datasets gets 100, not 5
// and a link that ends with this process.
func callTool(ctx context.Context, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{datasf.MetaNextStep: true, datasf.MetaWhole: true}}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !res.IsError {
		return res, nil
	}
	te := &toolCallError{tool: name, args: args}
	var texts []string
	for _, ct := range res.Content {
		tc, ok := ct.(mcp.TextContent)
		if !ok {
			continue
		}
		var body struct {
			Error     string         `json:"error"`
			ErrorType string         `json:"error_type"`
			Code      string         `json:"code"`
			Next      string         `json:"next"`
			Details   map[string]any `json:"details"`
		}
		if json.Unmarshal([]byte(tc.Text), &body) != nil || body.Error == "" {
			texts = append(texts, tc.Text)
			continue
		}
		// The reason is the error without the model's next step (its
		// last words, which next repeats); "result x has expired;"
		// loses the ";" that joined them.
		reason := strings.TrimSpace(strings.TrimSuffix(body.Error, body.Next))
		texts = append(texts, strings.TrimRight(reason, ";,"))
		if te.code == "" {
			te.code, te.errorType, te.modelNext, te.details = body.Code, body.ErrorType, body.Next, body.Details
		}
	}
	te.reason = strings.Join(texts, "\n")
	return nil, te
}

// toolCallError is a tool's isError answer: its reason, and what the
// command line needs to say a next step of its own (nextStep).
type toolCallError struct {
	tool            string
	args            map[string]any // the call's arguments
	code, errorType string
	reason          string
	// modelNext is the tool's next step for a model ("" when none): the
	// command line says its own.
	modelNext string
	details   map[string]any
}

func (e *toolCallError) Error() string { return e.reason }

// withNextStep adds to a tool's error the next step for the person at the
// terminal, in commands and flags (nextStep).
func withNextStep(cfg config, err error) error {
	var te *toolCallError
	if !errors.As(err, &te) {
		return err
	}
	if step := nextStep(cfg, te); step != "" {
		return fmt.Errorf("%w\nhint: %s", err, step)
	}
	return err
}

// nextStep is what a person does about a tool's error, in commands and
// flags: the tool's own next step is written for a model (it names tools
// and arguments). It is "" when the reason says all there is.
func nextStep(cfg config, e *toolCallError) string {
	id, _ := e.args["dataset_id"].(string)
	if id == "" {
		id = "ID"
	}
	domain := ""
	if d, ok := e.args["domain"].(string); ok && d != "" {
		domain = " --domain " + shellQuote(d)
	}
	// Settings of the server are its operator's with --server, the
	// person's own in this process.
	setting := func(env string) string {
		if cfg.Server != "" {
			return "the operator of the server at " + cfg.Server + " sets " + env
		}
		return "set " + env
	}
	secs := "a minute"
	if n, ok := e.details["retry_after_seconds"].(float64); ok {
		secs = fmt.Sprintf("%d seconds", int(n))
	}
	switch {
	case e.code == datasf.CodeUnreachable && cfg.Server != "":
		return "the server at " + cfg.Server + " cannot reach the portal; without network access, start it with --offline " +
			"(the built-in snapshot) and --data FILE for portal exports you downloaded"
	case e.code == datasf.CodeUnreachable:
		return "without network access, add --offline to use the built-in snapshot, and --data FILE to serve " +
			"portal exports you downloaded (datasf-mcp help " + cfg.Command + ")"
	case e.code == datasf.CodeMoved:
		to, _ := e.details["moved_to"].(string)
		if e.errorType == "validation" { // the new host is refused here
			return setting("DATASF_DOMAINS") + " to allow " + to
		}
		return "run the command again with --domain " + to
	case e.code == "domain_refused":
		return "run `datasf-mcp list --domain '*'` to list the portals, and pass one with --domain"
	case e.code == "authentication_required":
		return "wait " + secs + " and run the command again; an app token lifts the throttle: " + setting("SOCRATA_APP_TOKEN")
	case e.code == "html_response" || e.code == "empty_response" || e.code == "redirect":
		return "run `datasf-mcp doctor" + domain + "` to check the portal"
	case e.errorType == "rate_limit":
		return "wait " + secs + " and run the command again"
	case e.code == "result_expired":
		return "run its query again: `datasf-mcp query " + id + " SOQL`"
	case e.code == "result_not_found":
		return "`datasf-mcp results` lists the stored results that are still available (add --server for a server's)"
	case e.code == "result_ref_invalid":
		table, _ := e.details["table"].(string)
		return "`datasf-mcp results` lists the stored results (add --server for a server's): pass one's id as --results " + cmp.Or(table, "NAME") + "=ID, or run its query with --query " + cmp.Or(table, "NAME") + "=DATASET_ID:SOQL"
	case e.code == "dataset_not_found" && e.tool != "result_page":
		return "run `datasf-mcp search WORDS" + domain + "` to find the dataset's id"
	case e.tool == "analyze_results" && e.code == "result_too_large":
		return "narrow the query of --query (WHERE, GROUP BY) first"
	case e.tool == "analyze_results" && e.errorType == "validation":
		return "fix the SQL (SQLite dialect) and run `datasf-mcp analyze` again"
	case e.tool == "analyze_results" && e.errorType == "timeout":
		return "simplify the SQL (fewer joins, more conditions) and run `datasf-mcp analyze` again"
	case e.code == "no_such_column" || strings.HasPrefix(e.code, "query."):
		return "run `datasf-mcp schema " + id + domain + "` for the dataset's columns, then fix the SoQL and run the command again"
	case e.code == "unquoted_value":
		fix, _ := e.details["fix"].(string)
		return "quote the value (" + fix + ") and run the command again"
	case e.tool == "query_datasf" && e.errorType == "validation":
		return "fix the SoQL and run the command again"
	case e.errorType == "timeout":
		return "run the command again, or narrow the query (a WHERE clause or a LIMIT)"
	case e.errorType == "validation" && e.modelNext != "":
		return "`datasf-mcp help " + cfg.Command + "` describes the arguments"
	}
	return ""
}

// answerStep is what a person does after a tool's answer, in commands and
// flags: the answer's own next step is written for a model (it names tools
// and arguments), and was left out of it; its code is in the result's _meta
// (datasf.MetaNextStep). It is "" when the answer left none out. A --domain
// of the command is kept in the commands it names.
func answerStep(cfg config, res *mcp.CallToolResult) string {
	var code datasf.NextStep
	if res.Meta != nil {
		s, _ := res.Meta.AdditionalFields[datasf.MetaNextStep].(string)
		code = datasf.NextStep(s)
	}
	d, _ := cfg.ToolArgs["domain"].(string)
	domain := ""
	if d != "" {
		domain = " --domain " + shellQuote(d)
	}
	switch code {
	case datasf.NextSchema:
		if d == "*" || strings.Contains(d, ",") { // several portals: each row names its own
			return "run `datasf-mcp schema ID --domain DOMAIN` with a dataset's id and domain to see its columns"
		}
		return "run `datasf-mcp schema ID" + domain + "` with a dataset's id to see its columns"
	case datasf.NextQuery:
		id, _ := cfg.ToolArgs["dataset_id"].(string)
		return "run `datasf-mcp query " + shellQuote(cmp.Or(id, "ID")) + " 'SELECT ...'" + domain + "` using the fieldName column above"
	case datasf.NextBrowse:
		if domain != "" {
			return "try other or fewer words, another --domain, or `datasf-mcp list" + domain + "` to browse"
		}
		return "try other or fewer words, or `datasf-mcp list` to browse"
	case datasf.NextCategory:
		step := "run `datasf-mcp list --category NAME" + domain + "` with one of the categories above to see its datasets"
		if cfg.Tool == "search_datasf" {
			return "try other or fewer words, or " + step
		}
		return step
	case datasf.NextList:
		return "run `datasf-mcp list" + domain + "` to see its datasets"
	case datasf.NextDomain:
		return "pass one of them as --domain to search, list, schema or query"
	case datasf.NextAnyDomain:
		return "any Socrata portal's host name works with --domain; `datasf-mcp search WORDS --domain '*'` searches every portal"
	case datasf.NextOffset:
		var page struct {
			NextOffset *int `json:"next_offset"`
		}
		if remarshal(res.StructuredContent, &page) == nil && page.NextOffset != nil {
			return fmt.Sprintf("run the command again with --offset %d for more", *page.NextOffset)
		}
		return "run the command again with --offset N for more"
	case datasf.NextLinks:
		return "use the result links that `datasf-mcp query` printed, or set DATASF_REST_TOKEN to one of the server's tokens"
	}
	return ""
}

// shellQuote quotes s for a POSIX shell when it needs quotes.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// printResult prints a tool's answer: its text contents (markdown) or its
// structured content as indented JSON. The answer of a query run in this
// process carries a note that its link ended with the command: a line after
// the markdown, a link_note field in the JSON. The next step the answer left
// out (answerStep) follows as a hint line: after markdown on stdout, else on
// stderr, so that JSON and files stay as they are.
func printResult(cfg config, res *mcp.CallToolResult, out io.Writer, markdown bool) (err error) {
	note := oneShotNote(cfg)
	hint := answerStep(cfg, res)
	if hint != "" && (!markdown || out != cfg.Stdout) {
		// After the answer is written, and only then: as an error's hint.
		defer func() {
			if err == nil {
				fmt.Fprintln(cfg.Stderr, "hint:", hint)
			}
		}()
	}
	if markdown {
		var texts []string
		for _, ct := range res.Content {
			if tc, ok := ct.(mcp.TextContent); ok {
				texts = append(texts, strings.TrimRight(tc.Text, "\n"))
			}
		}
		text := strings.Join(texts, "\n\n") + "\n"
		if note != "" {
			text += "\n" + note + "\n"
		}
		if hint != "" && out == cfg.Stdout {
			text += "\nhint: " + hint + "\n"
		}
		_, err = io.WriteString(out, text)
		return err
	}
	v := res.StructuredContent
	if sc, ok := v.(map[string]any); ok && note != "" {
		withNote := maps.Clone(sc)
		withNote["link_note"] = note
		v = withNote
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if _, err := out.Write(append(b, '\n')); err != nil {
		return err
	}
	if note != "" && !cfg.All {
		fmt.Fprintln(cfg.Stderr, "datasf-mcp: note:", note)
	}
	return nil
}

// oneShotNote is what becomes of the result link of a query run in this
// process (no --server): it ended with the command. It is "" for other
// commands.
func oneShotNote(cfg config) string {
	switch {
	case cfg.Tool != "query_datasf" || cfg.Server != "":
		return ""
	case cfg.All:
		return "The link above was served by this command only, and ended with it; the complete result is in " + cfg.Output + "."
	}
	return linkNote
}

// linkNote says what becomes of a result link of a one-shot command.
const linkNote = "The link above was served by this command only, and ended with it. " +
	"Save the complete result with --all -o FILE, or start datasf-mcp serve --http 8080 and pass --server http://127.0.0.1:8080 for links that stay valid."

// exportAll writes the complete result of a query_datasf answer in
// cfg.Format to stdout or -o FILE (through FILE.part, see download), with
// a progress bar on stderr: through the REST API of the server at
// --server, or of svc in this process. With --resume it continues the
// partial file from its last complete row: the query ran again, and its
// stable order puts the same rows after it.
func exportAll(ctx context.Context, cfg config, svc *datasf.Service, res *mcp.CallToolResult) error {
	opts := dualresp.ClientOptions{Header: serverHeader(cfg), Timeout: -1}
	if svc != nil {
		opts.HTTPClient = &http.Client{Transport: handlerTransport{h: svc.RESTHandler()}}
		opts.BaseURL = svc.URL()
	}
	dc, err := dualresp.NewClient(opts)
	if err != nil {
		return err
	}
	parsed := dc.Parse(res.StructuredContent)
	if parsed == nil {
		return errors.New("query_datasf answered without a result link")
	}
	cols := parsed.Columns
	if cfg.Format == "parquet" || cfg.Format == "geojson" || cfg.Format == "xlsx" {
		// Parquet, GeoJSON and XLSX are typed: the answer names the columns only.
		info, err := parsed.Metadata(ctx)
		if err != nil {
			return fmt.Errorf("reading the result's column types: %w", err)
		}
		cols = info.Columns
	}
	d, err := openDownload(cfg)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(cfg.Stderr, nil))
	if d.from > 0 {
		log.Info("continuing a partial download", "file", d.part, "complete_rows", d.from, "of", parsed.TotalCount)
	}
	n, rows, err := exportWithProgress(ctx, cfg, parsed, cols, parsed.TotalCount, d.w, d.options(), log)
	if err = d.finish(ctx, cfg, parsed.TotalCount, rows, err); err != nil {
		var stopped *stoppedError
		if errors.As(err, &stopped) {
			return err
		}
		return fmt.Errorf("writing the complete result: %w", err)
	}
	where := cmp.Or(d.final, "stdout")
	if fi, err := os.Stat(d.final); d.final != "" && err == nil {
		n = fi.Size() // the whole file's, a continued one's too
	}
	fmt.Fprintf(cfg.Stderr, "datasf-mcp: %s (%s, %s) written to %s\n", nouns(parsed.TotalCount, "row", ""), cfg.Format, nouns(n, "byte", ""), where)
	return nil
}

var datasetID = regexp.MustCompile(`[a-z0-9]{4}-[a-z0-9]{4}`)

// imageOutput is where query --image writes the PNG: --image-out FILE,
// else next to -o FILE (its name with .png for its extension), else
// DATASET_ID.png in the current directory.
func imageOutput(cfg config) string {
	switch {
	case cfg.ImageOut != "":
		return cfg.ImageOut
	case cfg.Output != "" && cfg.Output != "-":
		name := strings.TrimSuffix(cfg.Output, ".gz")
		return strings.TrimSuffix(name, filepath.Ext(name)) + ".png"
	}
	id, _ := cfg.ToolArgs["dataset_id"].(string)
	if m := datasetID.FindString(id); m != "" {
		return m + ".png"
	}
	return "picture.png"
}

// writePicture writes the PNG of a query_datasf answer asked for with
// image to cfg.ImageOut, and says on stderr what it shows; a result with no
// picture is said, and nothing is written.
func writePicture(cfg config, res *mcp.CallToolResult) error {
	var png []byte
	var said string
	for _, ct := range res.Content {
		switch c := ct.(type) {
		case mcp.ImageContent:
			if c.MIMEType == "image/png" {
				b, err := base64.StdEncoding.DecodeString(c.Data)
				if err != nil {
					return fmt.Errorf("the answer's picture: %w", err)
				}
				png = b
			}
		case mcp.TextContent:
			said = strings.TrimPrefix(strings.TrimSpace(c.Text), "The picture: ") // the picture's line is the last text
		}
	}
	if png == nil {
		fmt.Fprintf(cfg.Stderr, "datasf-mcp: no picture written to %s: %s\n", cfg.ImageOut, said)
		return nil
	}
	if err := os.WriteFile(cfg.ImageOut, png, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Stderr, "datasf-mcp: picture (%d bytes) written to %s: %s\n", len(png), cfg.ImageOut, said)
	return nil
}

// openOutput returns where a command writes: -o FILE or stdout.
func openOutput(cfg config) (io.Writer, func() error, error) {
	if cfg.Output == "" || cfg.Output == "-" {
		return cfg.Stdout, func() error { return nil }, nil
	}
	f, err := os.Create(cfg.Output)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// remarshal converts v to out through JSON.
func remarshal(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
