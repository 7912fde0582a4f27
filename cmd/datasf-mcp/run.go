package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/datasf-mcp/datasf-mcp/datasf"
)

// run executes the command cfg describes until it ends or ctx is cancelled.
func run(ctx context.Context, cfg config) error {
	log := newLogger(cfg)
	switch cfg.Command {
	case "version":
		_, err := fmt.Fprintln(cfg.Stdout, versionString())
		return err
	case "fetch":
		return runFetch(ctx, cfg, log)
	}
	if cfg.Tool != "" && cfg.Server != "" {
		// The tool through a running server, whose links stay valid.
		if len(cfg.RESTTokens) == 0 {
			key, err := userClientKey()
			if err != nil {
				log.Warn("results --server will not list this command's results", "err", err)
			}
			cfg.ClientKey = key
		}
		c, err := client.NewStreamableHttpClient(strings.TrimRight(cfg.Server, "/")+"/mcp", transport.WithHTTPHeaders(serverHeaders(cfg)))
		if err != nil {
			return err
		}
		return offlineHint(cfg, runTool(ctx, cfg, c, nil))
	}

	var ln net.Listener
	if cfg.Command == "" || cfg.Command == "serve" {
		var err error
		if ln, err = listen(cfg, log); err != nil {
			return err
		}
	}
	svc, err := newService(ctx, cfg, ln, log) // closes ln on failure
	if err != nil {
		return err
	}
	defer svc.Close()

	switch cfg.Command {
	case "":
		return svc.ServeStdio(ctx, cfg.Stdin, cfg.Stdout)
	case "serve":
		return svc.Serve(ctx)
	default:
		c, err := client.NewInProcessClient(svc.MCPServer())
		if err != nil {
			return err
		}
		return offlineHint(cfg, runTool(ctx, cfg, c, svc))
	}
}

func newLogger(cfg config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	return slog.New(slog.NewTextHandler(cfg.Stderr, &slog.HandlerOptions{Level: level}))
}

// serverHeaders are the headers of requests to --server: the first REST
// token, when set, identifies the caller; else the user's client key.
func serverHeaders(cfg config) map[string]string {
	switch {
	case len(cfg.RESTTokens) > 0:
		return map[string]string{"Authorization": "Bearer " + cfg.RESTTokens[0]}
	case cfg.ClientKey != "":
		return map[string]string{datasf.ClientKeyHeader: cfg.ClientKey}
	}
	return nil
}

// userClientKey returns the user's key for datasf.ClientKeyHeader, kept in
// the user's cache directory (datasf-mcp/cli-owner, mode 0600) and made on
// first use, so that results --server lists what query --server made from
// the same account.
func userClientKey() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "datasf-mcp", "cli-owner")
	if key, err := readClientKey(path); !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	// Written aside, then linked into place: a concurrent command either
	// links first (and this one reads its key) or reads this one's whole.
	tmp, err := os.CreateTemp(filepath.Dir(path), "cli-owner-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(rand.Text() + "\n")
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", werr
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return "", err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	return readClientKey(path)
}

// readClientKey reads the key file at path.
func readClientKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	key := strings.TrimSpace(string(b))
	if !datasf.ValidClientKey(key) {
		return "", fmt.Errorf("%s does not hold a valid key: delete it and a new one is made", path)
	}
	return key, nil
}

// serverHeader is serverHeaders as an http.Header, for the REST client.
func serverHeader(cfg config) http.Header {
	h := http.Header{}
	for k, v := range serverHeaders(cfg) {
		h.Set(k, v)
	}
	return h
}
