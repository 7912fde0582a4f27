package datasf

import (
	"context"
	"log/slog"

	"github.com/datasf-mcp/datasf-mcp/localportal"
)

// startOffline starts the local portal that Config.Offline describes and
// returns its URL and how to stop it.
func startOffline(ctx context.Context, domain string, cfg OfflineConfig, log *slog.Logger) (url string, closePortal func() error, err error) {
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
		return "", nil, err
	}
	return portal.URL(), func() error { portal.Close(); return nil }, nil
}
