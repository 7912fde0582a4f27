package datasf_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"slices"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/datasf-mcp/datasf-mcp/datasf"
	"github.com/datasf-mcp/datasf-mcp/dualresp"
	"github.com/datasf-mcp/datasf-mcp/socrata"
	"github.com/datasf-mcp/datasf-mcp/socrata/socratatest"
)

// Example assembles the product with datasf.New over a fake Socrata portal
// (package socratatest) holding one generated dataset, serves its REST API
// on a loopback listener, then lists the tools and runs a query through an
// in-process MCP client.
func Example() {
	ctx := context.Background()

	// A fake portal with one generated dataset of 90 rows.
	portal, err := socratatest.Start(socratatest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer portal.Close()
	schema := socratatest.Schema{
		ID: "abcd-1234", Name: "Trees", Category: "Environment",
		Columns: []socratatest.Column{
			{Name: "Species", FieldName: "species", DataType: "text"},
			{Name: "Height", FieldName: "height", DataType: "number"},
		},
	}
	species := []string{"oak", "pine", "elm"}
	if err := portal.AddGenerated(ctx, schema, 90, func(i int) map[string]any {
		return map[string]any{"species": species[i%3], "height": i}
	}); err != nil {
		log.Fatal(err)
	}

	// The product: its REST API on a loopback listener, result links on
	// that listener's address.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	svc, err := datasf.New(ctx, datasf.Config{
		Socrata:  socrata.Options{BaseURL: portal.URL(), DiscoveryURL: portal.URL()},
		Listener: ln,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = svc.Serve(serveCtx) }()

	// An MCP client session.
	c, err := client.NewInProcessClient(svc.MCPServer())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		log.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "example", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		log.Fatal(err)
	}

	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		log.Fatal(err)
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	fmt.Println(names)

	req := mcp.CallToolRequest{}
	req.Params.Name = "query_datasf"
	req.Params.Arguments = map[string]any{
		"dataset_id": "abcd-1234",
		"soql":       "SELECT species, count(*) AS n WHERE height >= 30 GROUP BY species",
	}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	parsed := dualresp.Parse(res)
	if parsed == nil {
		log.Fatalf("not a dual response: %+v", res)
	}
	fmt.Println("total_count:", parsed.TotalCount)
	for _, row := range parsed.Sample {
		fmt.Println(string(row))
	}
	// Output:
	// [analyze_results get_schema list_datasf list_results query_datasf search_datasf]
	// total_count: 3
	// {"n":"20","species":"elm"}
	// {"n":"20","species":"oak"}
	// {"n":"20","species":"pine"}
}
