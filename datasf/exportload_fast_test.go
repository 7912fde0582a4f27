//go:build !e2e

package datasf_test

import "time"

// The fast tier's export size and timeout (exportload_test.go): a quarter
// of the e2e tier's rows, and a longer upstream timeout, since make test
// runs this tier under the race detector, which slows the product several
// times over.
const (
	loadRows    = 6_000
	loadTimeout = 4 * time.Second
	slowRate    = 1 << 20 // loadRows take this reader 1.5 times loadTimeout
)
