package socratatest

import (
	"bytes"
	"sync"
)

// LogBuffer is a log destination safe for concurrent writes (a
// slog.Handler's writer shared by a server's goroutines), whose String a
// test reads while they may still write.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
