//go:build !unix

package localportal

import "context"

// lockFile is a no-op where flock is missing (Windows): two processes that
// start together may both build a cache file, each into a temporary file of
// its own; the rename that publishes it is atomic, and a process whose
// rename fails (the file is open elsewhere) serves its own copy.
func lockFile(context.Context, string) (unlock func(), err error) {
	return func() {}, nil
}
