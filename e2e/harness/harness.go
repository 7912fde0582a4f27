//go:build e2e

// Package harness is what the end-to-end tests share (the e2e tree, built
// with the e2e tag: go test -tags e2e ./e2e/...): the datasf-mcp binary,
// built once per run, the module's files found from any test directory,
// and the programs the tests start (Node with interop/'s pinned packages,
// Chromium, haproxy; redis-server through dualresp/redisstore/redistest),
// each looked up with the Debian package to install when it is missing.
//
// A test needing an absent program skips with one line naming the Debian
// package; cmd/testreport (make test) fails the run on that skip when
// CI=true, since CI installs them all (.ci/run).
package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/datasf-mcp/datasf-mcp/internal/fixtures"
)

// Root is the module's root directory (the one with go.mod), found by
// walking up from the working directory of the test process at the first
// call (go test runs a test in its package's directory; Main changes
// directory after). It does not read the source paths compiled into the
// binary, which -trimpath removes.
func Root() string {
	root, err := moduleRoot()
	if err != nil {
		panic("harness: finding the module root: " + err.Error())
	}
	return root
}

var moduleRoot = sync.OnceValues(fixtures.ModuleRoot)

// Path is the module file or directory at rel, a slash-separated path
// from the module root (e.g. "testdata/fixtures", "interop").
func Path(rel string) string {
	return filepath.Join(Root(), filepath.FromSlash(rel))
}

// built is the binary built from ./cmd/datasf-mcp, once per test process.
var built = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "datasf-mcp-e2e-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "datasf-mcp")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/datasf-mcp")
	cmd.Dir = Root()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/datasf-mcp: %v\n%s", err, out)
	}
	return bin, nil
})

// BinaryPath returns the datasf-mcp binary the tests run:
// DATASF_MCP_TEST_BINARY when set (make test builds it once for every
// package of the run; set it to an older build to see a new test fail on
// it), else one built from ./cmd/datasf-mcp on first use.
func BinaryPath() (string, error) {
	if bin := os.Getenv("DATASF_MCP_TEST_BINARY"); bin != "" {
		return bin, nil
	}
	return built()
}

// Binary is BinaryPath for a test: it fails the test when the build fails.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := BinaryPath()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// WarmIncidents has the offline portal build wg3w-h783 (250,000 rows) into
// the cache directory DATASF_CACHE_DIR names, with the CLI and a long
// upstream timeout, so that the tests' own queries of it find it built
// (a query that builds it could outlast the 30 s upstream timeout on a
// loaded machine). Called before the tests, once per test process.
func WarmIncidents() error {
	bin, err := BinaryPath()
	if err != nil {
		return err
	}
	// A query that reads the rows: a bare count(*) is answered without
	// building them (the offline portal knows a sample's row count).
	out, err := exec.Command(bin, "query", "wg3w-h783", "SELECT count(incident_id)", "--offline", "--upstream-timeout", "5m").CombinedOutput()
	if err != nil {
		return fmt.Errorf("building the offline portal's wg3w-h783: %v\n%s", err, out)
	}
	return nil
}

// CacheDir is the offline cache directory a test's servers use: make
// test's shared one (DATASF_MCP_TEST_CACHE, where wg3w-h783 is built
// once for every test process), or a directory of the test's own.
func CacheDir(t testing.TB) string {
	if dir := os.Getenv("DATASF_MCP_TEST_CACHE"); dir != "" {
		return dir
	}
	return t.TempDir()
}

// Main runs a test package's tests in dir (the module directory whose
// relative paths the tests use, e.g. "interop" for its Node scripts),
// after setup when not nil, and removes the binary it built, if any.
// A package's TestMain calls it: os.Exit(harness.Main(m, dir, setup)).
func Main(m *testing.M, dir string, setup func() error) int {
	if err := os.Chdir(Path(dir)); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		return 1
	}
	if setup != nil {
		if err := setup(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	code := m.Run()
	if os.Getenv("DATASF_MCP_TEST_BINARY") == "" {
		if bin, err := built(); err == nil {
			os.RemoveAll(filepath.Dir(bin))
		}
	}
	return code
}

// Need skips the test because what (a program, with its Debian package)
// is missing, err saying why; with CI=true, where .ci/run installs them
// all, it fails the test instead.
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required in CI: %v", what, err)
	}
	t.Skipf("skipping: %s not available (%v)", what, err)
}

// Node returns the node program, and checks that npm ci installed each of
// pkgs in interop/node_modules (make test runs it from
// interop/package-lock.json); else Need.
func Node(t testing.TB, pkgs ...string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		Need(t, "node (Debian package nodejs)", err)
	}
	for _, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join(Path("interop/node_modules"), filepath.FromSlash(pkg))); err != nil {
			Need(t, "interop/node_modules/"+pkg+" (make test runs npm ci in interop/)", err)
		}
	}
	return node
}

// Chromium returns the headless browser the Node scripts drive: $CHROMIUM,
// else /usr/bin/chromium (Debian's); else Need.
func Chromium(t testing.TB) string {
	t.Helper()
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		Need(t, "chromium (Debian package chromium)", err)
	}
	return chromium
}

// HAProxy returns the haproxy program, on PATH or in /usr/sbin, where
// Debian installs it and which a user's PATH may lack; else Need.
func HAProxy(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		bin, err = exec.LookPath("/usr/sbin/haproxy")
	}
	if err != nil {
		Need(t, "haproxy (Debian package haproxy)", err)
	}
	return bin
}
