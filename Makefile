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

# Runs every fuzz target of every package for FUZZTIME each. The seed corpora
# (and saved crashers under testdata/fuzz) also run in `make test`.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "fuzz: $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test $$pkg -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME); \
		done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./soql ./fuzzymatch
	$(GO) run ./bench -out docs/benchmarks.md
