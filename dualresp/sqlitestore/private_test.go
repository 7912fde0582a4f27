package sqlitestore

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFilesPrivate: the database a Store makes, and its WAL files, are
// readable by their owner only (0600), and an existing 0644 one is made
// so. The failure this guards against (issue 55): `serve --store sqlite:`
// wrote the database 0644, and another local user read every query and
// the owner hash of each token.
func TestFilesPrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	made := filepath.Join(dir, "made.db")
	loose := filepath.Join(dir, "loose.db")
	if err := os.WriteFile(loose, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	for _, path := range []string{made, loose} {
		s, err := Open(t.Context(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			st, err := os.Stat(p)
			if err != nil {
				continue // no WAL file yet
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %o; want 600", filepath.Base(p), st.Mode().Perm())
			}
		}
		s.Close()
	}
}
