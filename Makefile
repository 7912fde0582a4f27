# Common tasks. `make test` is what CI runs (see .ci/run).
GO ?= go
FUZZTIME ?= 30s

.PHONY: test run vet fuzz bench build

build:
	$(GO) build -o bin/datasf-mcp ./cmd/datasf-mcp

vet:
	$(GO) vet ./...

test: vet
	$(GO) test -race -count=1 ./...

run:
	$(GO) run ./cmd/datasf-mcp --offline

fuzz:
	$(GO) test ./soql -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
