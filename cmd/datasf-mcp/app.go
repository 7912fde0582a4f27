package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/socrata"
)

// serviceConfig turns the command line's config into the product's.
func serviceConfig(cfg config, log *slog.Logger) datasf.Config {
	c := datasf.Config{
		Socrata: socrata.Options{
			Domain:       cfg.Domain,
			BaseURL:      cfg.BaseURL,
			DiscoveryURL: cfg.DiscoveryURL,
			AppToken:     cfg.AppToken,
			Timeout:      cfg.UpstreamTimeout,
		},
		Upstream: datasf.UpstreamLimits{MaxConcurrent: cfg.UpstreamConcurrency, Rate: cfg.UpstreamRate,
			MaxWait: cfg.UpstreamWait, Replicas: cfg.Replicas},
		Domains:       splitList(cfg.Domains),
		AppTokens:     cfg.AppTokens,
		PublicURL:     cfg.PublicURL,
		Store:         cfg.Store,
		Expiration:    cfg.Expiration,
		SampleSize:    cfg.SampleSize,
		MaxResources:  cfg.MaxResults,
		RESTTokens:    cfg.RESTTokens,
		MetricsTokens: cfg.MetricsTokens,
		CORSOrigins:   splitList(cfg.CORSOrigins),
		Version:       releaseVersion(),
		Logger:        log,
	}
	// Search ranks by column values too; on the live portal they are kept
	// in the cache directory for a day (offline they come from the local
	// portal each start, and never mix with the live portal's).
	c.SearchValues = true
	if cfg.Offline {
		c.Offline = &datasf.OfflineConfig{Catalog: cfg.Catalog, Data: cfg.Data, Strict: cfg.DataStrict,
			CacheDir: cfg.CacheDir, NoCache: cfg.NoCache}
	} else if !cfg.NoCache {
		c.SearchValuesDir = cfg.CacheDir
	}
	return c
}

// listen opens the listener of the REST API (and of MCP with serve). When
// the stdio REST address is the default one and another instance holds it,
// it listens on a free loopback port instead; an address the user chose
// that is busy is an error.
func listen(cfg config, log *slog.Logger) (net.Listener, error) {
	addr := cfg.RESTAddr
	if cfg.Command == "serve" {
		addr = cfg.HTTPAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	if cfg.Command == "" && !cfg.RESTAddrSet && errors.Is(err, syscall.EADDRINUSE) {
		ln, err2 := net.Listen("tcp", "127.0.0.1:0")
		if err2 == nil {
			log.Info("the default REST address is in use (another datasf-mcp?); using a free port", "busy", addr, "rest", "http://"+ln.Addr().String())
			return ln, nil
		}
	}
	return nil, fmt.Errorf("listen on %s: %w", addr, err)
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// newService assembles the product for cfg; ln may be nil.
func newService(ctx context.Context, cfg config, ln net.Listener, log *slog.Logger) (*datasf.Service, error) {
	c := serviceConfig(cfg, log)
	c.Listener = ln
	c.StreamableHTTP = cfg.Command == "serve"
	if c.Store == "" {
		c.Store = "memory"
		if cfg.Command == "" {
			c.Store, c.PublicURL, c.StoreSecret = stdioStore(cfg, ln, log)
			c.KeepExpired = stdioKeepExpired
			if !cfg.ExpirationSet && strings.HasPrefix(c.Store, "sqlite:") {
				c.Expiration = stdioExpiration
			}
		}
	}
	return datasf.New(ctx, c)
}

// stdioExpiration is how long a stdio result lives unread when
// --expiration is not given: a day, so that a link from this morning's
// conversation still works this afternoon. The file keeps queries, not
// rows, so a day costs little.
const stdioExpiration = 24 * time.Hour

// stdioKeepExpired is how long stdio's default store keeps an expired
// result's record, so that an old link in a chat answers with the query to
// run again.
const stdioKeepExpired = 7 * 24 * time.Hour

// stdioStore is stdio's default store: a SQLite file in the user's cache
// directory, shared by every instance of the user, so that a link given in
// one Claude session still works in the next while any instance serves
// the default REST address. Its secret (in the same directory) keys the
// links, so that the REST API serves the links the user's instances
// handed out and nothing to a process that only knows an id. An instance
// that found that address taken (another one serves it) gives links on
// it all the same: the instance there reads the same file and secret.
// Without a cache directory, links live in memory, as long as the
// process.
func stdioStore(cfg config, ln net.Listener, log *slog.Logger) (store, publicURL, secret string) {
	publicURL = cfg.PublicURL
	dir, err := os.UserCacheDir()
	if err == nil {
		dir = filepath.Join(dir, "datasf-mcp")
		err = privateDir(dir, log)
	}
	if err == nil {
		secret, err = storeSecret(filepath.Join(dir, "store.secret"))
	}
	if err != nil {
		log.Warn("no cache directory for the result store; links end with this process", "error", err.Error())
		// A secret of this process only: its REST API still serves
		// only the links it handed out (see datasf.Config.StoreSecret).
		return "memory", publicURL, rand.Text() + rand.Text()
	}
	store = "sqlite:" + filepath.Join(dir, "results.db")
	if publicURL == "" && ln != nil && !cfg.RESTAddrSet && ln.Addr().String() != cfg.RESTAddr {
		if servesStore(cfg.RESTAddr, store, secret) {
			publicURL = "http://" + cfg.RESTAddr
			log.Info("links name the default REST address: the instance there serves the same result store", "rest", publicURL)
		} else {
			log.Info("the default REST address is held by a process that does not prove it serves this user's result store; links name this instance's own address", "busy", cfg.RESTAddr)
		}
	}
	return store, publicURL, secret
}

// privateDir makes dir, or makes an existing one, readable by its owner
// only (0700): it holds the user's queries and the store's secret. A
// looser directory is tightened, and the log says so.
func privateDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if mode := st.Mode().Perm(); mode&0o077 != 0 && runtime.GOOS != "windows" {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("the cache directory %s is open to other users (mode %o) and cannot be made private: %w", dir, mode, err)
		}
		log.Warn("the cache directory was open to other users; made it private (0700)", "dir", dir, "was", fmt.Sprintf("%o", mode))
	}
	return nil
}

