// Command dualresp-minimal is the smallest MCP server that answers with
// dual responses: an mcp-go server over stdio whose tool "squares"
// returns a sample of the rows n², the exact total and a link to the
// whole result, which the dualresp REST handler serves over HTTP on
// loopback. The results live in dualresp's memory store (the default).
//
// It is a module of its own, requiring only dualresp and its mcp-go
// adapter (dualresp/mcpgo): what a user of the library pulls.
//
//	go run . -addr 127.0.0.1:8765
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo"
)

// maxRows bounds the rows one call may ask for.
const maxRows = 1_000_000

// squares is a dualresp Executor whose query "n" is the rows
// {"i": i, "square": i*i} for i in [0, n).
type squares struct{}

func (squares) Prepare(_ context.Context, q dualresp.Query) (dualresp.Plan, error) {
	n, err := strconv.ParseInt(q.Params["n"], 10, 64)
	if err != nil || n < 0 || n > maxRows {
		return nil, fmt.Errorf("n is %q; give a whole number from 0 to %d", q.Params["n"], maxRows)
	}
	return squarePlan(n), nil
}

// squarePlan is the prepared query of n rows.
type squarePlan int64

func (p squarePlan) Count(context.Context) (int64, error) { return int64(p), nil }

func (p squarePlan) Page(_ context.Context, req dualresp.PageRequest) (dualresp.PageResult, error) {
	var res dualresp.PageResult
	for i := req.Offset; i < min(req.Offset+req.Limit, int64(p)); i++ {
		res.Rows = append(res.Rows, json.RawMessage(fmt.Sprintf(`{"i":%d,"square":%d}`, i, i*i)))
	}
	return res, nil
}

// newMCPServer returns the MCP server whose tool answers from results.
func newMCPServer(results *dualresp.Server) *server.MCPServer {
	s := server.NewMCPServer("dualresp-minimal", "1.0")
	tool := mcp.NewTool("squares",
		mcp.WithDescription("The squares of 0 to n-1: a sample, the exact total and a link to every row."),
		mcp.WithNumber("n", mcp.Required(), mcp.Description(fmt.Sprintf("How many rows, 0 to %d.", maxRows))),
		mcp.WithRawOutputSchema(dualresp.OutputSchema))
	s.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n, err := req.RequireInt("n")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		resp, err := results.CreateResponse(ctx, dualresp.Spec{
			Name:       fmt.Sprintf("Squares of 0 to %d", n-1),
			Query:      dualresp.Query{Kind: "squares", Params: map[string]string{"n": strconv.Itoa(n)}},
			Columns:    []dualresp.Column{{Name: "i", Type: "number"}, {Name: "square", Type: "number"}},
			SampleSize: 5,
		})
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcpgo.CallToolResult(resp), nil
	})
	return s
}

// newResults returns the dualresp Server whose links point at baseURL
// (where its Handler is served), keeping results in memory.
func newResults(baseURL string) (*dualresp.Server, error) {
	return dualresp.New(dualresp.Options{
		BaseURL:   baseURL,
		Executors: map[string]dualresp.Executor{"squares": squares{}},
	})
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8765", "where the REST API of the results listens")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *addr); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (give another -addr)", addr, err)
	}
	results, err := newResults("http://" + ln.Addr().String())
	if err != nil {
		return err
	}
	defer results.Close()
	httpServer := &http.Server{Handler: results.Handler()}
	go func() {
		if err := httpServer.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Print(err)
		}
	}()
	defer httpServer.Close()
	stdio := server.NewStdioServer(newMCPServer(results))
	return stdio.Listen(ctx, os.Stdin, os.Stdout)
}
