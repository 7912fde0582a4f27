package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

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
	landing := func(id string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewEncoder(w).Encode(map[string]string{"store": id})
		})
	}
	srv := &http.Server{Handler: landing(datasf.StoreID(store))}
	go func() { _ = srv.Serve(holder) }()
	if !servesStore(cfg.RESTAddr, store) {
		t.Fatal("servesStore = false for an instance whose landing page names the same store")
	}
	if servesStore(cfg.RESTAddr, store+"-other") {
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
