package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/dualresp"
)

// run executes the command cfg describes until it ends or ctx is cancelled.
func run(ctx context.Context, cfg config) error {
	log := newLogger(cfg)
	if cfg.Command == "fetch" {
		return runFetch(ctx, cfg, log)
	}
	if cfg.Server != "" {
		// search/schema/query through a running server, whose links stay valid.
		c, err := client.NewStreamableHttpClient(strings.TrimRight(cfg.Server, "/")+"/mcp", transport.WithHTTPHeaders(serverHeaders(cfg)))
		if err != nil {
			return err
		}
		return runSmoke(ctx, cfg, c)
	}

	// The listener comes first: result links need its real address.
	addr := cfg.RESTAddr
	if cfg.Command == "serve" {
		addr = cfg.HTTPAddr
	}
	var ln net.Listener
	if cfg.Command == "" || cfg.Command == "serve" {
		var err error
		ln, err = net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", addr, err)
		}
		defer ln.Close()
		addr = ln.Addr().String()
	}
	publicURL := cfg.PublicURL
	if publicURL == "" {
		publicURL = "http://" + addr
	}

	a, err := newApp(ctx, cfg, publicURL, log)
	if err != nil {
		return err
	}
	defer a.Close()

	switch cfg.Command {
	case "":
		return serveStdio(ctx, cfg, a, ln, log)
	case "serve":
		return serveHTTP(ctx, cfg, a, ln, publicURL, log)
	default:
		c, err := client.NewInProcessClient(a.mcp.MCP())
		if err != nil {
			return err
		}
		return runSmoke(ctx, cfg, c)
	}
}

func newLogger(cfg config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	return slog.New(slog.NewTextHandler(cfg.Stderr, &slog.HandlerOptions{Level: level}))
}

// serveStdio serves MCP on stdin/stdout and full results on ln, until stdin
// ends or ctx is cancelled.
func serveStdio(ctx context.Context, cfg config, a *app, ln net.Listener, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rest := &http.Server{Handler: a.restHandler(), ReadHeaderTimeout: 10 * time.Second}
	restDone := make(chan error, 1)
	go func() { restDone <- rest.Serve(ln) }()
	log.Info("datasf-mcp serving MCP on stdio", "rest", "http://"+ln.Addr().String()+"/resources/", "domain", cfg.Domain, "offline", cfg.Offline)

	stdio := server.NewStdioServer(a.mcp.MCP())
	if len(cfg.RESTTokens) > 0 {
		// The local user owns what it creates: the first REST token reads it.
		owner := dualresp.TokenOwner(cfg.RESTTokens[0])
		stdio.SetContextFunc(func(ctx context.Context) context.Context { return dualresp.WithOwner(ctx, owner) })
	}
	err := stdio.Listen(ctx, cfg.Stdin, cfg.Stdout)
	log.Info("stdio closed; shutting down")
	shutdownCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	_ = rest.Shutdown(shutdownCtx)
	<-restDone
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// serveHTTP serves Streamable HTTP at /mcp and REST at /resources/ on ln.
func serveHTTP(ctx context.Context, cfg config, a *app, ln net.Listener, publicURL string, log *slog.Logger) error {
	handler, streamable := httpHandler(cfg, a, log)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("datasf-mcp serving Streamable HTTP", "mcp", publicURL+"/mcp", "rest", publicURL+"/resources/")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	_ = streamable.Shutdown(shutdownCtx)
	_ = srv.Shutdown(shutdownCtx)
	return nil
}

// httpHandler routes Streamable HTTP MCP at /mcp and REST at /resources/.
// mcp-go's localhost (DNS-rebinding) protection stays on. With REST tokens,
// /mcp requires one too and results belong to the token that created them.
func httpHandler(cfg config, a *app, log *slog.Logger) (http.Handler, *server.StreamableHTTPServer) {
	opts := []server.StreamableHTTPOption{
		server.WithEndpointPath("/mcp"),
		server.WithStreamableHTTPLogger(log),
	}
	var auth func(*http.Request) (string, error)
	if len(cfg.RESTTokens) > 0 {
		auth = dualresp.BearerTokens(cfg.RESTTokens...)
	}
	opts = append(opts, server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		ctx = datasf.FormatFromHeader(ctx, r)
		if auth != nil {
			if owner, err := auth(r); err == nil {
				return dualresp.WithOwner(ctx, owner)
			}
		}
		return ctx
	}))
	streamable := server.NewStreamableHTTPServer(a.mcp.MCP(), opts...)
	var mcpHandler http.Handler = streamable
	if auth != nil {
		mcpHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := auth(r); err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="datasf-mcp"`)
				http.Error(w, `{"error":"unauthorized","message":"send Authorization: Bearer <token>"}`, http.StatusUnauthorized)
				return
			}
			streamable.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpHandler)
	mux.Handle("/resources/", a.restHandler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	return mux, streamable
}

// serverHeaders are the headers of requests to --server: the first REST
// token, when set, identifies the caller.
func serverHeaders(cfg config) map[string]string {
	if len(cfg.RESTTokens) > 0 {
		return map[string]string{"Authorization": "Bearer " + cfg.RESTTokens[0]}
	}
	return nil
}

// runSmoke runs one tool through an in-process MCP client and prints its
// structured result as JSON.
func runSmoke(ctx context.Context, cfg config, c *client.Client) error {
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "datasf-mcp-cli", Version: datasf.Version}
	if _, err := c.Initialize(ctx, init); err != nil {
		return err
	}
	req := mcp.CallToolRequest{}
	switch cfg.Command {
	case "search":
		req.Params.Name = "search_datasf"
		req.Params.Arguments = map[string]any{"query": cfg.Args[0], "limit": 10}
	case "schema":
		req.Params.Name = "get_schema"
		req.Params.Arguments = map[string]any{"dataset_id": cfg.Args[0]}
	case "query":
		req.Params.Name = "query_datasf"
		req.Params.Arguments = map[string]any{"dataset_id": cfg.Args[0], "soql": cfg.Args[1], "sample_size": cfg.SampleSize}
	}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return err
	}
	if res.IsError {
		var texts []string
		for _, c := range res.Content {
			if tc, ok := c.(mcp.TextContent); ok {
				texts = append(texts, tc.Text)
			}
		}
		return fmt.Errorf("%s failed: %s", req.Params.Name, strings.Join(texts, " "))
	}
	enc := json.NewEncoder(cfg.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res.StructuredContent)
}
