// Package storetest checks that a dualresp.Store keeps the Store contract.
// Every Store implementation runs it from its own tests:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) dualresp.Store {
//			s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "r.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// base is the fixed instant the tests use as "now". Times are whole
// milliseconds in UTC so that stores with millisecond precision pass.
var base = time.Date(2025, 3, 14, 15, 9, 26, 535_000_000, time.UTC)

// Compare is the go-cmp option set the contract uses to compare records:
// times compare with Equal (so zone and monotonic readings do not matter) and
// nil and empty slices and maps compare equal.
var Compare = cmp.Options{
	cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
	cmpopts.EquateEmpty(),
}

// Record returns a fully populated record with the given id, expiring at
// expires. Metadata values survive a JSON round trip unchanged.
func Record(id string, expires time.Time) *dualresp.Record {
	return &dualresp.Record{
		ID:          id,
		Name:        "Food trucks " + id,
		Description: "Permits by status, with \"quotes\" and ünïcode",
		Query: dualresp.Query{
			Kind:   "soql",
			Text:   "SELECT applicant, status ORDER BY :id",
			Params: map[string]string{"dataset_id": "rqzj-sfat", "domain": "data.cityofchicago.org"}, // a query on another portal
		},
		Columns:    []dualresp.Column{{Name: "applicant", Type: "text"}, {Name: "status"}},
		TotalCount: 847,
		Sample: []json.RawMessage{
			json.RawMessage(`{"applicant":"A","status":"APPROVED"}`),
			json.RawMessage(`{"applicant":"B","status":null}`),
		},
		Metadata: map[string]any{
			"dataset_id":  "rqzj-sfat",
			"ratio":       0.5,
			"flag":        true,
			"corrections": []any{map[string]any{"original": "aplicant", "corrected": "applicant"}},
		},
		Owner:       "alice",
		CreatedAt:   base,
		LastAccess:  base,
		ExpiresAt:   expires,
		AccessCount: 0,
	}
}

// Run runs the Store contract tests. newStore must return a new, empty store
// isolated from every other store it returned; Run closes it (and calling
// Close again from a t.Cleanup of newStore must be safe). Subtests run one
// after the other.
func Run(t *testing.T, newStore func(t *testing.T) dualresp.Store) {
	t.Helper()
	open := func(t *testing.T) dualresp.Store {
		t.Helper()
		s := newStore(t)
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close() = %v; want nil", err)
			}
		})
		return s
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, s dualresp.Store)
	}{
		{"SaveGet", testSaveGet},
		{"SaveReplaces", testSaveReplaces},
		{"SaveEmptyID", testSaveEmptyID},
		{"Isolation", testIsolation},
		{"NotFound", testNotFound},
		{"Touch", testTouch},
		{"Pin", testPin},
		{"Delete", testDelete},
		{"DeleteExpired", testDeleteExpired},
		{"ExpiredStillReadable", testExpiredStillReadable},
		{"Concurrent", testConcurrent},
		{"CountPinned", testCountPinned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open(t)) })
	}
	// The optional interfaces' tests run for a store that has them, and
	// are not run (rather than skipped: a skip fails CI) for one that
	// does not: the memory store keeps no owner key and renames no
	// owners, since nothing of it outlives the process.
	probe := newStore(t)
	_, renames := probe.(dualresp.OwnerRenamer)
	_, keys := probe.(dualresp.OwnerKeyer)
	if err := probe.Close(); err != nil {
		t.Errorf("Close() = %v; want nil", err)
	}
	if renames {
		t.Run("RenameOwners", func(t *testing.T) { testRenameOwners(t, open(t)) })
	}
	if keys {
		t.Run("OwnerKey", func(t *testing.T) { testOwnerKey(t, open(t)) })
	}
	t.Run("CloseTwice", func(t *testing.T) {
		s := newStore(t)
		if err := s.Save(t.Context(), Record("closeme", base.Add(time.Hour))); err != nil {
			t.Fatalf("Save() = %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("first Close() = %v; want nil", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close() = %v; want nil", err)
		}
	})
}

func mustSave(t *testing.T, s dualresp.Store, r *dualresp.Record) {
	t.Helper()
	if err := s.Save(t.Context(), r); err != nil {
		t.Fatalf("Save(%q) = %v; want nil", r.ID, err)
	}
}

func mustGet(t *testing.T, s dualresp.Store, id string) *dualresp.Record {
	t.Helper()
	r, err := s.Get(t.Context(), id)
	if err != nil {
		t.Fatalf("Get(%q) = %v; want nil", id, err)
	}
	if r == nil {
		t.Fatalf("Get(%q) = nil record and nil error", id)
	}
	return r
}

