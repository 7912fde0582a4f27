//go:build e2e

package binary

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/sqlitestore"
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

// TestOwnerHashesKeyedBinary: a server with bearer tokens keeps each
// result's owner as an HMAC of the token under a key kept beside the
// SQLite store (PATH.owner-key, 0600), never the token's plain SHA-256;
// and a result that an earlier version stored under the plain hash is
// still served to its token, and not to another. The failure this guards
// against (issue 55): the store kept the unsalted SHA-256 of each token,
// so whoever read the file could check guessed tokens against it.
func TestOwnerHashesKeyedBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "results.db")
	const tokenA, tokenB = "token-a-0123456789", "token-b-0123456789"
	env := []string{"DATASF_REST_TOKEN=" + tokenA + "," + tokenB}
	as := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	owners := func(ids ...string) map[string]string { // id: owner, as the file has them
		t.Helper()
		st, err := sqlitestore.Open(t.Context(), path, sqlitestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		m := map[string]string{}
		for _, id := range ids {
			r, err := st.Get(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			m[id] = r.Owner
		}
		return m
	}

	// An earlier version's result: stored by A under A's plain hash, in a
	// store without a key file.
	first := startInstanceEnv(t, env, "--store", "sqlite:"+path)
	a := newRawClient(t, first.base, "127.0.0.1")
	if r := a.initialize(as(tokenA)); r.status != http.StatusOK {
		t.Fatalf("initialize = %d %s", r.status, r.body)
	}
	old := storeQuery(t, a, as(tokenA), 1)
	first.kill()
	oldID := old[strings.LastIndex(old, "/")+1:]
	st, err := sqlitestore.Open(t.Context(), path, sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.Get(t.Context(), oldID)
	if err != nil {
		t.Fatal(err)
	}
	rec.Owner = dualresp.TokenOwner(tokenA)
	if err := st.Save(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_ = os.Remove(path + ".owner-key")

	inst := startInstanceEnv(t, env, "--store", "sqlite:"+path)
	hc := &http.Client{Timeout: 30 * time.Second}
	link := inst.base + old[strings.Index(old, "/resources/"):]
	get := func(token, url string) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get(tokenA, link+"?offset=0&limit=5"); got != http.StatusOK {
		t.Errorf("GET of the earlier version's result with its token = %d; want 200", got)
	}
	if got := get(tokenB, link); got != http.StatusNotFound {
		t.Errorf("GET of A's earlier result with B's token = %d; want 404", got)
	}
	c := newRawClient(t, inst.base, "127.0.0.1")
	if r := c.initialize(as(tokenB)); r.status != http.StatusOK {
		t.Fatalf("initialize = %d %s", r.status, r.body)
	}
	fresh := storeQuery(t, c, as(tokenB), 2)
	freshID := fresh[strings.LastIndex(fresh, "/")+1:]
	if got := get(tokenA, fresh); got != http.StatusNotFound {
		t.Errorf("GET of B's new result with A's token = %d; want 404", got)
	}

	keyFile := path + ".owner-key"
	if fi, err := os.Stat(keyFile); err != nil {
		t.Errorf("no owner key beside the store: %v", err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v; want 0600", keyFile, fi.Mode().Perm())
	}
	key, _ := os.ReadFile(keyFile)
	key = []byte(strings.TrimSpace(string(key)))
	got := owners(oldID, freshID)
	for id, want := range map[string]string{oldID: dualresp.KeyedTokenOwner(key, tokenA), freshID: dualresp.KeyedTokenOwner(key, tokenB)} {
		if got[id] != want {
			t.Errorf("owner of %s in the file = %q; want %q (the keyed hash)", id, got[id], want)
		}
	}
	for id, owner := range got {
		if owner == dualresp.TokenOwner(tokenA) || owner == dualresp.TokenOwner(tokenB) {
			t.Errorf("the file still holds a token's plain SHA-256 as the owner of %s: %s", id, owner)
		}
	}
	t.Logf("owners in the file: %v (plain hashes were A %s, B %s)", got, dualresp.TokenOwner(tokenA), dualresp.TokenOwner(tokenB))
}
