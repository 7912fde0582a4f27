package socrata

import "time"

// Hooks for the tests of package socrata_test. The tests against
// socratatest live there: socratatest imports this package, so an internal
// test cannot import it.

// RecordWaits makes c record its retry waits instead of sleeping, with no
// jitter, and returns a function listing the waits so far.
func RecordWaits(c *Client) func() []time.Duration {
	s := &sleeps{}
	c.sleep = s.sleep
	c.jitter = func(time.Duration) time.Duration { return 0 }
	return s.all
}

// LogBuffer is a concurrency-safe buffer for a logger's output.
type LogBuffer = logBuffer

// ReadFile and ReadJSON read test files, failing the test on errors.
var (
	ReadFile = readFile
	ReadJSON = readJSON
)