func testSaveGet(t *testing.T, s dualresp.Store) {
	want := Record("a1", base.Add(15*time.Minute))
	want.AccessCount = 3
	want.LastAccess = base.Add(time.Minute)
	mustSave(t, s, want)
	got := mustGet(t, s, "a1")
	if diff := cmp.Diff(want, got, Compare); diff != "" {
		t.Errorf("Get(a1) mismatch (-want +got):\n%s", diff)
	}

	pinned := Record("p1", time.Time{})
	pinned.Pinned = true
	mustSave(t, s, pinned)
	got = mustGet(t, s, "p1")
	if diff := cmp.Diff(pinned, got, Compare); diff != "" {
		t.Errorf("Get(p1) mismatch (-want +got):\n%s", diff)
	}

	bare := &dualresp.Record{ID: "bare", CreatedAt: base, ExpiresAt: base.Add(time.Minute)}
	mustSave(t, s, bare)
	got = mustGet(t, s, "bare")
	if diff := cmp.Diff(bare, got, Compare); diff != "" {
		t.Errorf("Get(bare) mismatch (-want +got):\n%s", diff)
	}
}

func testSaveReplaces(t *testing.T, s dualresp.Store) {
	mustSave(t, s, Record("r1", base.Add(time.Minute)))
	want := Record("r1", base.Add(time.Hour))
	want.Name = "replaced"
	want.Columns = []dualresp.Column{{Name: "only"}}
	want.Metadata = map[string]any{"k": "v"}
	want.Sample = nil
	mustSave(t, s, want)
	got := mustGet(t, s, "r1")
	if diff := cmp.Diff(want, got, Compare); diff != "" {
		t.Errorf("Get after second Save mismatch (-want +got):\n%s", diff)
	}
}

func testSaveEmptyID(t *testing.T, s dualresp.Store) {
	if err := s.Save(t.Context(), Record("", base.Add(time.Hour))); err == nil {
		t.Errorf("Save(record with empty ID) = nil; want an error")
	}
}

// testIsolation checks that the store neither keeps the caller's memory nor
// hands out its own.
func testIsolation(t *testing.T, s dualresp.Store) {
	in := Record("iso", base.Add(time.Hour))
	mustSave(t, s, in)
	want := Record("iso", base.Add(time.Hour))

	in.Name = "changed"
	in.Columns[0].Name = "changed"
	in.Sample[0][2] = 'X'
	in.Metadata["dataset_id"] = "changed"
	in.Query.Params["dataset_id"] = "changed"

	got := mustGet(t, s, "iso")
	if diff := cmp.Diff(want, got, Compare); diff != "" {
		t.Fatalf("record changed through the saved pointer (-want +got):\n%s", diff)
	}
	got.Name = "changed"
	got.Columns[0].Name = "changed"
	got.Sample[0][2] = 'X'
	got.Metadata["dataset_id"] = "changed"
	got.Query.Params["dataset_id"] = "changed"
	again := mustGet(t, s, "iso")
	if diff := cmp.Diff(want, again, Compare); diff != "" {
		t.Errorf("record changed through a returned pointer (-want +got):\n%s", diff)
	}
}

func testNotFound(t *testing.T, s dualresp.Store) {
	ctx := t.Context()
	mustSave(t, s, Record("present", base.Add(time.Hour)))
	const id = "0123456789abcdef0123456789abcdef"
	checks := []struct {
		op  string
		err error
	}{
		{"Get", func() error { _, err := s.Get(ctx, id); return err }()},
		{"Touch", func() error { _, err := s.Touch(ctx, id, base, time.Minute); return err }()},
		{"Pin", func() error { _, err := s.Pin(ctx, id); return err }()},
		{"Delete", s.Delete(ctx, id)},
	}
	for _, c := range checks {
		if !errors.Is(c.err, dualresp.ErrNotFound) {
			t.Errorf("%s(missing) = %v; want ErrNotFound", c.op, c.err)
		}
	}
	// Missing ids must not have been created by the calls above.
	if _, err := s.Get(ctx, id); !errors.Is(err, dualresp.ErrNotFound) {
		t.Errorf("Get(missing) after Touch/Pin = %v; want ErrNotFound", err)
	}
}

