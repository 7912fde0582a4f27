package analyze

import (
	"database/sql"
	"strings"
	"testing"

	"modernc.org/sqlite"
)

// Statements that get past the text check must still fail on the locked
// connection: the check is not the only guard.
func TestLockDownEnforcedBySQLite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE t (a); INSERT INTO t VALUES (1), (2)`); err != nil {
		t.Fatal(err)
	}
	if err := lockDown(ctx, conn, MinResultColumns); err != nil {
		t.Fatal(err)
	}
	a := New(nil, Options{})
	writes := []string{
		"INSERT INTO t VALUES (3)",
		"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x",
		"UPDATE t SET a = 0",
		"DELETE FROM t",
		"DROP TABLE t",
		"CREATE TABLE u (b)",
		"CREATE TEMP TABLE u (b)",
		"ATTACH DATABASE ':memory:' AS other",
		"PRAGMA query_only = OFF",
		"SELECT load_extension('libx')",
		"BEGIN",
	}
	for _, q := range writes {
		// Both through the query path and as a plain Exec.
		if err := a.query(ctx, conn, q, &Result{}); err == nil {
			t.Errorf("query(%q) succeeded on the locked connection", q)
		}
		if _, err := conn.ExecContext(ctx, q); err == nil {
			t.Errorf("Exec(%q) succeeded on the locked connection", q)
		}
	}
	var res Result
	if err := a.query(ctx, conn, "SELECT count(*) AS n, sum(a) AS s FROM t", &res); err != nil {
		t.Fatal(err)
	}
	if res.Rows[0]["n"] != int64(2) || res.Rows[0]["s"] != int64(3) {
		t.Errorf("table changed: %v; want n 2, s 3", res.Rows)
	}
	err = a.query(ctx, conn, "INSERT INTO t VALUES (3)", &Result{})
	if err == nil || !strings.Contains(err.Error(), "not authorized") && !strings.Contains(err.Error(), "readonly") {
		t.Errorf("write error = %v; want SQLite's refusal", err)
	}
	t.Logf("a write on the locked connection: %v", err)

	// Without the authorizer, query_only and the attach limit still hold.
	if err := conn.Raw(func(dc any) error { return dc.(sqlite.AuthorizerRegisterer).RegisterAuthorizer(nil) }); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"INSERT INTO t VALUES (3)", "DELETE FROM t", "CREATE TABLE u (b)", "ATTACH DATABASE ':memory:' AS other"} {
		_, err := conn.ExecContext(ctx, q)
		if err == nil {
			t.Errorf("Exec(%q) succeeded without the authorizer", q)
		}
		t.Logf("without the authorizer, %s: %v", q, err)
	}
}

func TestNumberParsing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want any
	}{
		{"42", int64(42)}, {"-3.5", -3.5}, {"0", int64(0)}, {"1e3", 1000.0},
		{"0042", "0042"}, {"1.", "1."}, {"+1", "+1"}, {"12 ", "12 "}, {"abc", "abc"},
		{"99999999999999999999", "99999999999999999999"}, {"", ""},
	}
	for _, tt := range tests {
		if got := sqlValue(tt.in); got != tt.want {
			t.Errorf("sqlValue(%q) = %#v; want %#v", tt.in, got, tt.want)
		}
	}
}
