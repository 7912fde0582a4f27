package dualresp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// DefaultMaxResumes is how many times ExportWith resumes a download broken
// midway, by default.
const DefaultMaxResumes = 5

// maxHeldRow bounds the bytes ExportWith holds back: the last complete row
// and the one being read. A row larger than this fails the export.
const maxHeldRow = 64 << 20

// ExportOptions configures ExportWith. The zero value exports CSV from the
// first row, resuming up to DefaultMaxResumes times.
type ExportOptions struct {
	// Format is csv (the default), ndjson, json or parquet.
	Format string
	// Offset is the first row of the result to export.
	Offset int64
	// Typed asks for numbers and booleans as JSON numbers and booleans
	// (from the column types) instead of Socrata's strings; json and
	// ndjson only.
	Typed bool
	// MaxResumes is how many times a download broken midway (a cut
	// connection, a server gone, an export the server ended as incomplete)
	// is resumed from its last complete row with a new request, which any
	// replica of the server can answer. Zero: DefaultMaxResumes; negative:
	// never. A Parquet, GeoJSON or XLSX download cannot be continued and is
	// not resumed.
	MaxResumes int
	// OnResume, when set, is told of each resume before it is asked for.
	OnResume func(Resume)
	// Continue says that w already holds the rows before Offset in this
	// format (a partial file being continued, see ScanRows): the export
	// goes on after them, without a second CSV header or JSON "[".
	Continue bool
}

// Resume describes one resume of an export (ExportOptions.OnResume).
type Resume struct {
	// Row is the row the export continues from: the rows written so far
	// plus ExportOptions.Offset.
	Row int64
	// Attempt counts the resumes from 1; Max is the most there may be.
	Attempt, Max int
	// Err is why the download before it stopped.
	Err error
}

// ExportResult is what ExportWith wrote.
type ExportResult struct {
	Bytes   int64 // bytes written to w
	Rows    int64 // complete rows written
	Resumes int   // downloads resumed
}

// ExportWith streams the result from row opts.Offset on, in opts.Format, to
// w. Failures before a download starts are retried (see
// ClientOptions.MaxRetries). A download broken midway is resumed from the
// last complete row (/export?offset=N), up to opts.MaxResumes times, and
// spliced so that w gets one well-formed file: each row once, in order, the
// CSV header once, one JSON array. w only ever gets whole rows: the last
// row of a download is held back until the next begins or the export ends,
// so a server's marker of an incomplete export (see Handler) never reaches
// w when the export is resumed past it. When resuming fails too, the error
// says how many rows w has; ExportOptions.Offset set to that row continues
// it later (datasf-mcp fetch --resume does).
func (p *Parsed) ExportWith(ctx context.Context, w io.Writer, opts ExportOptions) (ExportResult, error) {
	var res ExportResult
	u, err := p.url()
	if err != nil {
		return res, err
	}
	format := opts.Format
	if format == "" {
		format = "csv"
	}
	most := opts.MaxResumes
	switch {
	case most == 0:
		most = DefaultMaxResumes
	case most < 0 || format == "parquet" || format == "geojson" || format == "xlsx":
		most = 0
	}
	sp := &splicer{w: w, format: format, continued: opts.Continue && opts.Offset > 0}
	for {
		q := url.Values{"format": {format}}
		if row := opts.Offset + sp.rows; row > 0 {
			q.Set("offset", strconv.FormatInt(row, 10))
		}
		if opts.Typed {
			q.Set("typed", "true")
		}
		eu := u + "/export?" + q.Encode()
		sp.begin()
		err := p.client.do(ctx, http.MethodGet, eu, nil, func(resp *http.Response) error {
			return sp.read(resp, eu)
		}, true)
		res.Bytes, res.Rows = sp.n, sp.rows
		if err == nil {
			return res, nil
		}
		var fe *FetchError
		if ctx.Err() != nil || !errors.As(err, &fe) || !fe.broken || res.Resumes >= most || sp.werr != nil {
			if sp.rows > 0 || opts.Offset > 0 {
				err = fmt.Errorf("%w (the output has the rows up to row %d of the result, each whole; export with offset %d to continue)", err, opts.Offset+sp.rows, opts.Offset+sp.rows)
			}
			return res, err
		}
		res.Resumes++
		if opts.OnResume != nil {
			opts.OnResume(Resume{Row: opts.Offset + sp.rows, Attempt: res.Resumes, Max: most, Err: err})
		}
		wait := min(p.client.backoff<<(res.Resumes-1), 10*time.Second)
		wait += time.Duration(rand.Int64N(int64(wait)/4 + 1))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return res, ctx.Err()
		case <-t.C:
		}
	}
}