func testTouch(t *testing.T, s dualresp.Store) {
	ctx := t.Context()
	exp := base.Add(15 * time.Minute)
	tests := []struct {
		name      string
		pinned    bool
		now       time.Time
		extend    time.Duration
		wantExpAt time.Time
	}{
		{"extends", false, base.Add(10 * time.Minute), 15 * time.Minute, base.Add(25 * time.Minute)},
		{"never shortens", false, base.Add(time.Minute), 5 * time.Minute, exp},
		{"zero extension", false, base.Add(10 * time.Minute), 0, exp},
		{"negative extension", false, base.Add(10 * time.Minute), -time.Hour, exp},
		{"after expiry", false, base.Add(time.Hour), 15 * time.Minute, base.Add(75 * time.Minute)},
		{"pinned", true, base.Add(10 * time.Minute), 15 * time.Minute, time.Time{}},
	}
	for i, tt := range tests {
		id := fmt.Sprintf("touch%d", i)
		r := Record(id, exp)
		if tt.pinned {
			r.Pinned, r.ExpiresAt = true, time.Time{}
		}
		r.AccessCount = 2
		mustSave(t, s, r)
		got, err := s.Touch(ctx, id, tt.now, tt.extend)
		if err != nil {
			t.Fatalf("%s: Touch() = %v; want nil", tt.name, err)
		}
		want := r.Clone()
		want.AccessCount = 3
		want.LastAccess = tt.now
		want.ExpiresAt = tt.wantExpAt
		if diff := cmp.Diff(want, got, Compare); diff != "" {
			t.Errorf("%s: Touch() result mismatch (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(want, mustGet(t, s, id), Compare); diff != "" {
			t.Errorf("%s: Get after Touch mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

func testPin(t *testing.T, s dualresp.Store) {
	ctx := t.Context()
	r := Record("pin", base.Add(time.Minute))
	mustSave(t, s, r)
	want := r.Clone()
	want.Pinned, want.ExpiresAt = true, time.Time{}
	for i := range 2 { // pinning twice changes nothing
		got, err := s.Pin(ctx, "pin")
		if err != nil {
			t.Fatalf("Pin() #%d = %v; want nil", i+1, err)
		}
		if diff := cmp.Diff(want, got, Compare); diff != "" {
			t.Errorf("Pin() #%d mismatch (-want +got):\n%s", i+1, diff)
		}
	}
	if diff := cmp.Diff(want, mustGet(t, s, "pin"), Compare); diff != "" {
		t.Errorf("Get after Pin mismatch (-want +got):\n%s", diff)
	}
	n, err := s.DeleteExpired(ctx, base.Add(1000*time.Hour))
	if err != nil || n != 0 {
		t.Errorf("DeleteExpired(far future) with only a pinned record = %d, %v; want 0, nil", n, err)
	}
	mustGet(t, s, "pin")
}

// testCountPinned checks dualresp.PinCounter, for stores that implement it.
func testCountPinned(t *testing.T, s dualresp.Store) {
	pc, ok := s.(dualresp.PinCounter)
	if !ok {
		t.Skipf("%T does not implement dualresp.PinCounter", s)
	}
	ctx := t.Context()
	count := func(owner string, want int) {
		t.Helper()
		if n, err := pc.CountPinned(ctx, owner); err != nil || n != want {
			t.Errorf("CountPinned(%q) = %d, %v; want %d, nil", owner, n, err, want)
		}
	}
	count("alice", 0)
	for i, owner := range []string{"alice", "alice", "alice", "bob", ""} {
		r := Record(fmt.Sprintf("p%d", i), base.Add(time.Hour))
		r.Owner = owner
		mustSave(t, s, r)
	}
	count("alice", 0)
	for _, id := range []string{"p0", "p1", "p3", "p4"} {
		if _, err := s.Pin(ctx, id); err != nil {
			t.Fatalf("Pin(%s) = %v", id, err)
		}
	}
	if _, err := s.Pin(ctx, "p0"); err != nil { // twice: still one
		t.Fatalf("Pin(p0) again = %v", err)
	}
	saved := Record("p5", time.Time{})
	saved.Pinned = true // saved pinned
	mustSave(t, s, saved)
	count("alice", 3)
	count("bob", 1)
	count("", 1)
	if err := s.Delete(ctx, "p0"); err != nil {
		t.Fatal(err)
	}
	unpinned := Record("p1", base.Add(time.Hour)) // replaced by an unpinned record
	mustSave(t, s, unpinned)
	count("alice", 1)
	count("nobody", 0)
	// Labels inside an identity (dualresp.OwnerIdentity) count for it.
	for i, owner := range []string{"alice/key-1", "alice/key-2", "alicebob/key-1"} {
		r := Record(fmt.Sprintf("l%d", i), base.Add(time.Hour))
		r.Owner = owner
		mustSave(t, s, r)
		if _, err := s.Pin(ctx, r.ID); err != nil {
			t.Fatalf("Pin(%s) = %v", r.ID, err)
		}
	}
	count("alice", 3)
	count("alice/key-9", 3)
	count("alicebob", 1)
	count("bob", 1)
}

func testDelete(t *testing.T, s dualresp.Store) {
	ctx := t.Context()
	mustSave(t, s, Record("d1", base.Add(time.Hour)))
	mustSave(t, s, Record("d2", base.Add(time.Hour)))
	if err := s.Delete(ctx, "d1"); err != nil {
		t.Fatalf("Delete(d1) = %v; want nil", err)
	}
	if _, err := s.Get(ctx, "d1"); !errors.Is(err, dualresp.ErrNotFound) {
		t.Errorf("Get(d1) after Delete = %v; want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "d1"); !errors.Is(err, dualresp.ErrNotFound) {
		t.Errorf("second Delete(d1) = %v; want ErrNotFound", err)
	}
	mustGet(t, s, "d2")
}

func testDeleteExpired(t *testing.T, s dualresp.Store) {
	ctx := t.Context()
	now := base.Add(time.Hour)
	mustSave(t, s, Record("past", now.Add(-time.Second)))
	mustSave(t, s, Record("exact", now))
	mustSave(t, s, Record("future", now.Add(time.Millisecond)))
	pinned := Record("pinned", time.Time{})
	pinned.Pinned = true
	mustSave(t, s, pinned)
	mustSave(t, s, Record("repinned", now.Add(-time.Hour)))
	if _, err := s.Pin(ctx, "repinned"); err != nil {
		t.Fatalf("Pin(repinned) = %v", err)
	}

	n, err := s.DeleteExpired(ctx, now)
	if err != nil {
		t.Fatalf("DeleteExpired() = %v; want nil", err)
	}
	if n != 2 {
		t.Errorf("DeleteExpired() = %d; want 2 (past, exact)", n)
	}
	for id, gone := range map[string]bool{"past": true, "exact": true, "future": false, "pinned": false, "repinned": false} {
		_, err := s.Get(ctx, id)
		if gone && !errors.Is(err, dualresp.ErrNotFound) {
			t.Errorf("Get(%s) after DeleteExpired = %v; want ErrNotFound", id, err)
		}
		if !gone && err != nil {
			t.Errorf("Get(%s) after DeleteExpired = %v; want nil", id, err)
		}
	}
	if n, err := s.DeleteExpired(ctx, now); err != nil || n != 0 {
		t.Errorf("second DeleteExpired() = %d, %v; want 0, nil", n, err)
	}
}

func testExpiredStillReadable(t *testing.T, s dualresp.Store) {
	mustSave(t, s, Record("old", base.Add(-time.Hour)))
	r := mustGet(t, s, "old")
	if !r.Expired(base) {
		t.Errorf("Expired(%v) = false for ExpiresAt %v; want true", base, r.ExpiresAt)
	}
}

// testConcurrent runs creates, reads, touches, pins and deletes from many
// goroutines; with -race it finds data races, and the access count of a
// shared record checks that Touch is atomic.
func testConcurrent(t *testing.T, s dualresp.Store) {
	ctx := t.Context()
	const workers, perWorker = 8, 25
	mustSave(t, s, Record("shared", base.Add(time.Hour)))
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker*6)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				id := fmt.Sprintf("c%d-%d", w, i)
				if err := s.Save(ctx, Record(id, base.Add(time.Hour))); err != nil {
					errs <- fmt.Errorf("Save(%s): %w", id, err)
					continue
				}
				if _, err := s.Get(ctx, id); err != nil {
					errs <- fmt.Errorf("Get(%s): %w", id, err)
				}
				if _, err := s.Touch(ctx, "shared", base.Add(time.Duration(i)*time.Second), time.Minute); err != nil {
					errs <- fmt.Errorf("Touch(shared): %w", err)
				}
				if _, err := s.Get(ctx, "shared"); err != nil {
					errs <- fmt.Errorf("Get(shared): %w", err)
				}
				switch i % 3 {
				case 0:
					if _, err := s.Pin(ctx, id); err != nil {
						errs <- fmt.Errorf("Pin(%s): %w", id, err)
					}
				case 1:
					if err := s.Delete(ctx, id); err != nil {
						errs <- fmt.Errorf("Delete(%s): %w", id, err)
					}
				}
				if _, err := s.DeleteExpired(ctx, base); err != nil {
					errs <- fmt.Errorf("DeleteExpired: %w", err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := mustGet(t, s, "shared")
	if got.AccessCount != workers*perWorker {
		t.Errorf("shared AccessCount = %d after %d concurrent Touch calls; want %d", got.AccessCount, workers*perWorker, workers*perWorker)
	}
	for w := range workers {
		for i := range perWorker {
			id := fmt.Sprintf("c%d-%d", w, i)
			r, err := s.Get(ctx, id)
			switch i % 3 {
			case 0:
				if err != nil || !r.Pinned {
					t.Errorf("Get(%s) = %v, %v; want a pinned record", id, r, err)
				}
			case 1:
				if !errors.Is(err, dualresp.ErrNotFound) {
					t.Errorf("Get(%s) = %v; want ErrNotFound after Delete", id, err)
				}
			default:
				if err != nil {
					t.Errorf("Get(%s) = %v; want nil", id, err)
				}
			}
		}
	}
}

// testRenameOwners: a store that is a dualresp.OwnerRenamer gives the
// records of an identity, labelled ones too, pinned or not, to the new
// owner, and leaves the others' alone; the pinned ones count for the new
// owner when the store counts pins. A rename is made once per store.
func testRenameOwners(t *testing.T, s dualresp.Store) {
	r, ok := s.(dualresp.OwnerRenamer)
	if !ok {
		t.Fatal("the store renames no owners")
	}
	owners := map[string]string{"a": "token:old", "b": "token:old/label", "c": "token:other", "d": "token:older"}
	for id, owner := range owners {
		rec := Record(id, base.Add(time.Hour))
		rec.Owner = owner
		mustSave(t, s, rec)
	}
	if _, err := s.Pin(t.Context(), "a"); err != nil {
		t.Fatalf("Pin(a) = %v", err)
	}
	n, err := r.RenameOwners(t.Context(), map[string]string{"token:old": "token:new"})
	if err != nil || n != 2 {
		t.Fatalf("RenameOwners = %d, %v; want 2, nil", n, err)
	}
	want := map[string]string{"a": "token:new", "b": "token:new/label", "c": "token:other", "d": "token:older"}
	for id, owner := range want {
		if got := mustGet(t, s, id); got.Owner != owner {
			t.Errorf("after RenameOwners, Get(%q).Owner = %q; want %q", id, got.Owner, owner)
		}
	}
	if pc, ok := s.(dualresp.PinCounter); ok {
		for owner, want := range map[string]int{"token:new": 1, "token:old": 0} {
			if got, err := pc.CountPinned(t.Context(), owner); err != nil || got != want {
				t.Errorf("CountPinned(%q) = %d, %v; want %d", owner, got, err, want)
			}
		}
	}

	// A rename is made once: called again (the next start of a server),
	// it leaves alone a record stored under the old identity since, and
	// makes only the renames it has not made.
	late := Record("e", base.Add(time.Hour))
	late.Owner = "token:old"
	mustSave(t, s, late)
	n, err = r.RenameOwners(t.Context(), map[string]string{"token:old": "token:new", "token:older": "token:newer"})
	if err != nil || n != 1 {
		t.Fatalf("RenameOwners again, with one new rename = %d, %v; want 1 (the new rename's record), nil", n, err)
	}
	want = map[string]string{"a": "token:new", "d": "token:newer", "e": "token:old"}
	for id, owner := range want {
		if got := mustGet(t, s, id); got.Owner != owner {
			t.Errorf("after RenameOwners again, Get(%q).Owner = %q; want %q", id, got.Owner, owner)
		}
	}
	if n, err := r.RenameOwners(t.Context(), map[string]string{"token:old": "token:new"}); err != nil || n != 0 {
		t.Errorf("RenameOwners a third time = %d, %v; want 0, nil", n, err)
	}
}

// testOwnerKey: a store that is a dualresp.OwnerKeyer gives a key of at
// least 32 bytes, the same one each time.
func testOwnerKey(t *testing.T, s dualresp.Store) {
	k, ok := s.(dualresp.OwnerKeyer)
	if !ok {
		t.Fatal("the store keeps no owner key")
	}
	first, err := k.OwnerKey(t.Context())
	if err != nil || len(first) < 32 {
		t.Fatalf("OwnerKey() = %q, %v; want at least 32 bytes", first, err)
	}
	again, err := k.OwnerKey(t.Context())
	if err != nil || string(again) != string(first) {
		t.Errorf("OwnerKey() again = %q, %v; want %q", again, err, first)
	}
}
