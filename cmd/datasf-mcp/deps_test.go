package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The binary links no test code: package testing is not among its
// dependencies (a library that imports it outside its tests, as one
// stemmer did, is caught here).
func TestNoTestingInDeps(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("skipping: no go command: %v", err)
	}
	out, err := exec.CommandContext(t.Context(), goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, bad := range []string{"testing", "github.com/datasf-mcp/datasf-mcp/internal/rank/ranktest"} {
		if slices.Contains(deps, bad) {
			t.Errorf("go list -deps ./cmd/datasf-mcp contains %s; want no test code in the binary", bad)
		}
	}
}