// splicer writes the downloads of one export to w as one file, whole rows
// only (see ExportWith). It finds where rows end by the format: a newline
// (ndjson), a newline outside quotes (csv, after the header record), the
// end of an object inside the top-level array (json).
type splicer struct {
	w         io.Writer
	format    string
	continued bool  // w held rows before the first download
	n         int64 // bytes written to w
	rows      int64 // complete rows written to w
	werr      error // writing to w failed

	// Per download: held are the bytes read and not yet written, from
	// held[done:]; the last complete row ends at lastEnd (-1: none).
	held     []byte
	done     int
	lastEnd  int
	skipping bool // dropping the prefix (csv header, json "[") of a resumed download
	comma    bool // json: a "," goes before the first row of a resumed download
	header   bool // csv: the header record has ended
	inQuote  bool // csv
	depth    int  // json
	inStr    bool // json
	esc      bool // json
}

// begin readies the splicer for a new download.
func (s *splicer) begin() {
	s.held, s.done, s.lastEnd = s.held[:0], 0, -1
	s.header, s.inQuote, s.depth, s.inStr, s.esc = false, false, 0, false, false
	resumed := s.rows > 0 || s.continued
	s.skipping = resumed && (s.format == "csv" || s.format == "json")
	s.comma = resumed && s.format == "json"
}

// read copies one download's body.
func (s *splicer) read(resp *http.Response, u string) error {
	buf := make([]byte, 64<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if err := s.feed(buf[:n]); err != nil {
				return &FetchError{Method: http.MethodGet, URL: u, StatusCode: resp.StatusCode, Err: err, noRetry: true}
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			// The last complete row is a row of the result (a marker of an
			// incomplete export comes only at a clean end): keep it.
			s.writeLast()
			return &FetchError{Method: http.MethodGet, URL: u, StatusCode: resp.StatusCode, noRetry: true, broken: s.werr == nil,
				Err: fmt.Errorf("download broken after %s: %w", nouns(s.rows, "row"), rerr)}
		}
	}
	if resp.Trailer.Get(TrailerExportStatus) == "incomplete" {
		// The last "row" is the server's marker: drop it and what follows.
		return &FetchError{Method: http.MethodGet, URL: u, StatusCode: resp.StatusCode, noRetry: true, broken: s.werr == nil,
			Err: fmt.Errorf("the export is incomplete (%s rows sent, ending with the marker of an incomplete export): the server's data source failed midway", resp.Trailer.Get(TrailerExportRows))}
	}
	if s.lastEnd >= 0 {
		s.rows++
	}
	s.write(len(s.held))
	return s.werr
}

// write writes held[done:end] to w.
func (s *splicer) write(end int) {
	if s.werr == nil && end > s.done {
		n, err := s.w.Write(s.held[s.done:end])
		s.n += int64(n)
		s.werr = err
	}
	s.done = end
}

// writeLast writes the last complete row.
func (s *splicer) writeLast() {
	if s.lastEnd >= 0 {
		s.write(s.lastEnd)
		s.rows++
		s.lastEnd = -1
	}
}

// rowEnd notes that a row ends at end in held: the row before it is
// written, this one held back.
func (s *splicer) rowEnd(end int) {
	s.writeLast()
	s.lastEnd = end
}

