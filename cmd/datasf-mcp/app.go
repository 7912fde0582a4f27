package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/redisstore"
	"github.com/datasf-mcp/datasf-mcp/dualresp/sqlitestore"
	"github.com/datasf-mcp/datasf-mcp/dualresp/viewer"
	"github.com/datasf-mcp/datasf-mcp/snapshot"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// app is the assembled product: a Socrata client (against the real portal or
// the in-process fake), the result server and the MCP server.
type app struct {
	fake    *socratatest.Server
	store   dualresp.Store
	results *dualresp.Server
	mcp     *datasf.Server
}

func newApp(ctx context.Context, cfg config, publicURL string, log *slog.Logger) (a *app, err error) {
	a = &app{}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	copts := socrata.Options{
		Domain:       cfg.Domain,
		BaseURL:      cfg.BaseURL,
		DiscoveryURL: cfg.DiscoveryURL,
		AppToken:     cfg.AppToken,
		Logger:       log,
	}
	if cfg.Offline {
		if a.fake, err = startOffline(cfg, log); err != nil {
			return a, err
		}
		copts.BaseURL = a.fake.URL()
		copts.DiscoveryURL = a.fake.URL()
	}
	client := socrata.NewClient(copts)

	if a.store, err = openStore(ctx, cfg.Store); err != nil {
		return a, err
	}
	expiration, err := time.ParseDuration(cfg.Expiration)
	if err != nil || expiration <= 0 {
		return a, fmt.Errorf("--expiration must be a positive duration such as 15m; got %q", cfg.Expiration)
	}
	ropts := dualresp.Options{
		BaseURL:           publicURL,
		Store:             a.store,
		Executor:          datasf.NewExecutor(client),
		DefaultExpiration: expiration,
		DefaultSampleSize: cfg.SampleSize,
		Logger:            log,
		CORSOrigins:       splitList(cfg.CORSOrigins),
	}
	if len(cfg.RESTTokens) > 0 {
		ropts.Authenticate = dualresp.BearerTokens(cfg.RESTTokens...)
	}
	a.results, err = dualresp.New(ropts)
	if err != nil {
		return a, err
	}
	a.mcp, err = datasf.NewServer(datasf.Options{
		Client:            client,
		Results:           a.results,
		DefaultSampleSize: cfg.SampleSize,
		Logger:            log,
	})
	return a, err
}

// restHandler serves full results, and the viewer page to browsers.
func (a *app) restHandler() http.Handler {
	return viewer.Wrap("/resources/", a.results.Handler())
}

func (a *app) Close() {
	if a.results != nil {
		_ = a.results.Close()
	}
	if a.store != nil {
		_ = a.store.Close()
	}
	if a.fake != nil {
		a.fake.Close()
	}
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

// openStore opens the result store named by --store.
func openStore(ctx context.Context, spec string) (dualresp.Store, error) {
	switch {
	case spec == "" || spec == "memory":
		return dualresp.NewMemoryStore(dualresp.MemoryStoreOptions{}), nil
	case strings.HasPrefix(spec, "sqlite:"):
		path := strings.TrimPrefix(spec, "sqlite:")
		if path == "" {
			return nil, errors.New("--store sqlite:PATH needs a file path, e.g. sqlite:/var/lib/datasf/results.db")
		}
		return sqlitestore.Open(ctx, path, sqlitestore.Options{})
	case strings.HasPrefix(spec, "redis://"), strings.HasPrefix(spec, "rediss://"):
		return redisstore.New(ctx, redisstore.Options{URL: spec})
	default:
		return nil, fmt.Errorf("--store must be memory, sqlite:PATH or redis://HOST:PORT/DB; got %q", spec)
	}
}

// startOffline starts the in-process fake portal with the built-in snapshot
// (and the files of --data, if given).
func startOffline(cfg config, log *slog.Logger) (*socratatest.Server, error) {
	fake, err := socratatest.New(socratatest.Options{Domain: cfg.Domain, Logger: log})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if cfg.Catalog != "" {
		if err := fake.LoadCatalog(cfg.Catalog); err != nil {
			fake.Close()
			return nil, fmt.Errorf("--catalog %s: %w", cfg.Catalog, err)
		}
	}
	if cfg.DataDir != "" {
		if err := fake.LoadFixturesDir(cfg.DataDir); err != nil {
			fake.Close()
			return nil, fmt.Errorf("--data %s: %w", cfg.DataDir, err)
		}
	}
	// The snapshot fills in what the files did not provide: a dataset loaded
	// from --data replaces the generated one with the same id.
	loaded := map[string]bool{}
	for _, id := range fake.Datasets() {
		loaded[id] = true
	}
	rows := 0
	for _, d := range snapshot.Datasets(snapshot.Options{}) {
		if loaded[d.ID] {
			continue
		}
		schema := socratatest.Schema{ID: d.ID, Name: d.Name, Description: d.Description, Category: d.Category, UpdatedAt: d.UpdatedAt}
		for _, c := range d.Columns {
			schema.Columns = append(schema.Columns, socratatest.Column{Name: c.Name, FieldName: c.FieldName, DataType: c.DataType, Description: c.Description})
		}
		if err := fake.AddGenerated(schema, d.Rows, d.Row); err != nil {
			fake.Close()
			return nil, fmt.Errorf("offline snapshot %s: %w", d.ID, err)
		}
		rows += d.Rows
	}
	if err := fake.Start(); err != nil {
		fake.Close()
		return nil, err
	}
	log.Info("offline portal ready", "datasets", len(fake.Datasets()), "snapshot_rows", rows, "took", time.Since(start).Round(time.Millisecond))
	return fake, nil
}
