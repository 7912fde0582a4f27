package datasf

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"

	"github.com/datasf-mcp/datasf-mcp/internal/localportal"
)

// startOffline starts the local portal that Config.Offline describes and
// returns its URL, the transport that reaches it, whether it serves a
// domain, whether a dataset of a domain has no data (a catalog entry
// only: Emulator.CatalogOnly), and how to stop it. The portal's loopback listener requires a
// secret of this process's (the transport sends it), so that it is no way
// around the bearer tokens, nor open to other local users or to browsers.
func startOffline(ctx context.Context, domain string, cfg OfflineConfig, log *slog.Logger) (url string, transport http.RoundTripper, served func(string) bool, catalogOnly func(domain, id string) bool, closePortal func() error, err error) {
	catalog := cfg.Catalog
	if catalog == NoCatalog {
		catalog = ""
	}
	portal, err := localportal.StartOffline(ctx, localportal.OfflineOptions{
		Secret:  rand.Text(),
		Domain:  domain,
		Catalog: catalog,
		// No --catalog: DataSF's own, built in (none is "none").
		DataSFCatalog: cfg.Catalog == "",
		DataDir:       cfg.DataDir,
		Data:          cfg.Data,
		Strict:        cfg.Strict,
		CacheDir:      cfg.CacheDir,
		NoCache:       cfg.NoCache,
		Logger:        log,
	})
	if err != nil {
		return "", nil, nil, nil, nil, err
	}
	served = func(d string) bool { _, ok := portal.DomainPortal(d); return ok }
	return portal.URL(), portal.Client().Transport, served, portal.CatalogOnly, func() error { portal.Close(); return nil }, nil
}
