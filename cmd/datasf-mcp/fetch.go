package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/schollz/progressbar/v3"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// runFetch downloads a full result from its resource URL, streaming the
// export to stdout or --o, with a progress bar on stderr. With
// DATASF_REST_TOKEN set, the first token is sent as the bearer token.
func runFetch(ctx context.Context, cfg config, log *slog.Logger) error {
	url := cfg.Args[0]
	client, err := dualresp.NewClient(dualresp.ClientOptions{Header: serverHeader(cfg)})
	if err != nil {
		return err
	}
	parsed := client.Parse(map[string]any{"resource": map[string]any{"url": url}, "results": []any{}})
	if parsed == nil {
		return fmt.Errorf("%q is not a result URL (http://HOST/resources/ID)", url)
	}
	info, err := parsed.Metadata(ctx)
	var fe *dualresp.FetchError
	if errors.As(err, &fe) && fe.StatusCode == http.StatusUnauthorized {
		if len(cfg.RESTTokens) == 0 {
			return fmt.Errorf("fetch %s: the server requires a bearer token: set DATASF_REST_TOKEN to one of its tokens", url)
		}
		return fmt.Errorf("fetch %s: the server did not accept the token of DATASF_REST_TOKEN (HTTP 401)", url)
	}
	if err != nil {
		return fmt.Errorf("fetch %s: %w", url, err)
	}

	out, closeOut, err := openOutput(cfg)
	if err != nil {
		return err
	}
	n, err := exportWithProgress(ctx, cfg, parsed, info.TotalCount, out)
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fetch %s: %w", url, err)
	}
	log.Info("fetched", "rows", info.TotalCount, "bytes", n, "format", cfg.Format, "to", cfg.Output)
	return nil
}

// exportWithProgress writes the complete result of parsed, of total rows,
// to out in cfg.Format, with a progress bar on stderr, and returns the
// bytes written.
func exportWithProgress(ctx context.Context, cfg config, parsed *dualresp.Parsed, total int64, out io.Writer) (int64, error) {
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(cfg.Stderr),
		progressbar.OptionSetDescription("rows"),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(200_000_000),
		progressbar.OptionClearOnFinish(),
	)
	n, err := parsed.Export(ctx, cfg.Format, &rowCounter{w: out, bar: bar, format: cfg.Format})
	_ = bar.Finish()
	return n, err
}

// rowCounter advances the progress bar by the rows it sees pass: one per
// line for CSV (after the header) and NDJSON.
type rowCounter struct {
	w      io.Writer
	bar    *progressbar.ProgressBar
	format string
	header bool
}

func (c *rowCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if c.format != "json" {
		lines := bytes.Count(p[:n], []byte{'\n'})
		if c.format == "csv" && !c.header && lines > 0 {
			c.header = true
			lines--
		}
		_ = c.bar.Add(lines)
	}
	return n, err
}
