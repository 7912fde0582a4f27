// Package datasftest assembles the whole product for tests, in the mould of
// mcptest: a fake Socrata portal (package socratatest) loaded with the shared
// real-data fixtures, the product built by datasf.New with its REST API on a
// loopback listener, and an initialised in-process MCP client session.
//
//	env := datasftest.New(t, datasftest.Options{})
//	res, err := env.Call(t.Context(), "query_datasf", map[string]any{
//		"dataset_id": "rqzj-sfat", "soql": "SELECT applicant"})
//
// Everything New starts is stopped through t.Cleanup. Start and Close do the
// same without a testing.TB, for a harness shared by a whole test binary.
package datasftest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/internal/fixtures/fixtureportal"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// Options configures an Env. The zero value is the product with its
// defaults over the repository's fixtures (testdata/).
type Options struct {
	// PortalURL is the Socrata portal the product talks to (for example a
	// socratatest server, or a proxy in front of one). Default (New only):
	// a socratatest server of the test's own over the repository's
	// fixtures (fixtureportal.New).
	PortalURL string
	// Config is the product's configuration. Socrata.BaseURL and
	// DiscoveryURL default to PortalURL and Listener is set by the Env; a
	// zero CleanupInterval becomes -1 (no cleanup loop); MCPOptions always
	// include output schema validation, so structured content that does not
	// match a tool's outputSchema fails the call.
	// Config.Upstream left zero means no politeness limits on the fake
	// portal (see Start).
	Config datasf.Config
	// ClientName is the MCP client's name in initialize. Default
	// "datasftest".
	ClientName string
	// Capabilities are the MCP client's capabilities in initialize, for
	// example the MCP Apps extension (datasf.AppExtension). Default: none.
	Capabilities mcp.ClientCapabilities
}

// Env is the product assembled for a test.
type Env struct {
	// Portal is the fake portal New started, or nil when Options.PortalURL
	// was given.
	Portal *socratatest.Server
	// Service is the product.
	Service *datasf.Service
	// MCP is an initialised in-process MCP client session.
	MCP *client.Client
	// Init is the server's answer to initialize.
	Init *mcp.InitializeResult

	stop   context.CancelFunc
	served chan error
}

// New starts an Env for the test and stops it when the test ends. Without
// Options.PortalURL it starts a fake portal over the repository's fixtures
// (fixtureportal.New), failing the test when they do not load.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	var portal *socratatest.Server
	if opts.PortalURL == "" {
		portal = fixtureportal.New(t)
		opts.PortalURL = portal.URL()
	}
	env, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("datasftest: %v", err)
	}
	env.Portal = portal
	t.Cleanup(func() { _ = env.Close() })
	return env
}

// Start starts an Env over opts.PortalURL (required). Close stops it.
func Start(ctx context.Context, opts Options) (env *Env, err error) {
	cfg := opts.Config
	if opts.PortalURL == "" && cfg.Socrata.BaseURL == "" {
		return nil, errors.New("datasftest.Start needs Options.PortalURL")
	}
	if cfg.Socrata.BaseURL == "" {
		cfg.Socrata.BaseURL = opts.PortalURL
	}
	if cfg.Socrata.DiscoveryURL == "" {
		cfg.Socrata.DiscoveryURL = cfg.Socrata.BaseURL
	}
	if cfg.CleanupInterval == 0 {
		cfg.CleanupInterval = -1
	}
	// The fake portal is the test's own: it is not rate-limited unless the
	// test sets Upstream (a test of the limits does). The politeness
	// defaults are for real portals, and at 5 requests a second they would
	// make the test wait, not the server work.
	if cfg.Upstream == (datasf.UpstreamLimits{}) {
		cfg.Upstream = datasf.UpstreamLimits{MaxConcurrent: -1, Rate: -1}
	}
	cfg.MCPOptions = append([]server.ServerOption{server.WithOutputSchemaValidation()}, cfg.MCPOptions...)
	if cfg.Listener == nil {
		if cfg.Listener, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, err
		}
	}
	env = &Env{served: make(chan error, 1)}
	defer func() {
		if err != nil {
			_ = env.Close()
			env = nil
		}
	}()
	if env.Service, err = datasf.New(ctx, cfg); err != nil {
		_ = cfg.Listener.Close()
		return env, err
	}
	serveCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	env.stop = stop
	go func() { env.served <- env.Service.Serve(serveCtx) }()

	if env.MCP, err = client.NewInProcessClient(env.Service.MCPServer()); err != nil {
		return env, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := env.MCP.Start(ctx); err != nil {
		return env, err
	}
	name := opts.ClientName
	if name == "" {
		name = "datasftest"
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	init.Params.Capabilities = opts.Capabilities
	if env.Init, err = env.MCP.Initialize(ctx, init); err != nil {
		return env, fmt.Errorf("initialize: %w", err)
	}
	return env, nil
}

// RESTURL returns the base URL of the REST API, e.g. "http://127.0.0.1:41234".
func (e *Env) RESTURL() string { return e.Service.URL() }

// Call runs a tool through the MCP session, within 60 seconds.
func (e *Env) Call(ctx context.Context, tool string, args any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	return e.MCP.CallTool(ctx, req)
}

// Close stops the MCP session, the REST API and the product.
func (e *Env) Close() error {
	var errs []error
	if e.MCP != nil {
		errs = append(errs, e.MCP.Close())
		e.MCP = nil
	}
	if e.stop != nil {
		e.stop()
		errs = append(errs, <-e.served)
		e.stop = nil
	}
	if e.Service != nil {
		errs = append(errs, e.Service.Close())
		e.Service = nil
	}
	return errors.Join(errs...)
}
