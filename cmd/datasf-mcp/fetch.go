package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/schollz/progressbar/v3"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// runFetch downloads a full result from its resource URL, streaming the
// export to stdout or --o, with a progress bar on stderr. With
// DATASF_REST_TOKEN set, the first token is sent as the bearer token. -o
// FILE is written as FILE.part until complete; --resume FILE.part
// continues it from its last complete row (see download).
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

	d, err := openDownload(cfg)
	if err != nil {
		return err
	}
	if d.from > 0 {
		log.Info("continuing a partial download", "file", d.part, "complete_rows", d.from, "of", info.TotalCount)
	}
	n, rows, err := exportWithProgress(ctx, cfg, parsed, info.Columns, info.TotalCount, d.w, d.options(), log)
	if err = d.finish(ctx, cfg, info.TotalCount, rows, err); err != nil {
		var stopped *stoppedError
		if errors.As(err, &stopped) {
			return err
		}
		return fmt.Errorf("fetch %s: %w", url, err)
	}
	log.Info("fetched", "rows", info.TotalCount, "bytes", n, "format", cfg.Format, "to", cmp.Or(d.final, "stdout"))
	return nil
}

// exportWithProgress writes the result of parsed, of total rows, to out in
// cfg.Format from row from.Offset on, with a progress bar on stderr, and
// returns the bytes and the rows written. A download broken midway is resumed from its
// last complete row (said on the log). The .gz formats are compressed here;
// parquet, geojson and xlsx are written here from the NDJSON rows, typed
// by the columns' types (so that a broken download resumes as NDJSON's
// does).
func exportWithProgress(ctx context.Context, cfg config, parsed *dualresp.Parsed, cols []dualresp.Column, total int64, out io.Writer, from dualresp.ExportOptions, log *slog.Logger) (n, rows int64, err error) {
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(cfg.Stderr),
		progressbar.OptionSetDescription("rows"),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(200_000_000),
		progressbar.OptionClearOnFinish(),
	)
	_ = bar.Set64(from.Offset)
	counted := &countWriter{w: out}
	format, gz := strings.CutSuffix(cfg.Format, ".gz")
	var (
		sink   io.Writer = counted
		finish []func() error
	)
	if gz {
		zw, _ := gzip.NewWriterLevel(counted, gzip.DefaultCompression) // a valid level
		sink = zw
		finish = append(finish, zw.Close)
	}
	opts := from
	opts.Format = format
	opts.OnResume = func(r dualresp.Resume) {
		log.Warn("the download broke; resuming it from its last complete row", "row", r.Row, "resume", r.Attempt, "of", r.Max, "err", r.Err)
	}
	switch format {
	case "parquet":
		pw := dualresp.NewParquetWriter(sink, cols)
		sink = &lineRows{write: func(row []byte) error { return pw.WriteRow(row) }}
		finish = append([]func() error{pw.Close}, finish...)
		opts.Format = "ndjson"
	case "geojson":
		if dualresp.GeometryColumn(cols) == "" && slices.ContainsFunc(cols, func(c dualresp.Column) bool { return c.Type != "" }) {
			return 0, 0, fmt.Errorf("a GeoJSON file needs a column of locations (a point, multipolygon or location column, ...); this result's columns are %s: select one, or download another format", columnList(cols))
		}
		gw := dualresp.NewGeoJSONWriter(sink, cols)
		sink = &lineRows{write: func(row []byte) error { return gw.WriteRow(row) }}
		finish = append([]func() error{gw.Close, func() error {
			if n := gw.RowsWithoutLocation(); n > 0 {
				log.Warn("rows without a location are in the GeoJSON file with a null geometry", "rows", n, "of", gw.Rows(), "column", gw.GeometryColumn())
			}
			return nil
		}}, finish...)
		opts.Format = "ndjson"
	case "xlsx":
		if total-from.Offset > dualresp.XLSXMaxRows {
			return 0, 0, fmt.Errorf("an XLSX file holds at most %d rows (%d sheets); this result has %d: download CSV or Parquet instead, or narrow the query", dualresp.XLSXMaxRows, dualresp.XLSXMaxSheets, total-from.Offset)
		}
		xw, err := dualresp.NewXLSXWriter(sink, cols)
		if err != nil {
			return 0, 0, err
		}
		defer xw.Discard()
		xw.SetRows(total - from.Offset)
		sink = &lineRows{write: func(row []byte) error { return xw.WriteRow(row) }}
		finish = append([]func() error{xw.Close}, finish...)
		opts.Format = "ndjson"
	}
	res, err := parsed.ExportWith(ctx, &rowCounter{w: sink, bar: bar, format: opts.Format, header: opts.Continue}, opts)
	if err == nil {
		for _, f := range finish {
			if err = f(); err != nil {
				break
			}
		}
	}
	_ = bar.Finish()
	return counted.n, res.Rows, err
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// lineRows hands each line written to it (a row of NDJSON) to write.
type lineRows struct {
	write func([]byte) error
	part  []byte
}

func (l *lineRows) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.part = append(l.part, p...)
			break
		}
		line := p[:i]
		if len(l.part) > 0 {
			line = append(l.part, line...)
		}
		if err := l.write(line); err != nil {
			return 0, err
		}
		l.part = l.part[:0]
		p = p[i+1:]
	}
	return n, nil
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

// columnList names the columns, comma-separated.
func columnList(cols []dualresp.Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}
