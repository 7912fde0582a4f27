//go:build e2e

package binary

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// runAs runs the binary as a user whose cache directory is cache.
func runAs(t *testing.T, cache string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runEnv(t, []string{"XDG_CACHE_HOME=" + cache}, args...)
}

// TestResultsThroughServerListsTheCLIsQueries: results --server lists the
// results that query --server made from the same user account (a key kept
// in the user's cache directory, 0600), and not another user's.
func TestResultsThroughServerListsTheCLIsQueries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	inst := startInstance(t)
	alice, bob := t.TempDir(), t.TempDir()

	out, stderr, err := runAs(t, alice, "query", "rqzj-sfat", "SELECT applicant, status", "--server", inst.base, "--sample-size", "2")
	if err != nil {
		t.Fatalf("query --server: %v\n%s", err, stderr)
	}
	var q struct {
		Resource struct{ URI string } `json:"resource"`
	}
	if err := json.Unmarshal([]byte(out), &q); err != nil || q.Resource.URI == "" {
		t.Fatalf("query --server printed %s (%v)", out, err)
	}
	keyFile := filepath.Join(alice, "datasf-mcp", "cli-owner")
	if fi, err := os.Stat(keyFile); err != nil {
		t.Errorf("query --server kept no key: %v", err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v; want 0600", keyFile, fi.Mode().Perm())
	}

	type listing struct {
		Count   int `json:"count"`
		Results []struct {
			URI string `json:"uri"`
		} `json:"results"`
	}
	list := func(cache string) listing {
		t.Helper()
		out, stderr, err := runAs(t, cache, "results", "--server", inst.base)
		if err != nil {
			t.Fatalf("results --server: %v\n%s", err, stderr)
		}
		var l listing
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatalf("results --server printed %s (%v)", out, err)
		}
		return l
	}
	if got := list(alice); got.Count != 1 || len(got.Results) != 1 || got.Results[0].URI != q.Resource.URI {
		t.Errorf("results --server = %+v; want the one result query --server made, %s", got, q.Resource.URI)
	}
	if got := list(bob); got.Count != 0 {
		t.Errorf("another user's results --server = %+v; want none", got)
	}
}