// storeSecret reads the secret of stdio's result store from path, or makes
// one there (0600, in the 0700 cache directory): a process of another
// user cannot read it, so it cannot prove to serve the store (StoreProof).
func storeSecret(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) >= 32 {
		return strings.TrimSpace(string(b)), nil
	}
	secret := rand.Text() + rand.Text()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		// Another instance made it meanwhile (or left it empty): read it
		// again, else replace it.
		if b, rerr := os.ReadFile(path); rerr == nil && len(strings.TrimSpace(string(b))) >= 32 {
			return strings.TrimSpace(string(b)), nil
		}
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	}
	if err != nil {
		return "", fmt.Errorf("the store's secret: %w", err)
	}
	if _, err := f.WriteString(secret + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("the store's secret: %w", err)
	}
	return secret, f.Close()
}

// servesStore reports whether the datasf-mcp at addr serves the result
// store spec: its landing page answers a random challenge with the proof
// (datasf.StoreProof) that only a process knowing the store's secret can
// make. The store's id alone, which the landing page shows anyone, would
// let any local process that took the address first receive every link.
func servesStore(addr, spec, secret string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	if err != nil || secret == "" {
		return false
	}
	challenge := rand.Text()
	req.Header.Set("Accept", "application/json")
	req.Header.Set(datasf.StoreChallengeHeader, challenge)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var landing struct {
		Store string `json:"store"`
		Proof string `json:"store_proof"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&landing) != nil {
		return false
	}
	want := datasf.StoreProof(secret, spec, challenge)
	return landing.Store == datasf.StoreID(spec) && hmac.Equal([]byte(landing.Proof), []byte(want))
}

// takeOverDefault serves the REST API on the default address too once the
// instance there goes away, when this stdio instance gives links on it
// (see stdioStore): links outlive the instance that served them while any
// instance runs. It returns when ctx ends.
func takeOverDefault(ctx context.Context, cfg config, ln net.Listener, svc *datasf.Service, log *slog.Logger) {
	if cfg.Command != "" || ln == nil || ln.Addr().String() == cfg.RESTAddr || svc.URL() != "http://"+cfg.RESTAddr {
		return
	}
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		own, err := net.Listen("tcp", cfg.RESTAddr)
		if err != nil {
			continue
		}
		log.Info("the default REST address is free again; serving the links there too", "rest", svc.URL())
		if err := svc.ServeOn(ctx, own); err != nil {
			log.Warn("serving the default REST address", "error", err.Error())
		}
		return
	}
}
