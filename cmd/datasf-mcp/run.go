package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/internal/mcphttp"
)

// run runs the command of the table cfg names until it ends or ctx is
// cancelled.
func run(ctx context.Context, cfg config) error {
	for _, c := range commands {
		switch {
		case c.name != cfg.Command:
		case c.tool != "":
			return runToolCommand(ctx, cfg, newLogger(cfg))
		case c.run != nil:
			return c.run(ctx, cfg, newLogger(cfg))
		}
	}
	return fmt.Errorf("no command %q to run", cfg.Command)
}

// serving is the run of a command that keeps serving: it listens on the
// address of stdio's REST API or of serve, starts the product on it and
// serves with serve until ctx is cancelled.
func serving(serve func(ctx context.Context, cfg config, svc *datasf.Service) error) func(context.Context, config, *slog.Logger) error {
	return func(ctx context.Context, cfg config, log *slog.Logger) error {
		ln, err := listen(cfg, log)
		if err != nil {
			return err
		}
		svc, err := newService(ctx, cfg, ln, log) // closes ln on failure
		if err != nil {
			return err
		}
		defer svc.Close()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go takeOverDefault(ctx, cfg, ln, svc, log)
		return serve(ctx, cfg, svc)
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
		return map[string]string{mcphttp.ClientKeyHeader: cfg.ClientKey}
	}
	return nil
}

// userClientKey returns the user's key for mcphttp.ClientKeyHeader, kept in
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
	if !mcphttp.ValidClientKey(key) {
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
