package socrata

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// scanAll runs a rowScanner over body and returns its rows and the error
// that ended the scan (nil at a clean end).
func scanAll(body string, bufSize int) ([]string, error) {
	s := newRowScanner(bufio.NewReaderSize(strings.NewReader(body), bufSize))
	var rows []string
	for {
		row, err := s.next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, string(row))
	}
}

func TestRowScannerRows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"empty", "[]", nil},
		{"empty with space", " \n[ \n ] \n", nil},
		{"one line per row", "[{\"a\":\"1\"}\n,{\"a\":\"2\"}]\n", []string{`{"a":"1"}`, `{"a":"2"}`}},
		{"pretty printed", "[ {\n  \"a\" : \"x y\",\n\t\"b\" : [ 1, 2 ]\n} ]", []string{`{"a":"x y","b":[1,2]}`}},
		{"braces and quotes in strings", `[{"a":"}{][\"\\","b":"\\"},{"c":"\u007d"}]`, []string{`{"a":"}{][\"\\","b":"\\"}`, `{"c":"\u007d"}`}},
		{"nested objects", `[{"p":{"type":"Point","coordinates":[-122.4,37.7]},"q":{}}]`, []string{`{"p":{"type":"Point","coordinates":[-122.4,37.7]},"q":{}}`}},
		{"white space in strings kept", "[{\"a\":\" \\n\\t x \"}]", []string{`{"a":" \n\t x "}`}},
	} {
		for _, size := range []int{16, 4096} { // 16: rows straddle buffer refills
			rows, err := scanAll(tc.body, size)
			if err != nil {
				t.Errorf("%s (buffer %d): %v", tc.name, size, err)
				continue
			}
			if strings.Join(rows, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s (buffer %d): rows %q, want %q", tc.name, size, rows, tc.want)
			}
		}
	}
}

func TestRowScannerErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		truncated  bool   // want io.ErrUnexpectedEOF
		msg        string // else a shapeError containing this
		rowsBefore int
	}{
		{"nothing", "", true, "", 0},
		{"cut in a row", `[{"a":"1"},{"a":"`, true, "", 1},
		{"cut between rows", `[{"a":"1"},`, true, "", 1},
		{"no closing bracket", `[{"a":"1"}`, true, "", 1},
		{"an object, not an array", `{"a":1}`, false, "expected a JSON array", 0},
		{"a row that is a string", `["a"]`, false, "row 1 is not a JSON object", 0},
		{"a row that is an array", `[{"a":1},[1]]`, false, "row 2 is not a JSON object", 1},
		{"missing comma", `[{"a":1} {"a":2}]`, false, "expected ',' or ']' after row 1", 1},
		{"mismatched brackets", `[{"a":[1}]`, false, `row 1: '}' where ']' was expected`, 0},
		{"bad literal", `[{"a":tru}]`, false, "row 1 is not valid JSON", 0},
		{"missing colon", `[{"a" "b"}]`, false, "row 1 is not valid JSON", 0},
	} {
		rows, err := scanAll(tc.body, 16)
		if len(rows) != tc.rowsBefore {
			t.Errorf("%s: %d rows before the error, want %d", tc.name, len(rows), tc.rowsBefore)
		}
		if tc.truncated {
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s: err = %v, want io.ErrUnexpectedEOF", tc.name, err)
			}
			continue
		}
		var shape *shapeError
		if !errors.As(err, &shape) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want a shapeError containing %q", tc.name, err, tc.msg)
		}
	}
}

// FuzzRowScanner checks the scanner against encoding/json: for any body,
// it yields exactly the compacted elements of a valid array of objects, and
// an error for anything else.
func FuzzRowScanner(f *testing.F) {
	for _, s := range []string{"[]", `[{"a":"1"},{"b":[1,{"c":null}]}]`, "[ {\n\"a\" : true } \n]", `[{"a":"}\""}]`, `[1]`, `[{"a":1}`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		rows, err := scanAll(body, 16)
		var elems []json.RawMessage
		want := json.Unmarshal([]byte(body), &elems) == nil && elems != nil
		for _, e := range elems {
			want = want && len(bytes.TrimSpace(e)) > 0 && bytes.TrimSpace(e)[0] == '{'
		}
		if !want {
			if err == nil {
				t.Fatalf("body %q: rows %q and no error, but it is not a JSON array of objects", body, rows)
			}
			return
		}
		if err != nil {
			t.Fatalf("body %q is an array of objects; scanner error: %v", body, err)
		}
		if len(rows) != len(elems) {
			t.Fatalf("body %q: %d rows, want %d", body, len(rows), len(elems))
		}
		for i, e := range elems {
			var c bytes.Buffer
			if err := json.Compact(&c, e); err != nil {
				t.Fatal(err)
			}
			if rows[i] != c.String() {
				t.Fatalf("body %q row %d: %q, want %q", body, i, rows[i], c.String())
			}
		}
	})
}

// endless is a row array whose first row is one string that never ends
// (until limit bytes, past the row bound), counting what was read.
type endless struct {
	head  string
	read  int
	limit int
}

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.limit {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && e.read < e.limit {
		if e.read < len(e.head) {
			p[n] = e.head[e.read]
		} else {
			p[n] = 'x'
		}
		n++
		e.read++
	}
	return n, nil
}

// TestRowScannerBoundsARow: a portal's answer whose row never ends (a
// broken or hostile portal) stops at maxRowBytes with an error saying so,
// instead of being held whole; so does one nested past maxRowDepth.
func TestRowScannerBoundsARow(t *testing.T) {
	t.Parallel()
	body := &endless{head: `[{"a":"`, limit: 3 * maxRowBytes}
	s := newRowScanner(bufio.NewReaderSize(body, 64<<10))
	_, err := s.next()
	var se *shapeError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "larger than 16 MiB") {
		t.Fatalf("an endless row: %v; want a shape error naming the bound", err)
	}
	if body.read > maxRowBytes+(128<<10) {
		t.Errorf("read %d bytes of an endless row; want at most the bound %d and a buffer", body.read, maxRowBytes)
	}
	deep := "[{\"a\":" + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}]"
	if _, err := scanAll(deep, 4096); !errors.As(err, &se) || !strings.Contains(err.Error(), "nests deeper than") {
		t.Errorf("a row nested 10,000 deep: %v; want a shape error naming the depth bound", err)
	}
}
