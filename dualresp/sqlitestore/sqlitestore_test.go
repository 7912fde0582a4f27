package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/storetest"
	"github.com/google/go-cmp/cmp"
)

// t0 is the tests' "now"; times are whole milliseconds like storetest's.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatalf("Open(%s) = %v; want nil", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) dualresp.Store {
		return open(t, filepath.Join(t.TempDir(), "results.db"))
	})
}

// The pin quota and the pinned results' idle expiration, through a
// dualresp.Server on this store.
func TestPins(t *testing.T) {
	t.Parallel()
	storetest.RunPins(t, func(t *testing.T) dualresp.Store {
		s, err := Open(t.Context(), filepath.Join(t.TempDir(), "results.db"), Options{})
		if err != nil {
			t.Fatalf("Open = %v; want nil", err)
		}
		return s
	})
}

// TestSurvivesReopen closes the store and opens the file again: every
// record, pinned or not, comes back exactly as it was.
func TestSurvivesReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "results.db")
	s := open(t, path)

	unpinned := storetest.Record("unpinned", t0.Add(15*time.Minute))
	touched := storetest.Record("touched", t0.Add(time.Minute))
	pinned := storetest.Record("pinned", t0.Add(time.Minute))
	// Nanosecond precision survives too.
	unpinned.CreatedAt = t0.Add(123 * time.Nanosecond)
	for _, r := range []*dualresp.Record{unpinned, touched, pinned} {
		if err := s.Save(ctx, r); err != nil {
			t.Fatalf("Save(%s) = %v", r.ID, err)
		}
	}
	touched, err := s.Touch(ctx, "touched", t0.Add(30*time.Second), 10*time.Minute)
	if err != nil {
		t.Fatalf("Touch = %v", err)
	}
	if pinned, err = s.Pin(ctx, "pinned"); err != nil {
		t.Fatalf("Pin = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if _, err := s.Get(ctx, "pinned"); !errors.Is(err, dualresp.ErrClosed) {
		t.Errorf("Get after Close = %v; want ErrClosed", err)
	}

	s2 := open(t, path)
	for _, want := range []*dualresp.Record{unpinned, touched, pinned} {
		got, err := s2.Get(ctx, want.ID)
		if err != nil {
			t.Fatalf("after reopen Get(%s) = %v; want nil", want.ID, err)
		}
		if diff := cmp.Diff(want, got, storetest.Compare); diff != "" {
			t.Errorf("after reopen Get(%s) mismatch (-want +got):\n%s", want.ID, diff)
		}
	}
	// Expiry still works after the reopen: only the pinned record outlives
	// every expiry.
	n, err := s2.DeleteExpired(ctx, t0.Add(time.Hour))
	if err != nil || n != 2 {
		t.Errorf("DeleteExpired(t0+1h) after reopen = %d, %v; want 2, nil", n, err)
	}
	if _, err := s2.Get(ctx, "pinned"); err != nil {
		t.Errorf("Get(pinned) after DeleteExpired = %v; want nil", err)
	}
	t.Logf("records survived close+reopen: 3 of 3; expired after reopen: %d", n)
}

// TestPragmas checks WAL mode, synchronous=NORMAL, the busy timeout and the
// schema version on both connection pools.
func TestPragmas(t *testing.T) {
	t.Parallel()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "p.db"), Options{BusyTimeout: 1234 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tests := []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"synchronous", "1"}, // NORMAL
		{"busy_timeout", "1234"},
		{"user_version", fmt.Sprint(SchemaVersion)},
	}
	for pool, db := range map[string]*sql.DB{"write": s.write, "read": s.read} {
		for _, tt := range tests {
			var got string
			if err := db.QueryRowContext(t.Context(), "PRAGMA "+tt.pragma).Scan(&got); err != nil {
				t.Fatalf("%s pool: PRAGMA %s: %v", pool, tt.pragma, err)
			}
			if got != tt.want {
				t.Errorf("%s pool: PRAGMA %s = %q; want %q", pool, tt.pragma, got, tt.want)
			}
		}
	}
}

// TestDeleteExpiredUsesIndex checks the query plan of DeleteExpired.
func TestDeleteExpiredUsesIndex(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "i.db"))
	rows, err := s.write.QueryContext(t.Context(),
		`EXPLAIN QUERY PLAN DELETE FROM records WHERE expires_at IS NOT NULL AND expires_at <= ? AND pinned = 0`, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "records_expires_at") {
		t.Errorf("DeleteExpired plan = %q; want a search using index records_expires_at", plan)
	}
}

