# Common tasks. `make test` is what CI runs (see .ci/run).
GO ?= go
FUZZTIME ?= 30s

.PHONY: test test-deps race-gcflags-check modules smoke run vet fuzz bench build lint release bundle registry

# The repository holds several modules (go.work): the app, dualresp and
# its stores and adapters (dualresp/{mcpgo,gosdk,sqlitestore,redisstore})
# and examples/dualresp-minimal. A relative pattern stops at a module's
# edge (./... at the root is the app alone, with or without go.work); the
# import-path pattern below is every package of every module of go.work.
ALL = github.com/datasf-mcp/datasf-mcp/...

build:
	$(GO) build -o bin/datasf-mcp ./cmd/datasf-mcp

vet:
	$(GO) vet $(ALL)

# Each module of go.work builds alone (GOWORK=off: a clone without go.work,
# or a user of one module), with its go.mod and go.sum tidy.
modules:
	@set -e; for dir in $$($(GO) list -m -f '{{.Dir}}'); do \
		rel=$${dir#$(CURDIR)}; rel=$${rel#/}; \
		echo "modules: $${rel:-.} alone (GOWORK=off): go build, go mod tidy -diff"; \
		(cd "$$dir" && GOWORK=off $(GO) build -o /dev/null ./... && GOWORK=off $(GO) mod tidy -diff); \
	done

# `make test` sets up what the tests need, then runs every test with the race
# detector through cmd/testreport: go test's usual output, then a
# summary of what was skipped and why, and the slowest packages; its exit
# code is go test's. A test needing an absent program (Chromium, redis-server,
# Node) skips with one line naming the Debian package; with CI=true (.ci/run)
# a skip fails the run instead.
#
# Some tests run in a second go test without the race detector, which
# slows that code tenfold and has nothing to watch there, at the same time
# as the race run (testreport runs both at once):
#   - the scale and timing tests: a million rows, or 200,000 paged by the
#     client, through the fake portal's SQLite (modernc's C translated to
#     Go) or the result handler; the benchmark driver's quick run;
#   - the exports that must finish past the upstream timeout (a stalled,
#     a slow and 8 slow readers, in process and through the built binary):
#     waits on timeouts and paced readers, and exports of several MB each
#     that the race detector turns into minutes of CPU (concurrent
#     exports stay under -race in TestExportLastingFailureIsMarked and
#     dualresp's tests);
#   - the load tests of the built binary (itself built without the race
#     detector), whose memory bounds are the product's: 8 exports, 6
#     analyses at once, 4 amplifying analyses and 16 deep queries at once;
#     and its attacks of thousands of calls (pins, results and spills
#     under new client keys or another token; get_schema on 5,000 portals
#     in process), where the race detector would slow the client only;
#     and the bounds on what one query makes the offline portal build and
#     keep doing (long values, a core busy after the answer: issue 55),
#     with the portal's own value, row, page and LIKE bounds in process,
#     and 40 slow Parquet readers of the 250,000-row export at once;
#   - the analysis engine's disk and memory caps, a runaway SQLite query
#     each, measured as the product runs;
#   - the figure and property tests that call one pure function in one
#     goroutine: the column-name rewrite figures over the corpora, the
#     search index's memory for 10,000 datasets (rank has no goroutines;
#     12.3 s under -race, 2.8 s without), and the byte budget's properties
#     (dualresp's, and properties_test's payload and rendering ones, which
#     CI runs again with 1000 checks);
#   - the app-token property that the portal accepts the session's token
#     on every request: 100 whole products, each built for a check of
#     values, one call at a time (under -race 56.99 s alone and 149.9 s
#     among the other tests, without it 23.4 s among them; its sibling with
#     the token refused, TestAppTokenNeverShownWhenRejected, runs under
#     -race).
# Every other test runs with -race, concurrency tests of all of these included.
NORACE_TESTS = ^(TestPagingMillionRows|TestExportMillionRowsConstantMemory|TestScaleMillionRowCSV|TestPagingGenerated|TestQuickRun|TestExportsFinish|TestExportsFinishBinary|TestAnalysesBoundedBinary|TestTempFilesBounded|TestQueryMemoryIsBounded|TestRewriteFigures|TestInventedNamesNeverRewrittenWrongly|TestTypoBenchmark|TestByteBudgetProperty|TestFastPayloadWithinBudget|TestFastPayloadWithinBudgetEscapedNames|TestFastParseRoundTrip|TestReplicasBehindHAProxy|TestStdioLinksOutliveTheProcess|TestAmplifyingAnalysesBinary|TestDeepNestingBinary|TestPinsUnderMintedKeysBinary|TestVictimResultsSurviveMintedKeysBinary|TestSpillsApartBinary|TestMetricsPortalsBounded|TestAppTokenOnEveryRequest|TestIndexMemory10000|TestLongValuesBinary|TestWorkStopsWithRequestBinary|TestValueBounds|TestPageBound|TestSlowParquetReadersBinary)$$
#
# The race run does not instrument SQLite (RACE_GCFLAGS): modernc.org/sqlite/lib,
# SQLite's C translated to Go, inside the fake portal. The race detector
# watching its every memory access made the fake three times slower
# (internal/localportal's tests: 93.9 s under -race, 34.4 s with this), and
# watched nothing of ours. SQLite locks through libc's pthread mutexes,
# which are sync.Mutex inside modernc.org/libc (instrumented), so the
# race detector still sees its locking; the atomics libc inlines into it
# go unseen, but they act on libc's heap, mmapped outside Go's. Every
# package of this module stays instrumented, localportal's code round
# SQLite included: a race in a Go function SQLite calls is still reported.
#
# Only that package: the linker keeps one copy of a generic function
# instantiated in several packages, so an uninstrumented copy of std code
# would hide synchronisation everywhere. modernc.org/libc and the sqlite
# driver instantiate sync.Map and atomic.Pointer, and leaving them
# uninstrumented made the race detector report races in encoding/json's
# cache. race-gcflags-check fails when the uninstrumented package defines
# any function but its own and type equality. RACE_UNINSTRUMENTED is one
# package (the check and the pattern take one).
RACE_UNINSTRUMENTED = modernc.org/sqlite/lib
RACE_GCFLAGS = $(RACE_UNINSTRUMENTED)=-race=false
#
# go test runs packages in the order given (two at a time): each run names
# its longest packages first, so that none of them starts last and runs
# alone at the end while the other core idles.
NORACE_PKGS = ./cmd/datasf-mcp ./bench ./fuzzymatch ./datasf ./properties_test ./dualresp ./internal/localportal ./socrata ./internal/analyze ./internal/rank
RACE_FIRST = ./datasf ./properties_test ./cmd/datasf-mcp ./reliability ./internal/localportal ./dualresp ./socrata ./interop ./internal/analyze
#
# The tests that run the datasf-mcp binary (cmd/datasf-mcp's, in both
# runs, and interop's) run one, built here (DATASF_MCP_TEST_BINARY), and
# cmd/datasf-mcp's two runs share one offline cache (DATASF_MCP_TEST_CACHE):
# the binary is linked, and the offline portal's 250,000-row wg3w-h783
# built, once.
#
# A binary built with -race sleeps a second at exit by default, for
# races in goroutines still running then (GORACE atexit_sleep_ms); each
# of about 40 test binaries would hold a slot of go test's for that
# second. The tests stop what they start, so the race run sets it to 0
# (a GORACE of the caller's, given after it, still wins).
test: vet modules test-deps race-gcflags-check
	shared=$$(mktemp -d) && trap 'rm -rf "$$shared"' EXIT && \
	$(GO) build -o "$$shared/datasf-mcp" ./cmd/datasf-mcp && \
	GORACE="atexit_sleep_ms=0 $$GORACE" \
	DATASF_MCP_TEST_BINARY="$$shared/datasf-mcp" DATASF_MCP_TEST_CACHE="$$shared/offline" \
	$(GO) run ./cmd/testreport -race -gcflags='$(RACE_GCFLAGS)' -count=1 -skip '$(NORACE_TESTS)' $(RACE_FIRST) $(ALL) \
		-- -count=1 -run '$(NORACE_TESTS)' $(NORACE_PKGS)

# The uninstrumented package of the race run (RACE_GCFLAGS) may define no
# function another package could share but type equality: that of its C
# structs and of a few unnamed arrays ([N]interface{}, [10]float64,
# [8]float32), which the linker may take for == on those types anywhere;
# it reads memory and synchronises nothing, so at worst a race in such a
# comparison goes unseen.
# It fails too when go tool nm lists none of the package's own functions
# (a failed or unreadable listing would otherwise pass).
race-gcflags-check:
	@archive=$$($(GO) list -race -gcflags='$(RACE_GCFLAGS)' -export -f '{{.Export}}' $(RACE_UNINSTRUMENTED)) && \
	symbols=$$($(GO) tool nm "$$archive") && \
	if ! printf '%s\n' "$$symbols" | sed 's/^.*):\t//' | awk -v pkg='$(RACE_UNINSTRUMENTED).' '$$2 == "T" && index($$3, pkg) == 1 { found = 1 } END { exit !found }'; then \
		echo "race-gcflags-check: go tool nm lists no function of $(RACE_UNINSTRUMENTED) in $$archive"; exit 1; \
	fi && \
	shared=$$(printf '%s\n' "$$symbols" | sed 's/^.*):\t//' | awk -v pkg='$(RACE_UNINSTRUMENTED).' '$$2 == "T" && index($$3, pkg) != 1 && $$3 !~ /^type:\.eq\./') && \
	if [ -n "$$shared" ]; then \
		echo "race-gcflags-check: $(RACE_UNINSTRUMENTED), compiled without the race detector, defines functions"; \
		echo "other packages may share; instrument it again (RACE_UNINSTRUMENTED in the Makefile):"; \
		echo "$$shared" | head -20; exit 1; \
	fi

# The pinned npm packages of interop/ (npm ci from interop/package-lock.json),
# installed when npm is there and the lock file is newer than the install.
test-deps:
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "test-deps: npm not found (Debian package npm): the Node tests will skip"; \
		[ "$$CI" != true ] || exit 1; \
	elif [ ! -f interop/node_modules/.package-lock.json ] || [ interop/package-lock.json -nt interop/node_modules/.package-lock.json ]; then \
		echo "test-deps: npm ci in interop/ (interop/package-lock.json)"; \
		(cd interop && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) || { \
			echo "test-deps: npm ci in interop/ failed: the Node tests will skip"; [ "$$CI" != true ] || exit 1; }; \
	fi

# The command line's smoke queries against data.sf.gov (cmd/smoke), also through its old name data.sfgov.org,
# each checked for shape and exact totals; one line saying so, and exit 0,
# when the portal cannot be reached. `make smoke OFFLINE=1` runs the same
# checks against the built-in offline portal (--offline), as CI does.
OFFLINE ?=
smoke: build
	$(GO) run ./cmd/smoke $(if $(OFFLINE),-offline) bin/datasf-mcp

# gofmt, go vet and staticcheck (pinned).
lint: vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(ALL)

run:
	$(GO) run ./cmd/datasf-mcp --offline

# Runs every fuzz target of every package for FUZZTIME each. The seed corpora
# (and saved crashers under testdata/fuzz) also run in `make test`.
fuzz:
	@set -e; for pkg in $$($(GO) list $(ALL)); do \
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
	$(GO) test -run '^$$' -bench . -benchmem ./fuzzymatch ./internal/soql

# Release builds: the six platforms of the MCP Bundle, with the version,
# commit and date that `datasf-mcp version` prints.
VERSION ?= 0.1.0-dev
COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
LDFLAGS = -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.date=$(DATE)
# CI builds only linux/amd64, without -trimpath and with cgo as go test has it, to reuse the test build cache.
TRIMPATH ?= -trimpath
CGO ?= 0

release:
	@set -e; mkdir -p dist; for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
		out=dist/$$os-$$arch/datasf-mcp$$ext; \
		echo "release: $$out"; \
		CGO_ENABLED=$(CGO) GOOS=$$os GOARCH=$$arch $(GO) build $(TRIMPATH) -ldflags "$(LDFLAGS)" -o $$out ./cmd/datasf-mcp; \
	done

# The MCP Bundle for Claude Desktop (dist/datasf-mcp.mcpb): the release
# binaries, a launcher that picks the one for the machine, and
# bundle/manifest.json, validated and packed with the pinned official CLI
# (bundle/package-lock.json).
bundle: release
	@test -d bundle/node_modules/@anthropic-ai/mcpb || (cd bundle && npm ci --no-audit --no-fund)
	rm -rf dist/bundle dist/datasf-mcp.mcpb
	mkdir -p dist/bundle/server
	sed 's/"version": "[^"]*"/"version": "$(VERSION)"/' bundle/manifest.json > dist/bundle/manifest.json
	cp bundle/datasf-mcp.sh dist/bundle/server/datasf-mcp
	chmod +x dist/bundle/server/datasf-mcp
	@for p in $(PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; cp -r dist/$$os-$$arch dist/bundle/server/; done
	cd bundle && npx --no-install mcpb validate ../dist/bundle/manifest.json
	cd bundle && npx --no-install mcpb pack ../dist/bundle ../dist/datasf-mcp.mcpb

# The MCP Registry entry of a release (dist/server.json): server.json with
# VERSION everywhere and the SHA-256 of dist/datasf-mcp.mcpb in place of the
# committed placeholder (registry/README.md). Run after `make bundle`.
registry:
	@test -f dist/datasf-mcp.mcpb || { echo "registry: run make bundle VERSION=$(VERSION) first"; exit 1; }
	sed -e 's/"version": "[^"]*"/"version": "$(VERSION)"/' \
		-e 's|/releases/download/v[^/]*/|/releases/download/v$(VERSION)/|' \
		-e "s/\"fileSha256\": \"0\{64\}\"/\"fileSha256\": \"$$(sha256sum dist/datasf-mcp.mcpb | cut -d' ' -f1)\"/" \
		server.json > dist/server.json
