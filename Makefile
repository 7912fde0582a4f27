# Common tasks. `make test` is what CI runs (see .ci/run).
GO ?= go
FUZZTIME ?= 30s

.PHONY: test run vet fuzz bench build lint

build:
	$(GO) build -o bin/datasf-mcp ./cmd/datasf-mcp

vet:
	$(GO) vet ./...

test: vet
	$(GO) test -race -count=1 ./...

# gofmt, go vet and staticcheck (pinned).
lint: vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

run:
	$(GO) run ./cmd/datasf-mcp --offline

# Runs every fuzz target of every package for FUZZTIME each. The seed corpora
# (and saved crashers under testdata/fuzz) also run in `make test`.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "fuzz: $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test $$pkg -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME); \
		done; \
	done

# The side-by-side benchmark driver (prints the table and writes
# docs/benchmarks.md; BENCHFLAGS e.g. "-runs 3" or "-quick"), then the Go
# benchmarks of the packages.
BENCHFLAGS ?=
bench:
	$(GO) run ./bench $(BENCHFLAGS)
	$(GO) test -run '^$$' -bench . -benchmem ./fuzzymatch ./soql
