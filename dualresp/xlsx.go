package dualresp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"
)

// XLSX exports. xuri/excelize is the maintained pure-Go library for Office
// Open XML workbooks (no cgo, a streaming row writer that spills to a
// temporary file past 16 MiB, so a large sheet is not held in memory);
// a workbook is a zip of XML parts that spreadsheets check strictly, which
// is not ours to write by hand.
const (
	// XLSXSheetRows is the rows of a worksheet, the header included:
	// Excel's limit (1,048,576). A result with more rows goes on in
	// further sheets, each with its header.
	XLSXSheetRows = excelize.TotalRows
	// XLSXMaxSheets bounds the sheets of a workbook, and so the rows of
	// an XLSX export (4 × 1,048,575) and the temporary disk it takes.
	XLSXMaxSheets = 4
	// xlsxCellChars is the most characters a cell holds (Excel's limit).
	xlsxCellChars = excelize.TotalCellChars
)

// XLSXMaxRows is the most rows an XLSX export holds.
const XLSXMaxRows = XLSXMaxSheets * (XLSXSheetRows - 1)

// ErrXLSXTooManyRows is returned by XLSXWriter.WriteRow past XLSXMaxRows.
var ErrXLSXTooManyRows = fmt.Errorf("an XLSX export holds at most %d rows (%d sheets of %d); export CSV or Parquet instead, or narrow the query", XLSXMaxRows, XLSXMaxSheets, XLSXSheetRows-1)

// XLSXWriter writes rows (JSON objects) as an XLSX workbook: a header row
// (bold) of the column names, then one row a row with typed cells: numbers
// as numbers, booleans as booleans, dates and timestamps as dates
// (yyyy-mm-dd, or yyyy-mm-dd hh:mm:ss when they have a time), null as an
// empty cell, text as text (never a formula), objects and arrays (points,
// shapes) as their compact JSON text. Text past Excel's 32,767 characters
// a cell is cut there. Rows past a sheet's 1,048,576 go on in the next
// sheet (Sheet2, …), up to XLSXMaxSheets. Nothing is written to w until
// Close, which writes the workbook; a writer that is not closed must be
// discarded (Discard) to remove its temporary files.
type XLSXWriter struct {
	w         io.Writer
	f         *excelize.File
	sw        *excelize.StreamWriter
	cols      []parquetColumn // name and kind; kind -1: a date or timestamp
	dates     []bool
	sheetRows int // rows of a sheet, the header included (XLSXSheetRows; lower in tests)
	sheets    int
	row       int // the next row of the current sheet (1-based)
	count     int64
	expect    int64 // the rows to be written, when known (SetRows); 0: unknown
	cells     []any
	header    []any
	dateStyle int
	timeStyle int
}

// NewXLSXWriter returns an XLSXWriter of the given columns to w.
func NewXLSXWriter(w io.Writer, cols []Column) (*XLSXWriter, error) {
	x := &XLSXWriter{w: w, f: excelize.NewFile(), sheetRows: XLSXSheetRows}
	bold, err := x.f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		return nil, x.fail(err)
	}
	dateFmt, timeFmt := "yyyy-mm-dd", "yyyy-mm-dd hh:mm:ss"
	if x.dateStyle, err = x.f.NewStyle(&excelize.Style{CustomNumFmt: &dateFmt}); err != nil {
		return nil, x.fail(err)
	}
	if x.timeStyle, err = x.f.NewStyle(&excelize.Style{CustomNumFmt: &timeFmt}); err != nil {
		return nil, x.fail(err)
	}
	for _, c := range cols {
		x.cols = append(x.cols, parquetColumn{c.Name, columnKind(c.Type)})
		x.dates = append(x.dates, isTimeType(c.Type))
		x.header = append(x.header, excelize.Cell{StyleID: bold, Value: truncateCell(c.Name)})
	}
	x.cells = make([]any, len(cols))
	return x, nil
}

// fail discards the writer and returns err.
func (x *XLSXWriter) fail(err error) error {
	x.Discard()
	return err
}

func isTimeType(t string) bool {
	switch strings.ToLower(t) {
	case "calendar_date", "floating_timestamp", "fixed_timestamp", "date", "timestamp", "datetime":
		return true
	}
	return false
}