// feed takes the next bytes of a download.
func (s *splicer) feed(p []byte) error {
	if s.skipping {
		if p = s.skip(p); len(p) == 0 {
			return s.werr
		}
	}
	base := len(s.held)
	s.held = append(s.held, p...)
	switch s.format {
	case "ndjson":
		for i := base; i < len(s.held); {
			j := bytes.IndexByte(s.held[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			s.rowEnd(i)
		}
	case "csv":
		for i := base; i < len(s.held); i++ {
			switch s.held[i] {
			case '"':
				s.inQuote = !s.inQuote
			case '\n':
				switch {
				case s.inQuote:
				case !s.header:
					s.header = true // the header goes out with the first row
				default:
					s.rowEnd(i + 1)
				}
			}
		}
	case "json":
		for i := base; i < len(s.held); i++ {
			c := s.held[i]
			switch {
			case s.inStr:
				switch {
				case s.esc:
					s.esc = false
				case c == '\\':
					s.esc = true
				case c == '"':
					s.inStr = false
				}
			case c == '"':
				s.inStr = true
			case c == '{' || c == '[':
				if s.depth == 1 && s.comma {
					// The first row of a resumed download follows the rows
					// written: the array's comma goes before it.
					s.held = slices.Insert(s.held, i, ',')
					s.comma = false
					i++
				}
				s.depth++
			case c == '}' || c == ']':
				s.depth--
				if s.depth == 1 {
					s.rowEnd(i + 1)
				}
			}
		}
	default:
		// parquet: no rows to find; the bytes pass through.
		s.write(len(s.held))
	}
	// Drop what was written.
	if s.done > 0 {
		s.held = s.held[:copy(s.held, s.held[s.done:])]
		if s.lastEnd >= 0 {
			s.lastEnd -= s.done
		}
		s.done = 0
	}
	if len(s.held) > maxHeldRow {
		return fmt.Errorf("a row of the export is larger than %d bytes", maxHeldRow)
	}
	return s.werr
}

// skip drops the prefix of a resumed download (the CSV header record, the
// JSON array's "["); it returns the bytes after it.
func (s *splicer) skip(p []byte) []byte {
	for i, c := range p {
		switch s.format {
		case "csv":
			switch {
			case c == '"':
				s.inQuote = !s.inQuote
			case c == '\n' && !s.inQuote:
				s.skipping, s.header = false, true
				return p[i+1:]
			}
		case "json":
			if c == '[' {
				s.skipping, s.depth = false, 1
				return p[i+1:]
			}
		}
	}
	return nil
}

// ScanRows reads a partial export in format (csv, ndjson or json, as
// ExportWith or the REST export wrote it) and returns its complete rows
// and the bytes up to the end of the last one: cut the file there and
// continue it with ExportWith (Offset rows, Continue). A last row that is
// the marker of an incomplete export (see Handler) is not counted.
func ScanRows(r io.Reader, format string) (rows, end int64, err error) {
	switch format {
	case "csv", "ndjson", "json":
	default:
		return 0, 0, fmt.Errorf("dualresp: cannot continue a %s file: only csv, ndjson and json files can be scanned for rows", format)
	}
	s := &splicer{w: io.Discard, format: format}
	s.begin()
	buf := make([]byte, 64<<10)
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			if err := s.feed(buf[:n]); err != nil {
				return 0, 0, err
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return 0, 0, rerr
		}
	}
	if s.lastEnd >= 0 && !isIncompleteMarker(s.held[s.done:s.lastEnd]) {
		s.writeLast()
	}
	return s.rows, s.n, nil
}

// isIncompleteMarker reports whether a row is the marker of an incomplete
// export.
func isIncompleteMarker(row []byte) bool {
	row = bytes.TrimLeft(row, "[,\n\r\t ")
	return bytes.HasPrefix(row, []byte("#export_incomplete")) || bytes.HasPrefix(row, []byte(`"#export_incomplete`)) ||
		bytes.Contains(row, []byte(`"error":"export_incomplete"`))
}
