package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"syscall"

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
			MaxWait: cfg.UpstreamWait},
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
	if cfg.Offline {
		c.Offline = &datasf.OfflineConfig{Catalog: cfg.Catalog, Data: cfg.Data, Strict: cfg.DataStrict,
			CacheDir: cfg.CacheDir, NoCache: cfg.NoCache}
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
	return datasf.New(ctx, c)
}
