package dualresp

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Exports at once. An export holds a connection, a pipeline of pages and
// a Parquet row group for as long as its reader takes: 100 slow readers
// of one result held 1.4 GB. The REST API so streams at most
// MaxExportsPerCaller exports of one caller at once (past it 429) and
// MaxExports in all (past it 503), each with Retry-After, as it refuses
// other work it cannot take now.
const (
	// DefaultMaxExportsPerCaller bounds the exports of one caller at once
	// when Options.MaxExportsPerCaller is zero.
	DefaultMaxExportsPerCaller = 8
	// DefaultMaxExports bounds the exports at once in all when
	// Options.MaxExports is zero.
	DefaultMaxExports = 32
	// exportRetryAfter is the Retry-After of a refused export: exports
	// last seconds to minutes.
	exportRetryAfter = 10 * time.Second
)

// exportSlots counts the exports running, by caller and in all.
type exportSlots struct {
	perCaller, all int // <= 0: no bound

	mu     sync.Mutex
	n      int
	caller map[string]int
}

func newExportSlots(perCaller, all int) *exportSlots {
	if perCaller == 0 {
		perCaller = DefaultMaxExportsPerCaller
	}
	if all == 0 {
		all = DefaultMaxExports
	}
	return &exportSlots{perCaller: perCaller, all: all, caller: map[string]int{}}
}

// exportCaller is whom an export counts against: the authenticated owner
// (WithOwner), else the remote address, whatever else the request says.
func exportCaller(r *http.Request) string {
	if owner, ok := OwnerFrom(r.Context()); ok && owner != "" {
		return "owner:" + owner
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "ip:" + host
}

// take reserves a slot for one export of caller, or returns the answer
// that refuses it; release gives the slot back.
func (e *exportSlots) take(caller string) (release func(), err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.perCaller > 0 && e.caller[caller] >= e.perCaller:
		return nil, &apiError{status: http.StatusTooManyRequests, code: "too_many_exports", retryAfter: exportRetryAfter,
			message: fmt.Sprintf("you already have %d exports running, the most one caller may have at once; finish or close one, then retry", e.perCaller)}
	case e.all > 0 && e.n >= e.all:
		return nil, &apiError{status: http.StatusServiceUnavailable, code: "too_many_exports", retryAfter: exportRetryAfter,
			message: fmt.Sprintf("the server already streams %d exports, the most it runs at once; retry shortly", e.all)}
	}
	e.n++
	e.caller[caller]++
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.n--
			if e.caller[caller]--; e.caller[caller] <= 0 {
				delete(e.caller, caller)
			}
		})
	}, nil
}
