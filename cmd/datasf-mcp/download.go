package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// A complete result that fetch or query --all writes to -o FILE is written
// as FILE.part and renamed to FILE once the download is complete, so that
// no script takes a partial file for a whole one (`fetch ... && load FILE`).
// A download that stops before (SIGINT, SIGTERM, a failure that lasts)
// leaves FILE.part with whole rows only, and says how many and the command
// that continues it: --resume FILE.part goes on from its last complete row,
// every row once.

// partSuffix ends the name of a file being downloaded.
const partSuffix = ".part"

// download is where fetch and query --all write a complete result: stdout,
// or a file through its .part file.
type download struct {
	final  string   // the file the complete result becomes; "" for stdout
	part   string   // the file written: final + ".part", or the partial file --resume names
	f      *os.File // nil for stdout
	w      io.Writer
	from   int64  // rows the file held when it was opened (--resume)
	format string // cfg.Format
}

// openDownload opens where the complete result goes: stdout, FILE.part for
// -o FILE, or the partial file of --resume, cut after its last complete
// row.
func openDownload(cfg config) (*download, error) {
	d := &download{format: cfg.Format}
	switch {
	case cfg.Resume != "":
		part, final, err := resumeTarget(cfg.Resume)
		if err != nil {
			return nil, err
		}
		f, rows, err := openPartial(part, resumableFormat(cfg.Format))
		if err != nil {
			return nil, fmt.Errorf("--resume %s: %w", cfg.Resume, err)
		}
		d.final, d.part, d.f, d.w, d.from = final, part, f, f, rows
	case cfg.Output == "" || cfg.Output == "-":
		d.w = cfg.Stdout
	default:
		d.final, d.part = cfg.Output, cfg.Output+partSuffix
		f, err := os.Create(d.part)
		if err != nil {
			return nil, err
		}
		d.f, d.w = f, f
	}
	return d, nil
}

// resumeTarget is the partial file --resume NAME continues and the file it
// becomes: NAME.part becomes NAME; NAME, when only NAME.part exists, is
// that; a NAME without .part (left by an earlier version's fetch) is
// continued where it is.
func resumeTarget(name string) (part, final string, err error) {
	if final, ok := strings.CutSuffix(name, partSuffix); ok && final != "" {
		return name, final, nil
	}
	if _, err := os.Stat(name + partSuffix); err == nil {
		return name + partSuffix, name, nil
	}
	if _, err := os.Stat(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", fmt.Errorf("--resume %s: neither %s nor %s exists: there is no partial download to continue", name, name, name+partSuffix)
		}
		return "", "", fmt.Errorf("--resume %s: %w", name, err)
	}
	return name, name, nil
}

// resumableFormat is the format of a file that can be continued: csv,
// ndjson or json ("" otherwise).
func resumableFormat(format string) string {
	switch format {
	case "csv", "ndjson", "json":
		return format
	}
	return ""
}

// openPartial opens a partial download to continue it: it counts the
// file's complete rows, cuts off what follows the last one, and returns
// the file positioned at its end. A file without a complete row is
// emptied: the download starts over, header and all.
func openPartial(name, format string) (*os.File, int64, error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, 0, err
	}
	rows, end, err := dualresp.ScanRows(f, format)
	if err == nil && rows == 0 {
		end = 0
	}
	if err == nil {
		err = f.Truncate(end)
	}
	if err == nil {
		_, err = f.Seek(end, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, rows, nil
}

// options are the export options that continue the file from its rows.
func (d *download) options() dualresp.ExportOptions {
	return dualresp.ExportOptions{Offset: d.from, Continue: d.from > 0}
}

// finish ends the download: written rows were written now, of total, and
// err is why the download stopped (nil: it is complete). A complete file
// is renamed to its final name. An incomplete one is kept, when it can be
// continued, and the error says how many rows it holds and the command
// that continues it (resumeCommand); when ctx was ended by a signal, the
// error is a *stoppedError.
func (d *download) finish(ctx context.Context, cfg config, total, written int64, err error) error {
	if d.f != nil {
		if cerr := d.f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		if d.f != nil && d.part != d.final {
			return os.Rename(d.part, d.final)
		}
		return nil
	}
	rows := d.from + written
	var sig signalCause
	stopped := errors.As(context.Cause(ctx), &sig)
	var what string
	switch {
	case d.f == nil:
		what = fmt.Sprintf("%d of %s written to stdout", rows, nouns(total, "row", ""))
	case resumableFormat(d.format) == "":
		_ = os.Remove(d.part)
		what = fmt.Sprintf("%d of %s were written, but a partial %s file cannot be continued, so %s is deleted: run the command again",
			rows, nouns(total, "row", ""), d.format, d.part)
	default:
		what = fmt.Sprintf("%d of %s are in %s", rows, nouns(total, "row", ""), d.part)
		if d.part != d.final {
			what += fmt.Sprintf(" (%s is written only once the download is complete)", d.final)
		}
		what += "; to continue: " + resumeCommand(cfg, d.part)
	}
	if stopped {
		return &stoppedError{msg: sig.Error() + ": " + what}
	}
	return fmt.Errorf("%w\n%s", err, what)
}

// stoppedError is a download that a signal stopped: main prints it alone
// and exits with the signal's status.
type stoppedError struct{ msg string }

func (e *stoppedError) Error() string { return e.msg }

// resumeCommand is the command line that continues the partial file part:
// the one given, its --resume (if any) replaced by --resume part.
func resumeCommand(cfg config, part string) string {
	args := cfg.Argv
	if len(args) == 0 { // not from a command line (tests): the command and its arguments
		args = append([]string{cfg.Command}, cfg.Args...)
	}
	var out []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--resume":
			i++ // and its value
		case strings.HasPrefix(a, "--resume="):
		default:
			out = append(out, shellQuote(a))
		}
	}
	out = append(out, "--resume", shellQuote(part))
	return "datasf-mcp " + strings.Join(out, " ")
}
