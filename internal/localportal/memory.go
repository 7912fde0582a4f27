package localportal

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Memory after a burst: Go keeps freed heap for reuse and collects only
// when allocating, so after a large job (a full export, a big page, a
// build) an idle server would hold its peak for minutes. The releaser
// returns it to the system once a burst is over.
const (
	releaseEvery = 2 * time.Second
	burstBytes   = 64 << 20 // allocated since the last release: a burst
	quietBytes   = 4 << 20  // allocated in the last interval: it is over
)

// releaseMemory runs until stop is closed: when more than burstBytes were
// allocated since the last release and the last interval was quiet, it
// gives the freed memory back to the system (debug.FreeOSMemory).
func releaseMemory(stop <-chan struct{}) {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	released, last := read(), read()
	tick := time.NewTicker(releaseEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		now := read()
		if now-released > burstBytes && now-last < quietBytes {
			debug.FreeOSMemory()
			released = read()
		}
		last = now
	}
}
