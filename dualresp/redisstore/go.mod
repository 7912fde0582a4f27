module github.com/datasf-mcp/datasf-mcp/dualresp/redisstore

go 1.26.0

require (
	github.com/datasf-mcp/datasf-mcp/dualresp v0.1.0
	github.com/google/go-cmp v0.7.0
	github.com/redis/go-redis/v9 v9.23.0
)

require (
	github.com/andybalholm/brotli v1.1.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/parquet-go/bitpack v1.0.0 // indirect
	github.com/parquet-go/jsonlite v1.0.0 // indirect
	github.com/parquet-go/parquet-go v0.32.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.21 // indirect
	github.com/richardlehane/mscfb v1.0.7 // indirect
	github.com/richardlehane/msoleps v1.0.6 // indirect
	github.com/tiendc/go-deepcopy v1.7.2 // indirect
	github.com/twpayne/go-geom v1.6.1 // indirect
	github.com/xuri/efp v0.0.1 // indirect
	github.com/xuri/excelize/v2 v2.11.0 // indirect
	github.com/xuri/nfp v0.0.2-0.20250530014748-2ddeb826f9a9 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/crypto v0.53.0 // indirect
	golang.org/x/net v0.56.0 // indirect
	golang.org/x/sync v0.21.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.38.0 // indirect
	google.golang.org/protobuf v1.34.2 // indirect
)

// For development: the core from this checkout (the require names the
// release tag, see the README). A module requiring this one ignores it.
replace github.com/datasf-mcp/datasf-mcp/dualresp => ../
