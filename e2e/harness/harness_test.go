//go:build e2e

package harness

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestRoot: Root is the app module's root, whatever the test binary's
// build flags.
func TestRoot(t *testing.T) {
	gomod, err := os.ReadFile(Path("go.mod"))
	if err != nil {
		t.Fatalf("Root() = %s: %v", Root(), err)
	}
	if first, _, _ := strings.Cut(string(gomod), "\n"); first != "module github.com/datasf-mcp/datasf-mcp" {
		t.Errorf("Root() = %s, whose go.mod starts %q; want the app module's", Root(), first)
	}
	if _, err := os.Stat(Path("e2e/harness/harness.go")); err != nil {
		t.Errorf("Path(e2e/harness/harness.go): %v", err)
	}
}

// TestRootUnderTrimpath runs TestRoot in a test binary built with
// -trimpath, which leaves no source directory in the binary: Root found
// the module from runtime.Caller's file name, which -trimpath makes
// "github.com/datasf-mcp/datasf-mcp/e2e/harness/harness.go", a path
// relative to nowhere.
func TestRootUnderTrimpath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a test binary")
	}
	out, err := exec.Command("go", "test", "-trimpath", "-tags", "e2e", "-count=1", "-run", "^TestRoot$", "-v", ".").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRoot") {
		t.Fatalf("go test -trimpath -tags e2e -run ^TestRoot$ ./e2e/harness: %v\n%s", err, out)
	}
}
