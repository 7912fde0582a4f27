# Common tasks. `make test` is what CI runs (see .ci/run).
GO ?= go
FUZZTIME ?= 30s

.PHONY: test test-e2e test-deps race-gcflags-check modules smoke run vet fuzz bench build lint release bundle registry

# The repository holds several modules (go.work): the app, dualresp and
# its stores and adapters (dualresp/{mcpgo,gosdk,sqlitestore,redisstore})
# and examples/dualresp-minimal. A relative pattern stops at a module's
# edge (./... at the root is the app alone, with or without go.work); the
# import-path pattern below is every package of every module of go.work.
ALL = github.com/datasf-mcp/datasf-mcp/...

build:
	$(GO) build -o bin/datasf-mcp ./cmd/datasf-mcp

# go vet sees the files of one build configuration: -tags e2e is every
# file but those built only without the tag (//go:build !e2e), which the
# second pass vets in their packages alone (NOT_E2E_PKGS). Vetting every
# package twice, with and without the tag, cost a fresh clone twice the
# type-checking for the same files.
NOT_E2E_PKGS = $(sort $(patsubst %/,%,$(dir $(shell grep -rl --include='*.go' --exclude-dir=node_modules '^//go:build !e2e$$' .))))
vet:
	$(GO) vet -tags e2e $(ALL)
	$(if $(NOT_E2E_PKGS),$(GO) vet $(NOT_E2E_PKGS))

