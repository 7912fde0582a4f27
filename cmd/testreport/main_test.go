package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
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

// TestTaggedTests: the tests of files built with the tag (and not without it) are found,
// with other constraints too, and no others (untagged, negated, or under
// testdata).
func TestTaggedTests(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		"a/slow_e2e_test.go":    "//go:build e2e\n\npackage a\n\nfunc TestSlow(t *testing.T) {}\nfunc FuzzSlow(f *testing.F) {}\nfunc helper() {}\n",
		"a/fast_test.go":        "package a\n\nfunc TestFast(t *testing.T) {}\n",
		"a/notslow_test.go":     "//go:build !e2e\n\npackage a\n\nfunc TestNotSlow(t *testing.T) {}\n",
		"e2e/b/b_test.go":       "//go:build e2e\n\npackage b\n\nfunc TestBinary(t *testing.T) {}\n",
		"a/testdata/x_test.go":  "//go:build e2e\n\npackage x\n\nfunc TestData(t *testing.T) {}\n",
		"a/other_linux_test.go": "//go:build e2e && (linux || darwin || windows)\n\npackage a\n\nfunc TestBoth(t *testing.T) {}\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := taggedTests(root, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"FuzzSlow", "TestBinary", "TestBoth", "TestSlow"}; !slices.Equal(got, want) {
		t.Errorf("taggedTests = %v; want %v", got, want)
	}
	if _, err := taggedTests(root, "nothing"); err == nil {
		t.Error("taggedTests of a tag no file has: no error")
	}
}