// TestConcurrentTouchTwoStores touches one record from 32 goroutines spread
// over two Stores open on the same file: no access is lost.
func TestConcurrentTouchTwoStores(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "c.db")
	a, b := open(t, path), open(t, path)
	if err := a.Save(ctx, storetest.Record("hot", t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 32, 10
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		s := a
		if g%2 == 1 {
			s = b
		}
		wg.Go(func() {
			for i := range each {
				if _, err := s.Touch(ctx, "hot", t0.Add(time.Duration(g*each+i)*time.Millisecond), time.Minute); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Touch: %v", err)
	}
	got, err := b.Get(ctx, "hot")
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessCount != goroutines*each {
		t.Errorf("AccessCount after %d touches = %d; want %d", goroutines*each, got.AccessCount, goroutines*each)
	}
	// The latest now (t0 + 319ms) plus a minute is the expiry.
	if want := t0.Add((goroutines*each-1)*time.Millisecond + time.Minute); !got.ExpiresAt.Equal(want) {
		t.Errorf("ExpiresAt after touches = %v; want %v", got.ExpiresAt, want)
	}
	t.Logf("concurrent Touch over two stores on one file: %d goroutines x %d = AccessCount %d", goroutines, each, got.AccessCount)
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.db")
	s := open(t, newer)
	if _, err := s.write.ExecContext(t.Context(), "PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		opts    Options
		wantErr string
	}{
		{"empty path", "", Options{}, "empty database path"},
		{"memory", ":memory:", Options{}, "give a file path"},
		{"uri", "file:x.db", Options{}, "give a file path"},
		{"question mark", filepath.Join(dir, "a?b.db"), Options{}, "contains '?'"},
		{"negative busy timeout", filepath.Join(dir, "b.db"), Options{BusyTimeout: -time.Second}, "BusyTimeout is negative"},
		{"negative read conns", filepath.Join(dir, "c.db"), Options{MaxReadConns: -1}, "MaxReadConns is negative"},
		{"missing directory", filepath.Join(dir, "no", "such", "d.db"), Options{}, "d.db"},
		{"newer schema", newer, Options{}, "schema version 99 is newer than this program supports (1)"},
		{"not a database", garbage, Options{}, "garbage.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Open(t.Context(), tt.path, tt.opts)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q, %+v) = nil error; want one containing %q", tt.path, tt.opts, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Open(%q, %+v) = %v; want an error containing %q", tt.path, tt.opts, err, tt.wantErr)
			}
		})
	}
}

func TestForeignTableRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "foreign.db")
	s := open(t, path)
	// Pretend the file belongs to someone else: a records table, no version.
	if _, err := s.write.ExecContext(t.Context(), "PRAGMA user_version = 0"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(t.Context(), path, Options{})
	if err == nil || !strings.Contains(err.Error(), "not a sqlitestore database") {
		t.Errorf("Open(file with an unversioned records table) = %v; want 'not a sqlitestore database'", err)
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "x.db"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Save(ctx, storetest.Record("x", t0)); !errors.Is(err, context.Canceled) {
		t.Errorf("Save(canceled ctx) = %v; want context.Canceled", err)
	}
}

func TestTimeOutOfRange(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "x.db"))
	r := storetest.Record("far", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
	err := s.Save(t.Context(), r)
	if err == nil || !strings.Contains(err.Error(), "expires_at") || !strings.Contains(err.Error(), "outside the storable range") {
		t.Errorf("Save(ExpiresAt in year 3000) = %v; want an error naming expires_at and the range", err)
	}
}

// TestMaxRecords: past Options.MaxRecords, saving a record removes the
// unpinned records that expire first; pinned records stay.
func TestMaxRecords(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "bounded.db"), Options{MaxRecords: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	save := func(id string, expires time.Time, pinned bool) {
		t.Helper()
		r := &dualresp.Record{ID: id, Query: dualresp.Query{Kind: "soql", Text: "SELECT 1"}, CreatedAt: base, LastAccess: base, ExpiresAt: expires, Pinned: pinned}
		if pinned {
			r.ExpiresAt = time.Time{}
		}
		if err := s.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	save("pinned", time.Time{}, true)
	for i := range 5 {
		save(fmt.Sprintf("r%d", i), base.Add(time.Duration(i)*time.Hour), false)
	}
	var kept []string
	for _, id := range []string{"pinned", "r0", "r1", "r2", "r3", "r4"} {
		if _, err := s.Get(ctx, id); err == nil {
			kept = append(kept, id)
		}
	}
	if want := []string{"pinned", "r3", "r4"}; !slices.Equal(kept, want) {
		t.Errorf("records kept under MaxRecords 3 = %v; want %v", kept, want)
	}
}
