package redistest_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp/redisstore/redistest"
)

func TestStart(t *testing.T) {
	t.Parallel()
	var addr string
	t.Run("server", func(t *testing.T) {
		addr = redistest.Start(t)
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Errorf("Start() = %q; want a 127.0.0.1 address", addr)
		}
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write([]byte("SET k v\r\nGET k\r\nCONFIG GET save\r\n")); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(conn)
		var got []string
		for range 8 { // +OK, $1 v, *2 $4 save $0 ""
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("read reply: %v (so far %q)", err, got)
			}
			got = append(got, strings.TrimSpace(line))
		}
		want := []string{"+OK", "$1", "v", "*2", "$4", "save", "$0", ""}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("replies = %q; want %q", got, want)
		}
	})
	if t.Failed() || t.Skipped() || addr == "" {
		return
	}
	// The subtest's cleanup stopped the server.
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Errorf("redis-server on %s still accepts connections after the test ended", addr)
	}
}
