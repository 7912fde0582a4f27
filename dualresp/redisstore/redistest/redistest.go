// Package redistest starts a real redis-server for tests, on a free loopback
// port, and stops it when the test ends.
//
//	func TestSomething(t *testing.T) {
//		addr := redistest.Start(t) // "127.0.0.1:PORT"
//		...
//	}
//
// Without redis-server on PATH, Start fails the test when the environment
// variable CI is "true" and skips it otherwise (install the Debian package
// redis-server to run these tests).
package redistest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds how long Start waits for the server to answer PING.
const startTimeout = 10 * time.Second

// Start starts a redis-server that keeps nothing on disk (--save ""
// --appendonly no), bound to 127.0.0.1 on a free port, waits until it
// answers PING, and returns its address "127.0.0.1:PORT". The server is
// stopped in tb.Cleanup.
func Start(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redistest: redis-server not found on PATH; install the Debian package redis-server (apt-get install -y redis-server) to run the Redis tests"
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg + " (CI=true: failing instead of skipping)")
		}
		tb.Skip(msg)
	}
	// The port may be taken between choosing it and the server binding it;
	// try a few times.
	var lastErr error
	for range 3 {
		addr, err := start(tb, bin)
		if err == nil {
			return addr
		}
		lastErr = err
	}
	tb.Fatalf("redistest: %v", lastErr)
	return ""
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lockedBuffer collects the server's output for error messages.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func start(tb testing.TB, bin string) (string, error) {
	port, err := freePort()
	if err != nil {
		return "", fmt.Errorf("choose a port: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--dir", tb.TempDir(),
	)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}

	deadline := time.Now().Add(startTimeout)
	for {
		if err := ping(addr); err == nil {
			break
		} else if time.Now().After(deadline) {
			stop()
			return "", fmt.Errorf("redis-server on %s did not answer PING within %v: %v\n%s", addr, startTimeout, err, out.String())
		}
		select {
		case err := <-exited:
			return "", fmt.Errorf("redis-server on %s exited before answering PING: %v\n%s", addr, err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	tb.Cleanup(stop)
	return addr, nil
}

// ping sends one inline PING and expects +PONG.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(time.Second)); err != nil {
		return err
	}
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}
