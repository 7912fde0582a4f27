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
	return StartServer(tb).Addr
}

// Server is a running redis-server started by StartServer.
type Server struct {
	// Addr is its address, "127.0.0.1:PORT".
	Addr string
	stop func()
}

// Stop stops the server now (SIGTERM, then SIGKILL after 5 seconds), for
// tests of what happens when Redis goes away. It is safe to call more
// than once; tb.Cleanup calls it too.
func (s *Server) Stop() { s.stop() }

// StartServer is Start for a test that also stops the server itself.
func StartServer(tb testing.TB) *Server {
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
		srv, err := start(tb, bin)
		if err == nil {
			return srv
		}
		lastErr = err
	}
	tb.Fatalf("redistest: %v", lastErr)
	return nil
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

func start(tb testing.TB, bin string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("choose a port: %w", err)
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
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := sync.OnceFunc(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	deadline := time.Now().Add(startTimeout)
	for {
		if err := ping(addr); err == nil {
			break
		} else if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING within %v: %v\n%s", addr, startTimeout, err, out.String())
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("redis-server on %s exited before answering PING: %v\n%s", addr, err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	tb.Cleanup(stop)
	return &Server{Addr: addr, stop: stop}, nil
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
