package sqlitestore

import (
	"bytes"
	"path/filepath"
	"sync"
	"testing"
)

// TestOwnerKeyMadeOnceAtOnce: processes starting together (goroutines
// here) that find no key file all end with the same key, none with an
// error: the key is linked into place whole, so no one reads a file
// another has created but not written yet (which told the reader to
// delete the key, making every token's results unreadable).
func TestOwnerKeyMadeOnceAtOnce(t *testing.T) {
	t.Parallel()
	for round := range 20 {
		path := filepath.Join(t.TempDir(), "results.db.owner-key")
		keys := make([][]byte, 16)
		errs := make([]error, len(keys))
		var start, wg sync.WaitGroup
		start.Add(1)
		for i := range keys {
			wg.Go(func() {
				start.Wait()
				keys[i], errs[i] = ownerKey(path)
			})
		}
		start.Done()
		wg.Wait()
		for i := range keys {
			if errs[i] != nil {
				t.Fatalf("round %d: caller %d: %v", round, i, errs[i])
			}
			if !bytes.Equal(keys[i], keys[0]) {
				t.Fatalf("round %d: callers 0 and %d got different keys", round, i)
			}
		}
	}
}
