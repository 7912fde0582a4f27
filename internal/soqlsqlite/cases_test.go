package soqlsqlite

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	_ "modernc.org/sqlite"

	"github.com/datasf-mcp/datasf-mcp/internal/soql"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

var update = flag.Bool("update", false, "rewrite the expected files of testdata/cases")

// TestCases runs the cases of testdata/cases, one folder each, the way
// sqlc's end-to-end tests are laid out:
//
//	query.soql     the SoQL query
//	schema.json    the dataset: {"id", "createdAt", "columns": [{"fieldName", "dataTypeName"}]}
//	rows.json      its rows, in row (:id) order, as objects of stored values
//	expected.sql   the statement Compile makes
//	expected.json  its result: the columns (name, kind, X-SODA2-Types name)
//	               and the rows as SQLite returns them
//	error.txt      instead of expected.json, when the query is refused: the
//	               HTTP status on the first line, then Socrata's envelope
//
// rows.json holds the storage forms of Kind: timestamps as
// "2024-03-15T13:45:30.000" (with a Z when fixed), numbers and texts as
// themselves, checkboxes as true/false (stored 1/0), and points,
// locations and other structured values as JSON objects (stored as their
// text). A query that does not parse is answered like one Compile refuses
// (ParseError), and has no expected.sql. The query runs at caseNow with
// the Resource API's default limit.
//
// go test ./internal/soqlsqlite -run TestCases -update rewrites
// expected.sql, expected.json and error.txt from what the code does now:
// review the diff before committing it.
func TestCases(t *testing.T) {
	t.Parallel()
	if err := Register(); err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join("testdata", "cases", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no cases in testdata/cases")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			runCase(t, dir)
		})
	}
}

// caseNow is the time the cases run at, get_utc_date()'s value.
var caseNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// caseSchema is a case's schema.json.
type caseSchema struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
	Columns   []struct {
		FieldName string `json:"fieldName"`
		DataType  string `json:"dataTypeName"`
	} `json:"columns"`
}

// caseResult is a case's expected.json.
type caseResult struct {
	Columns []caseColumn `json:"columns"`
	Rows    [][]any      `json:"rows"`
}

// marshal writes r as expected.json: a column or a row a line.
func (r *caseResult) marshal(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	lines := func(n int, item func(i int) any) {
		for i := range n {
			line, err := json.Marshal(item(i))
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("\n    ")
			b.Write(line)
			if i < n-1 {
				b.WriteByte(',')
			}
		}
	}
	b.WriteString("{\n  \"columns\": [")
	lines(len(r.Columns), func(i int) any { return r.Columns[i] })
	b.WriteString("\n  ],\n  \"rows\": [")
	lines(len(r.Rows), func(i int) any { return r.Rows[i] })
	b.WriteString("\n  ]\n}\n")
	return b.Bytes()
}

type caseColumn struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	SODA2 string `json:"soda2"`
}

// kindNames name the kinds in expected.json.
var kindNames = map[Kind]string{KindText: "text", KindNumber: "number", KindBool: "bool", KindFloating: "floating",
	KindFixed: "fixed", KindPoint: "point", KindLocation: "location", KindJSON: "json", KindNull: "null"}

