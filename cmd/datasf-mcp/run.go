package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
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
		return runSmoke(ctx, cfg, c)
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