// newSheet starts the next sheet with its header.
func (x *XLSXWriter) newSheet() error {
	if x.sheets == XLSXMaxSheets {
		return ErrXLSXTooManyRows
	}
	if x.sw != nil {
		if err := x.sw.Flush(); err != nil {
			return err
		}
	}
	x.sheets++
	name := "Sheet" + strconv.Itoa(x.sheets)
	if x.sheets > 1 {
		if _, err := x.f.NewSheet(name); err != nil {
			return err
		}
	}
	if x.expect > x.count && len(x.cols) > 0 {
		// The sheet declares its range (openpyxl's read-only mode, for one,
		// reads no further).
		rows := min(int64(x.sheetRows-1), x.expect-x.count)
		ref, err := excelize.CoordinatesToCellName(len(x.cols), int(rows)+1)
		if err == nil {
			err = x.f.SetSheetDimension(name, "A1:"+ref)
		}
		if err != nil {
			return err
		}
	}
	sw, err := x.f.NewStreamWriter(name)
	if err != nil {
		return err
	}
	x.sw = sw
	x.row = 1
	if len(x.header) > 0 {
		if err := sw.SetRow("A1", x.header); err != nil {
			return err
		}
		x.row = 2
	}
	return nil
}

// WriteRow writes one row, a JSON object; keys that are not columns are
// left out.
func (x *XLSXWriter) WriteRow(row json.RawMessage) error {
	if x.sw == nil || x.row > x.sheetRows {
		if err := x.newSheet(); err != nil {
			return err
		}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(row, &m); err != nil {
		return fmt.Errorf("row %d is not a JSON object: %w", x.count, err)
	}
	for i, c := range x.cols {
		x.cells[i] = x.cell(m[c.name], c.kind, x.dates[i])
	}
	cell, err := excelize.CoordinatesToCellName(1, x.row)
	if err != nil {
		return err
	}
	if err := x.sw.SetRow(cell, x.cells); err != nil {
		return fmt.Errorf("row %d: %w", x.count, err)
	}
	x.row++
	x.count++
	return nil
}

// cell is a JSON value as an XLSX cell of its column's kind; a value that
// is not of the kind is its text.
func (x *XLSXWriter) cell(v json.RawMessage, kind valueKind, date bool) any {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	text := csvCell(v)
	switch {
	case kind == kindNumber:
		if f, err := strconv.ParseFloat(text, 64); err == nil {
			return f
		}
	case kind == kindBool:
		if b, err := strconv.ParseBool(text); err == nil {
			return b
		}
	case date:
		if t, ok := parseTimestamp(text); ok {
			style := x.timeStyle
			if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
				style = x.dateStyle
			}
			return excelize.Cell{StyleID: style, Value: t}
		}
	}
	return truncateCell(text)
}

// parseTimestamp reads Socrata's dates and timestamps (floating ones
// without a zone, fixed ones with one); a fixed timestamp keeps its clock
// time, as a spreadsheet has no zones.
func parseTimestamp(s string) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05.999999999Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC), true
		}
	}
	return time.Time{}, false
}

// truncateCell cuts text to the characters a cell holds.
func truncateCell(s string) string {
	if len(s) <= xlsxCellChars {
		return s
	}
	r := []rune(s)
	if len(r) <= xlsxCellChars {
		return s
	}
	return string(r[:xlsxCellChars])
}

// SetRows says how many rows will be written, before the first: each
// sheet then declares its range, which some readers (openpyxl's read-only
// mode, and so pandas) need to read past the first row.
func (x *XLSXWriter) SetRows(n int64) { x.expect = n }

// Rows returns the rows written.
func (x *XLSXWriter) Rows() int64 { return x.count }

// Close writes the workbook to w and removes the temporary files.
func (x *XLSXWriter) Close() error {
	defer x.Discard()
	if x.sw == nil {
		if err := x.newSheet(); err != nil {
			return err
		}
	}
	if err := x.sw.Flush(); err != nil {
		return err
	}
	_, err := x.f.WriteTo(x.w)
	return err
}

// Discard removes the writer's temporary files without writing.
func (x *XLSXWriter) Discard() {
	if x.f != nil {
		_ = x.f.Close()
		x.f = nil
	}
}