# Each module of go.work builds alone (GOWORK=off: a clone without go.work,
# or a user of one module), with its go.mod and go.sum tidy, and requires
# the modules of this repository at DUALRESP_VERSION, the release the next
# tags make (README, "Releasing dualresp"): a version a user's go command
# can fetch once tagged, never a pseudo version nobody can resolve. (Here
# each go.mod replaces them by their directories.)
# "Builds" is compiles: go list -export compiles every package of the
# module, its commands included, and fails (printing the compiler's errors)
# when one does not, without linking the commands. Linking the app's five
# commands (and the example's) was most of this target's time once
# compiled; the tests link the app's binary and every test binary anyway.
DUALRESP_VERSION = v0.1.0
modules:
	@set -e; for dir in $$($(GO) list -m -f '{{.Dir}}'); do \
		rel=$${dir#$(CURDIR)}; rel=$${rel#/}; \
		echo "modules: $${rel:-.} alone (GOWORK=off): compiles, go mod tidy -diff, our modules at $(DUALRESP_VERSION)"; \
		(cd "$$dir" && GOWORK=off $(GO) list -export ./... >/dev/null && GOWORK=off $(GO) mod tidy -diff); \
		bad=$$(cd "$$dir" && GOWORK=off $(GO) list -m -f '{{if not .Main}}{{.Path}} {{.Version}}{{end}}' all | \
			grep '^github.com/datasf-mcp/datasf-mcp/' | grep -v ' $(DUALRESP_VERSION)$$' || true); \
		[ -z "$$bad" ] || { echo "modules: $${rel:-.}/go.mod requires, want $(DUALRESP_VERSION): $$bad"; exit 1; }; \
	done

# `make test` sets up what the tests need, then runs every test, in two
# tiers, through cmd/testreport: go test's usual output, then a summary of
# what was skipped and why, and the slowest packages and tests; its exit
# code is go test's. A test needing an absent program (Chromium,
# redis-server, haproxy, Node) skips with one line naming the Debian
# package; with CI=true (.ci/run) a skip fails the run instead.
#
# The tiers, run at the same time (testreport runs both go tests at once;
# the second fills the first's idle time, when its tests wait on timeouts
# and child processes):
#   - the fast tier, `go test ./...`: every test not behind the e2e build
#     tag, here with the race detector;
#   - the e2e tier, `go test -tags e2e`, without the race detector, which
#     slows that code tenfold and has nothing to watch there: the e2e/
#     tree (the tests of the built binary, e2e/binary, and of Node and
#     Chromium against it, e2e/interop; e2e/harness is what they share),
#     and the tests of a package's internals too slow for the fast tier,
#     in its *_e2e_test.go files (scale, memory bounds, soaks, figures
#     over the corpora, the benchmark driver's quick run, the property
#     tests CI runs again with 1000 checks). E2E_PKGS finds the packages
#     with such files by their build tag, and testreport's -tagged-only
#     e2e runs there only the tests of the files built with the tag (the
#     fast tests beside them ran in the race tier already).
# A test's tier is its file's build tag: no test is named here.
# e2e/binary's tests run in one test process, which go test kills after
# 10 minutes by default: on a loaded 2-core machine they took 11 (with the
# race run beside them), hence E2E_TIMEOUT.
# That process is the longest of make test, and many of its tests wait
# (on HAProxy, Redis, slow readers, timeouts) rather than compute: it runs
# as a third go test of its own, four tests at once (-parallel 4) where the
# others keep go test's default of two. A fresh clone's make test took
# 308.58 s with it inside the e2e tier, 286.84 s this way (docs: README,
# "Test tiers"). The Node and Chromium tests stay at two: at four, a
# Chromium page missed its 30 s timeout once.
E2E_TIMEOUT ?= 30m
# The e2e/ packages but e2e/binary, which runs as a go test of its own
# (see above): found by their test files, so that a new one runs too.
E2E_DIRS = $(filter-out ./e2e/binary,$(sort $(patsubst %/,./%,$(dir $(wildcard e2e/*/*_test.go)))))
E2E_PKGS = ./e2e/... $(sort $(patsubst %/,%,$(dir $(shell grep -rl --include='*_test.go' --exclude-dir=e2e --exclude-dir=node_modules '^//go:build e2e' .))))
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
# go test runs packages in the order given (two at a time): the race run
# names its longest packages first, so that none of them starts last and
# runs alone at the end while the other core idles.
RACE_FIRST = ./datasf ./properties_test ./reliability ./internal/localportal ./dualresp ./socrata ./internal/analyze
#
# The tests that run the datasf-mcp binary run one, built here
# (DATASF_MCP_TEST_BINARY), and e2e/binary's offline cache
# (DATASF_MCP_TEST_CACHE) is in the same directory: the binary is linked
# once, and e2e/harness builds none.
#
# A binary built with -race sleeps a second at exit by default, for
# races in goroutines still running then (GORACE atexit_sleep_ms); each
# of about 40 test binaries would hold a slot of go test's for that
# second. The tests stop what they start, so the race run sets it to 0
# (a GORACE of the caller's, given after it, still wins).
#
# The checks before the tests (vet, each module alone, interop's npm
# packages, the race-gcflags check) need nothing of each other: they run
# at once (-j4, each one's output printed together when it ends), which
# took their 28 s one after the other in a fresh clone to about 20.
test:
	@$(MAKE) --no-print-directory -j4 -Otarget vet modules test-deps race-gcflags-check
	shared=$$(mktemp -d) && trap 'rm -rf "$$shared"' EXIT && \
	$(GO) build -o "$$shared/datasf-mcp" ./cmd/datasf-mcp && \
	GORACE="atexit_sleep_ms=0 $$GORACE" \
	DATASF_MCP_TEST_BINARY="$$shared/datasf-mcp" DATASF_MCP_TEST_CACHE="$$shared/offline" \
	$(GO) run ./cmd/testreport -race -gcflags='$(RACE_GCFLAGS)' -count=1 $(RACE_FIRST) $(ALL) \
		-- -tags e2e -tagged-only e2e -count=1 -timeout $(E2E_TIMEOUT) $(filter-out ./e2e/...,$(E2E_PKGS)) $(E2E_DIRS) \
		-- -tags e2e -count=1 -parallel 4 -timeout $(E2E_TIMEOUT) ./e2e/binary

# The e2e tier alone (the slow tests; see test), without the race detector.
test-e2e: test-deps
	$(GO) test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) $(E2E_PKGS)

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
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags e2e $(ALL)

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
