package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
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
// token, when set, identifies the caller.
func serverHeaders(cfg config) map[string]string {
	if len(cfg.RESTTokens) > 0 {
		return map[string]string{"Authorization": "Bearer " + cfg.RESTTokens[0]}
	}
	return nil
}

// serverHeader is serverHeaders as an http.Header, for the REST client.
func serverHeader(cfg config) http.Header {
	h := http.Header{}
	for k, v := range serverHeaders(cfg) {
		h.Set(k, v)
	}
	return h
}
