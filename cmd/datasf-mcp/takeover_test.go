package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

// landing is the landing page of an instance serving store, proving it
// with secret ("" proves nothing: a squatter that shows the store's id).
func landing(store, secret string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := map[string]string{"store": datasf.StoreID(store)}
		if c := r.Header.Get(datasf.StoreChallengeHeader); c != "" && secret != "" {
			info["store_proof"] = datasf.StoreProof(secret, store, c)
		}
		_ = json.NewEncoder(w).Encode(info)
	})
}

// TestStdioRefusesASquatter: a process holding the default REST address
// that shows the store's id on its landing page (which any instance shows
// anyone), or proves with another secret, gets no links; the user's own
// instance, which proves it with the secret in the user's cache directory,
// does. The failure this guards against (issue 55): the store's id alone
// sufficed, so any local user squatting 127.0.0.1:8765 received every link
// of a stdio instance started after it.
func TestStdioRefusesASquatter(t *testing.T) {
	t.Parallel()
	store := "sqlite:" + filepath.Join(t.TempDir(), "results.db")
	const secret = "the-users-store-secret-0123456789abcdef"
	for _, tc := range []struct {
		name   string
		secret string // the holder's
		want   bool
	}{
		{"a squatter showing the store's id", "", false},
		{"a squatter with another secret", "another-secret-0123456789abcdef01234", false},
		{"the user's own instance", secret, true},
	} {
		holder, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: landing(store, tc.secret)}
		go func() { _ = srv.Serve(holder) }()
		if got := servesStore(holder.Addr().String(), store, secret); got != tc.want {
			t.Errorf("%s: servesStore = %v; want %v", tc.name, got, tc.want)
		}
		_ = srv.Close()
	}
}

// TestStdioSharesTheDefaultAddress: a stdio instance that found the
// default REST address taken by an instance serving the same store gives
// links on that address (servesStore), and serves the address itself once
// it is free again (takeOverDefault), so that the links keep working.
func TestStdioSharesTheDefaultAddress(t *testing.T) {
	t.Parallel()
	store := "sqlite:" + filepath.Join(t.TempDir(), "results.db")
	cfg, err := parseConfig([]string{"--offline", "--store", store}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The "default" address of this test: held first by another instance.
	holder, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.RESTAddr = holder.Addr().String()
	const secret = "the-users-store-secret-0123456789abcdef"
	srv := &http.Server{Handler: landing(store, secret)}
	go func() { _ = srv.Serve(holder) }()
	if !servesStore(cfg.RESTAddr, store, secret) {
		t.Fatal("servesStore = false for an instance that proves it serves the same store")
	}
	if servesStore(cfg.RESTAddr, store+"-other", secret) {
		t.Error("servesStore = true for an instance of another store")
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.PublicURL = "http://" + cfg.RESTAddr
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs}, nil))
	svc, err := newService(t.Context(), cfg, ln, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	done := make(chan struct{})
	go func() { defer close(done); takeOverDefault(t.Context(), cfg, ln, svc, log) }()
	t.Cleanup(func() { <-done }) // t.Context() has ended by then
	_ = srv.Close()              // the instance on the default address exits

	for range 200 { // bounded: the takeover tries every 2 seconds
		resp, err := http.Get("http://" + cfg.RESTAddr + "/")
		if err == nil {
			var info struct {
				URL   string `json:"url"`
				Store string `json:"store"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&info)
			resp.Body.Close()
			if info.URL == cfg.PublicURL && info.Store == datasf.StoreID(store) {
				t.Logf("the default address %s was taken over by the instance on %s", cfg.RESTAddr, ln.Addr())
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the default address %s was not taken over after its instance exited", cfg.RESTAddr)
}

// TestCacheDirMadePrivate: stdio's cache directory, found open to other
// users (0777), is made 0700, and the store's secret in it is 0600 and the
// same at the next start. The failure this guards against (issue 55): an
// existing 0777 cache directory was used silently.
func TestCacheDirMadePrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "datasf-mcp")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	if err := privateDir(dir, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("cache directory mode %o after privateDir; want 700", st.Mode().Perm())
	}
	if !strings.Contains(logs.String(), "made it private") {
		t.Errorf("log %q; want it to say the directory was made private", logs.String())
	}
	path := filepath.Join(dir, "store.secret")
	first, err := storeSecret(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := storeSecret(path)
	if err != nil || again != first || len(first) < 32 {
		t.Errorf("storeSecret again = %q, %v; want the first, %q", again, err, first)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("secret file mode %o; want 600", st.Mode().Perm())
	}
}

// lockedWriter is an io.Writer several goroutines may write at once (a
// child process's stderr read while the test runs).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
