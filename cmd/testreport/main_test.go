package main

import (
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReport(t *testing.T) {
	t.Parallel()
	const pkg = "github.com/datasf-mcp/datasf-mcp/redis"
	events := []event{
		{Action: "run", Package: pkg, Test: "TestA"},
		{Action: "output", Package: pkg, Test: "TestA", Output: "=== RUN   TestA\n"},
		{Action: "output", Package: pkg, Test: "TestA", Output: "    a_test.go:9: redistest: redis-server not found on PATH; install the Debian package redis-server\n"},
		{Action: "output", Package: pkg, Test: "TestA", Output: "--- SKIP: TestA (0.00s)\n"},
		{Action: "skip", Package: pkg, Test: "TestA"},
		{Action: "output", Package: pkg, Test: "TestB", Output: "=== RUN   TestB\n"},
		{Action: "output", Package: pkg, Test: "TestB", Output: "    b_test.go:3: got 1, want 2\n"},
		{Action: "output", Package: pkg, Test: "TestB", Output: "--- FAIL: TestB (0.01s)\n"},
		{Action: "fail", Package: pkg, Test: "TestB", Elapsed: 0.7},
		{Action: "output", Package: pkg, Test: "TestC", Output: "--- PASS: TestC (0.01s)\n"},
		{Action: "pass", Package: pkg, Test: "TestC", Elapsed: 1.5},
		{Action: "pass", Package: pkg, Test: "TestC/sub", Elapsed: 1.4},
		{Action: "pass", Package: pkg, Test: "TestC", Elapsed: 1.5}, // TestC again, in another run
		{Action: "output", Package: pkg, Output: "FAIL\tgithub.com/datasf-mcp/datasf-mcp/redis\t0.5s\n"},
		{Action: "fail", Package: pkg, Elapsed: 0.5},
	}
	var out strings.Builder
	r := newReport(&out)
	for _, e := range events {
		r.add(e)
	}
	want := "    b_test.go:3: got 1, want 2\n--- FAIL: TestB (0.01s)\nFAIL\tgithub.com/datasf-mcp/datasf-mcp/redis\t0.5s\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("plain output (-want +got):\n%s", diff)
	}
	wantSkips := []skip{{pkg, "TestA", "redistest: redis-server not found on PATH; install the Debian package redis-server"}}
	if diff := cmp.Diff(wantSkips, r.skips, cmp.AllowUnexported(skip{})); diff != "" {
		t.Errorf("skips (-want +got):\n%s", diff)
	}
	var sum strings.Builder
	r.summary(&sum, true)
	for _, s := range []string{"1 skipped tests (CI=true: each one is a failure)", "redis.TestA", "4 tests ran (3 top-level, 1 subtests)", "slowest packages: redis 0.5s", "slowest tests: redis.TestC 1.5s, redis.TestB 0.7s"} {
		if !strings.Contains(sum.String(), s) {
			t.Errorf("summary %q does not contain %q", sum.String(), s)
		}
	}
}

func TestSplitRuns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want [][]string
	}{
		{[]string{"-race", "./..."}, [][]string{{"-race", "./..."}}},
		{[]string{"-race", "./...", "--", "-run", "X", "./a"}, [][]string{{"-race", "./..."}, {"-run", "X", "./a"}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, splitRuns(tt.args)); diff != "" {
			t.Errorf("splitRuns(%q) (-want +got):\n%s", tt.args, diff)
		}
	}
}

// A nested module's packages count for it, not for the module around it;
// a module none of whose packages ran is named.
func TestUntested(t *testing.T) {
	t.Parallel()
	const root = "github.com/datasf-mcp/datasf-mcp"
	mods := []string{root, root + "/dualresp", root + "/dualresp/mcpgo", root + "/dualresp/gosdk", root + "/examples/dualresp-minimal"}
	r := newReport(io.Discard)
	for _, pkg := range []string{root + "/datasf", root + "/dualresp/mcpgo", root + "/dualresp-other", root + "/examples/dualresp-minimal"} {
		r.add(event{Action: "pass", Package: pkg, Elapsed: 1})
	}
	want := []string{root + "/dualresp", root + "/dualresp/gosdk"}
	if diff := cmp.Diff(want, r.untested(mods)); diff != "" {
		t.Errorf("untested (-want +got):\n%s", diff)
	}
	r.add(event{Action: "skip", Package: root + "/dualresp/storetest"}) // [no test files]
	r.add(event{Action: "fail", Package: root + "/dualresp/gosdk"})
	if got := r.untested(mods); len(got) != 0 {
		t.Errorf("untested = %v; want none", got)
	}
}