func runCase(t *testing.T, dir string) {
	src := strings.TrimSpace(string(readCaseFile(t, dir, "query.soql")))
	table := caseTable(t, dir)

	var stmt *Statement
	q, err := soql.Parse(src)
	if err != nil {
		err = ParseError(src, err)
	} else {
		stmt, err = Compile(table, src, q, Options{DefaultLimit: true, Now: caseNow})
	}
	if stmt != nil {
		checkFile(t, dir, "expected.sql", []byte(stmt.SQL+"\n"), nil)
	} else if *update {
		if err := os.Remove(filepath.Join(dir, "expected.sql")); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if err == nil {
		var res *caseResult
		res, err = runStatement(t, table, readCaseFile(t, dir, "rows.json"), stmt)
		if err == nil {
			checkFile(t, dir, "expected.json", res.marshal(t), jsonEqual)
			return
		}
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("%s: %v; want rows or an *Error", src, err)
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ce.Body); err != nil {
		t.Fatal(err)
	}
	checkFile(t, dir, "error.txt", fmt.Appendf(nil, "%d\n%s", ce.Status, body.Bytes()), errorEqual)
}

// caseTable is the Table of the schema.json of the case in dir.
func caseTable(t *testing.T, dir string) *Table {
	t.Helper()
	var sc caseSchema
	if err := json.Unmarshal(readCaseFile(t, dir, "schema.json"), &sc); err != nil {
		t.Fatalf("%s/schema.json: %v", dir, err)
	}
	table := &Table{ID: sc.ID, From: QuoteIdent("ds_" + strings.ReplaceAll(sc.ID, "-", "_")), CreatedAt: sc.CreatedAt}
	for _, c := range sc.Columns {
		table.Columns = append(table.Columns, socrata.Column{FieldName: c.FieldName, DataType: c.DataType})
	}
	return table
}

// runStatement loads rows into a fresh in-memory database as table and
// runs stmt on it with Conn's bounds. An error of the run that LimitReason
// names is returned as the portal's *Error.
func runStatement(t *testing.T, table *Table, rowsJSON []byte, stmt *Statement) (*caseResult, error) {
	t.Helper()
	// An in-memory database private to this case (the memdb VFS, as
	// localportal opens its own), used through one connection held with
	// Conn's bounds.
	db, err := sql.Open("sqlite", "file:/soqlsqlite-"+strings.ReplaceAll(t.Name(), "/", "-")+"?vfs=memdb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := t.Context()
	conn, release, err := Conn(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := conn.ExecContext(ctx, createTable(table)); err != nil {
		t.Fatalf("create table: %v", err)
	}
	var rows []map[string]json.RawMessage
	if err := json.Unmarshal(rowsJSON, &rows); err != nil {
		t.Fatalf("rows.json: %v", err)
	}
	for i, row := range rows {
		names := []string{RowIDColumn}
		args := []any{int64(i + 1)}
		for _, c := range table.Columns {
			raw, ok := row[c.FieldName]
			if !ok {
				continue
			}
			sv, err := storedValue(KindOf(c.DataType), raw)
			if err != nil {
				t.Fatalf("rows.json row %d, %s: %v", i+1, c.FieldName, err)
			}
			names = append(names, QuoteIdent(c.FieldName))
			args = append(args, sv)
		}
		insert := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table.From, strings.Join(names, ", "),
			strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", "))
		if _, err := conn.ExecContext(ctx, insert, args...); err != nil {
			t.Fatalf("rows.json row %d: %v", i+1, err)
		}
	}

	res := &caseResult{Rows: [][]any{}}
	for _, c := range stmt.Columns {
		res.Columns = append(res.Columns, caseColumn{Name: c.Name, Kind: kindNames[c.Kind], SODA2: c.SODA2})
	}
	result, err := conn.QueryContext(ctx, stmt.SQL)
	if err == nil {
		defer result.Close()
		for result.Next() {
			vals := make([]any, len(stmt.Columns))
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err = result.Scan(ptrs...); err != nil {
				break
			}
			for i, v := range vals {
				if b, ok := v.([]byte); ok {
					vals[i] = string(b)
				}
			}
			res.Rows = append(res.Rows, vals)
		}
		if err == nil {
			err = result.Err()
		}
	}
	if err != nil {
		if reason := LimitReason(err); reason != "" {
			return nil, &Error{Status: 400, Body: map[string]any{"errorCode": "query.execution.failed",
				"message": "Query coordinator error: query.execution.failed; " + reason}}
		}
		t.Fatalf("running %s: %v", stmt.SQL, err)
	}
	return res, nil
}

// createTable is table's CREATE TABLE, declared as localportal declares it.
func createTable(table *Table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (%s INTEGER PRIMARY KEY", table.From, RowIDColumn)
	for _, c := range table.Columns {
		typ := "TEXT"
		switch KindOf(c.DataType) {
		case KindNumber:
			typ = "NUMERIC"
		case KindBool:
			typ = "INTEGER"
		}
		fmt.Fprintf(&b, ", %s %s", QuoteIdent(c.FieldName), typ)
	}
	return b.String() + ")"
}

// storedValue is a rows.json value as SQLite stores it for kind k: an
// object or array as its text, as written.
func storedValue(k Kind, raw json.RawMessage) (any, error) {
	if t := bytes.TrimSpace(raw); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		var b bytes.Buffer
		err := json.Compact(&b, t)
		return b.String(), err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if k != KindBool {
			return nil, fmt.Errorf("a boolean in a %s column", kindNames[k])
		}
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case json.Number:
		if i, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return i, nil
		}
		return x.Float64()
	case string:
		if (k == KindFloating || k == KindFixed) && !isStoredTimestamp(x, k == KindFixed) {
			return nil, fmt.Errorf("timestamp %q is not in its stored form, such as 2006-01-02T15:04:05.000 (floating) or 2006-01-02T15:04:05.000Z (fixed)", x)
		}
		return x, nil
	}
	return nil, fmt.Errorf("unexpected %T", v)
}

// isStoredTimestamp reports whether s is a timestamp in its stored form.
func isStoredTimestamp(s string, fixed bool) bool {
	norm, ok := NormalizeTimestamp(s, fixed)
	return ok && norm == s
}

func readCaseFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkFile compares got with the file name of dir (equal decides; nil:
// byte for byte), or with -update writes it and removes the other
// outcome's file (a case has expected.json or error.txt, not both).
func checkFile(t *testing.T, dir, name string, got []byte, equal func(want, got []byte) (string, error)) {
	t.Helper()
	path := filepath.Join(dir, name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		other := map[string]string{"expected.json": "error.txt", "error.txt": "expected.json"}[name]
		if other != "" {
			if err := os.Remove(filepath.Join(dir, other)); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestCases -update writes it)", err)
	}
	if equal == nil {
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		return
	}
	diff, err := equal(want, got)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

// jsonEqual compares two JSON documents, numbers by their text.
func jsonEqual(want, got []byte) (string, error) {
	var w, g any
	for _, d := range []struct {
		b []byte
		v *any
	}{{want, &w}, {got, &g}} {
		dec := json.NewDecoder(bytes.NewReader(d.b))
		dec.UseNumber()
		if err := dec.Decode(d.v); err != nil {
			return "", err
		}
	}
	return cmp.Diff(w, g), nil
}

// errorEqual compares two error.txt files: the status line, then the
// envelopes as JSON.
func errorEqual(want, got []byte) (string, error) {
	ws, wb, _ := bytes.Cut(want, []byte("\n"))
	gs, gb, _ := bytes.Cut(got, []byte("\n"))
	diff, err := jsonEqual(wb, gb)
	if err != nil {
		return "", err
	}
	return cmp.Diff(string(ws), string(gs)) + diff, nil
}
