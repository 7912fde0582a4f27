module github.com/datasf-mcp/datasf-mcp/examples/dualresp-minimal

go 1.25.5

require (
	github.com/datasf-mcp/datasf-mcp/dualresp v0.1.0
	github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo v0.1.0
	github.com/mark3labs/mcp-go v1.2.1
)

require (
	github.com/andybalholm/brotli v1.1.1 // indirect
	github.com/google/jsonschema-go v0.4.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/parquet-go/bitpack v1.0.0 // indirect
	github.com/parquet-go/jsonlite v1.0.0 // indirect
	github.com/parquet-go/parquet-go v0.32.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.21 // indirect
	github.com/richardlehane/mscfb v1.0.7 // indirect
	github.com/richardlehane/msoleps v1.0.6 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	github.com/spf13/cast v1.7.1 // indirect
	github.com/tiendc/go-deepcopy v1.7.2 // indirect
	github.com/twpayne/go-geom v1.6.1 // indirect
	github.com/xuri/efp v0.0.1 // indirect
	github.com/xuri/excelize/v2 v2.11.0 // indirect
	github.com/xuri/nfp v0.0.2-0.20250530014748-2ddeb826f9a9 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/crypto v0.53.0 // indirect
	golang.org/x/net v0.56.0 // indirect
	golang.org/x/sync v0.21.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
	golang.org/x/text v0.38.0 // indirect
	google.golang.org/protobuf v1.34.2 // indirect
)

// The library from this checkout. A program of your own drops these and
// requires tagged versions of the two modules.
replace (
	github.com/datasf-mcp/datasf-mcp/dualresp => ../../dualresp
	github.com/datasf-mcp/datasf-mcp/dualresp/mcpgo => ../../dualresp/mcpgo
)
