//go:build e2e

package datasf_test

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// loadRows is the size of the exported result: about 24 MB of NDJSON, more
// than loopback socket buffers hold, so a reader that stops reading stops
// whatever streams the result to it.
const loadRows = 24_000

// loadTimeout is the product's upstream timeout (socrata.Options.Timeout).
const loadTimeout = time.Second

// slowRate: loadRows take this reader 6 times loadTimeout.
const slowRate = 4 << 20

// TestExportsFinish: an export completes, rows in order and none twice, for
// a reader that stalls past the upstream timeout, a slow reader and 8
// concurrent slow readers, on a fake portal with and without added
// latency: pages are read whole before the reader gets them, so no
// upstream request waits on the reader and times out.
func TestExportsFinish(t *testing.T) {
	t.Parallel()
	for _, latency := range []time.Duration{0, 40 * time.Millisecond} {
		t.Run(fmt.Sprintf("upstream latency %s", latency), func(t *testing.T) {
			t.Parallel()
			rig := newLoadRig(t, latency)
			url := rig.result(t)
			// One after the other: the stalled reader must find no
			// upstream request open of another reader.
			for _, tc := range []struct {
				name    string
				kind    readerKind
				readers int
			}{
				{"stalled reader", stalledReader, 1},
				{"slow reader", slowReader, 1},
				{"8 concurrent slow readers", slowReader, 8},
			} {
				outs := make([]exportOutcome, tc.readers)
				var wg sync.WaitGroup
				for i := range outs {
					wg.Go(func() { outs[i] = rig.read(t.Context(), url, tc.kind) })
				}
				wg.Wait()
				for i, o := range outs {
					checkComplete(t, fmt.Sprintf("%s: reader %d", tc.name, i), o)
				}
			}
		})
	}
}
