package datasf

import (
	"context"
	"log/slog"

	"github.com/datasf-mcp/datasf-mcp/localportal"
)

// startOffline starts the local portal that Config.Offline describes and
// returns its URL, whether it serves a domain, and how to stop it.
func startOffline(ctx context.Context, domain string, cfg OfflineConfig, log *slog.Logger) (url string, served func(string) bool, closePortal func() error, err error) {
	portal, err := localportal.StartOffline(ctx, localportal.OfflineOptions{
		Domain:   domain,
		Catalog:  cfg.Catalog,
		DataDir:  cfg.DataDir,
		Data:     cfg.Data,
		Strict:   cfg.Strict,
		CacheDir: cfg.CacheDir,
		NoCache:  cfg.NoCache,
		Logger:   log,
	})
	if err != nil {
		return "", nil, nil, err
	}
	served = func(d string) bool { _, ok := portal.DomainPortal(d); return ok }
	return portal.URL(), served, func() error { portal.Close(); return nil }, nil
}
