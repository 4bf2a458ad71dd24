# The targets CI runs (make ci) and the ones a developer reaches for.
GO       ?= go
# FUZZTIME, when set (FUZZTIME=5m make fuzz), replaces every target's budget.
FUZZTIME ?=
COVERMIN ?= 95.0
LIBPKGS  := . ./internal/...

# The repository's other modules, each with a go.mod of its own that points
# at the library with a replace directive: the S3 backend, the MCP server,
# the command line and the agent-framework adapters. Every target that
# vets, tests or benchmarks loops over them; modules-check (in ci) fails
# when a go.mod in the tree is missing from this list, so a new module
# cannot be left untested.
MODULES := \
	s3store \
	mcpserver \
	cmd/mdmemory \
	adapters/adkmem \
	adapters/anthropicmem \
	adapters/einomem \
	adapters/langchaingomem \
	adapters/openaimem
FOUND_MODULES := $(sort $(patsubst ./%/go.mod,%,$(shell find . -mindepth 2 -name go.mod -not -path '*/testdata/*' -not -path './.*')))

.PHONY: bench-floor ci test test-race vet staticcheck fmt fmt-check coverage fuzz bench bench-smoke bench-peers tools modules-check

ci: fmt-check modules-check tools vet staticcheck test test-race coverage fuzz bench-smoke

modules-check:
	@if [ "$(FOUND_MODULES)" != "$(sort $(MODULES))" ]; then echo "MODULES in the Makefile: $(sort $(MODULES))"; echo "go.mod files found:     $(FOUND_MODULES)"; exit 1; fi

# What the tests that need a real peer use, installed when missing: versitygw
# (the S3 tests), the MCP Inspector's CLI (the MCP server's tests), and
# Chromium with Playwright (the page's browser tests). make test installs
# nothing; without them those tests skip and say why.
tools: s3-tools mcp-tools ui-tools

# Every module's tests: what a developer runs, a few minutes on two cores
# with an empty build cache. It vets nothing beyond what go test vets, and
# installs nothing (the S3 and MCP peer tests skip without their tools;
# make tools installs them). make ci runs the same tests with the race
# detector (test-race), and adds the three-OS vet, the tools, coverage,
# fuzzing and benchmarks.
test:
	$(GO) test -count=1 ./...
	@set -e; for m in $(MODULES); do echo "== $$m"; (cd $$m && $(GO) test -count=1 ./...); done

# Every module's tests with the race detector, as make ci runs them.
test-race:
	$(GO) test -race -count=1 ./...
	@set -e; for m in $(MODULES); do echo "== $$m"; (cd $$m && $(GO) test -race -count=1 ./...); done

# go vet for linux, windows and darwin, in every module.
vet:
	@set -e; for m in . $(MODULES); do echo "== vet $$m"; \
		(cd $$m && $(GO) vet ./... && GOOS=windows $(GO) vet ./... && GOOS=darwin $(GO) vet ./...); done

# staticcheck, in every module, for linux and for windows (which builds
# the files that linux does not: dir_other.go). The version is pinned,
# 2026.2.2 (module v0.8.2), the latest release, which knows Go 1.26; it is
# installed into $(go env GOPATH)/bin when the one there is another or
# missing. A false positive takes a //lint:ignore CHECK reason on the line
# above it.
STATICCHECK_VERSION ?= 0.8.2
staticcheck:
	@sc="$$($(GO) env GOPATH)/bin/staticcheck"; \
	case "$$("$$sc" -version 2>/dev/null)" in *"($(STATICCHECK_VERSION))"*) ;; \
		*) $(GO) install honnef.co/go/tools/cmd/staticcheck@v$(STATICCHECK_VERSION) || exit 1;; esac; \
	set -e; for m in . $(MODULES); do echo "== staticcheck $$m"; \
		(cd $$m && "$$sc" ./... && GOOS=windows "$$sc" ./...); done

fmt:
	gofmt -w .

fmt-check:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# Statement coverage of the library (examples excluded), gated at COVERMIN %.
coverage:
	$(GO) test -count=1 -covermode=atomic -coverpkg=./,./internal/... -coverprofile=cover.out $(LIBPKGS)
	@$(GO) tool cover -func=cover.out | awk -v min=$(COVERMIN) '/^total:/ { sub("%","",$$3); printf "coverage: %s%% of statements (gate %s%%)\n", $$3, min; if ($$3+0 < min+0) { print "coverage below the gate"; exit 1 } }'

# Short runs of every fuzz target. Each has an execution-count budget, about
# 10 s on a 2-core machine: a duration (-fuzztime=10s) races the fuzzing
# coordinator's own deadline under load in Go 1.26 (golang/go#75804) and
# fails with "context deadline exceeded" and no reproducer. FUZZTIME=5m
# make fuzz runs each target for a duration instead, which can hit that
# race again on a loaded machine.
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzResolve$$' -fuzztime=$(or $(FUZZTIME),100000x) .
	$(GO) test -run='^$$' -fuzz='^FuzzClaudeMemory$$' -fuzztime=$(or $(FUZZTIME),20000x) .
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(or $(FUZZTIME),300000x) ./internal/paths
	$(GO) test -run='^$$' -fuzz='^FuzzSetHead$$' -fuzztime=$(or $(FUZZTIME),40000x) ./internal/markdown
	$(GO) test -run='^$$' -fuzz='^FuzzCapNesting$$' -fuzztime=$(or $(FUZZTIME),10000x) ./internal/markdown
	$(GO) test -run='^$$' -fuzz='^FuzzParseAfter$$' -fuzztime=$(or $(FUZZTIME),60000x) ./internal/markdown
	$(GO) test -run='^$$' -fuzz='^FuzzSetHeadDoc$$' -fuzztime=$(or $(FUZZTIME),40000x) ./internal/markdown
	$(GO) test -run='^$$' -fuzz='^FuzzCheck$$' -fuzztime=$(or $(FUZZTIME),25000x) ./internal/factguard
	$(GO) test -run='^$$' -fuzz='^FuzzSecrets$$' -fuzztime=$(or $(FUZZTIME),100000x) ./internal/secrets
	$(GO) test -run='^$$' -fuzz='^FuzzTokenize$$' -fuzztime=$(or $(FUZZTIME),150000x) ./internal/search
	$(GO) test -run='^$$' -fuzz='^FuzzPack$$' -fuzztime=$(or $(FUZZTIME),50000x) ./internal/textpack
	$(GO) test -run='^$$' -fuzz='^FuzzDelta$$' -fuzztime=$(or $(FUZZTIME),30000x) ./internal/diff
	$(GO) test -run='^$$' -fuzz='^FuzzApply$$' -fuzztime=$(or $(FUZZTIME),80000x) ./internal/diff
	$(GO) test -run='^$$' -fuzz='^FuzzHistory$$' -fuzztime=$(or $(FUZZTIME),5000x) ./internal/journal
	$(GO) test -run='^$$' -fuzz='^FuzzParseOwn$$' -fuzztime=$(or $(FUZZTIME),100000x) ./internal/journal
	$(GO) test -run='^$$' -fuzz='^FuzzRedact$$' -fuzztime=$(or $(FUZZTIME),5000x) ./internal/journal

bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=1 $(LIBPKGS)

# The change path against the durable replace floor, each benchmark five
# times in a process of its own (scripts/benchfloor; BENCHMARKS.md).
FLOORBENCH = BenchmarkAppendHistory/episode/off BenchmarkAppendHistory/episode/history \
	BenchmarkAppendFactLine/facts/off BenchmarkAppendFactLine/facts/history \
	BenchmarkAppendHistory/fact/off BenchmarkAppendHistory/fact/history
bench-floor:
	$(GO) test -c -o $(CURDIR)/memory.test .
	scripts/benchfloor $(or $(RUNS),5) "$(CURDIR)/memory.test $(BASE)" $(FLOORBENCH)

# Every benchmark once, so that CI catches one that no longer runs. The
# figures mean nothing; make bench measures.
bench-smoke:
	$(GO) test -run='^$$' -bench=. -benchtime=1x -count=1 ./...
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) test -run='^$$' -bench=. -benchtime=1x -count=1 ./...); done

# The S3 backend, s3store/, is tested against versitygw, an S3 gateway over
# a local folder, on loopback. s3-tools installs versitygw unless it is in
# $(go env GOPATH)/bin; without it, the s3store tests skip.
VERSITYGW ?= github.com/versity/versitygw/cmd/versitygw@v1.8.0
.PHONY: s3-tools test-s3store mcp-tools test-conformance ui-tools test-browser
s3-tools:
	@test -x "$$($(GO) env GOPATH)/bin/versitygw" || $(GO) install $(VERSITYGW)

test-s3store: s3-tools
	cd s3store && $(GO) test -race -count=1 ./...

# The MCP server is tested with a real third-party client, the MCP
# Inspector's CLI, and with the official MCP conformance suite
# (@modelcontextprotocol/conformance, over streamable HTTP and, through a
# bridge, standard input and output) at the two revisions it has frozen
# requirements for, 2025-11-25 (sessions) and 2026-07-28 (stateless),
# which mcp-tools installs with npm
# (when Node.js is present) into the user cache folder, where mcpserver's
# tests look for them; MDMEMORY_INSPECTOR and MDMEMORY_CONFORMANCE name
# others. Keep the versions in step with inspectorVersion and
# conformanceVersion in mcpserver's tests. The suite's 0.2.0-alpha.12
# imports fs.globSync, which Node.js 20 lacks: the test preloads a shim,
# mcpserver/testdata/conformance/register.mjs.
INSPECTOR_VERSION   ?= 2.12.0
MCP_TOOLS_DIR       ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mdmemory/inspector-$(INSPECTOR_VERSION)
CONFORMANCE_VERSION ?= 0.2.0-alpha.12
CONFORMANCE_DIR     ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mdmemory/conformance-$(CONFORMANCE_VERSION)
mcp-tools:
	@if ! command -v npm >/dev/null; then echo "npm not found: the MCP Inspector and conformance tests will skip"; exit 0; fi; \
	if [ ! -x "$(MCP_TOOLS_DIR)/node_modules/.bin/mcp-inspector" ]; then \
		npm install --prefix "$(MCP_TOOLS_DIR)" --no-audit --no-fund --loglevel=error @modelcontextprotocol/inspector@$(INSPECTOR_VERSION) || exit 1; fi; \
	if [ ! -f "$(CONFORMANCE_DIR)/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then \
		npm install --prefix "$(CONFORMANCE_DIR)" --no-audit --no-fund --loglevel=error @modelcontextprotocol/conformance@$(CONFORMANCE_VERSION) || exit 1; fi

# The conformance suite alone, against the MCP server over both transports.
test-conformance: mcp-tools
	cd mcpserver && $(GO) test -race -count=1 -run '^TestConformance' -v ./...

# The page of mdmemory ui is tested in a real browser: Debian's Chromium
# (/usr/bin/chromium; apt-get install chromium, done here when make runs as
# root) driven by Playwright's playwright-core, which ui-tools installs with
# npm into the user cache folder, where the test looks for it
# (MDMEMORY_PLAYWRIGHT names another). No browser is downloaded: the test
# launches Chromium by its path. Keep the version in step with
# playwrightVersion in cmd/mdmemory/internal/ui/browser_test.go.
PLAYWRIGHT_VERSION ?= 1.64.1
UI_TOOLS_DIR       ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mdmemory/playwright-core-$(PLAYWRIGHT_VERSION)
ui-tools:
	@if [ ! -x /usr/bin/chromium ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			DEBIAN_FRONTEND=noninteractive apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium || exit 1; \
		else echo "no /usr/bin/chromium (apt-get install chromium, as root): the browser tests will skip"; fi; fi; \
	if ! command -v npm >/dev/null; then echo "npm not found: the browser tests will skip"; exit 0; fi; \
	if [ ! -f "$(UI_TOOLS_DIR)/node_modules/playwright-core/index.mjs" ]; then \
		npm install --prefix "$(UI_TOOLS_DIR)" --no-audit --no-fund --loglevel=error playwright-core@$(PLAYWRIGHT_VERSION) || exit 1; fi

# The browser tests alone; MDMEMORY_SCREENSHOTS=DIR also saves a picture of
# each page there (docs/ui/ holds the README's).
test-browser: ui-tools
	cd cmd/mdmemory && $(GO) test -count=1 -run '^TestBrowser' -v ./internal/ui/

# Search side by side with SQLite FTS5 and ripgrep on the same corpus: the
# peers' script generates it and measures them, then the Go benchmark runs
# on it. Needs python3 (and ripgrep: apt-get install ripgrep). Figures in
# BENCHMARKS.md.
PEERS_WORK  ?= $(or $(TMPDIR),/tmp)/mdmemory-peers
PEERS_SIZES ?= 1000,10000,100000
bench-peers:
	cd ../shared/bench && python3 scale_bench.py --sizes $(PEERS_SIZES) --work $(PEERS_WORK) --out $(PEERS_WORK)/peers.json
	MDMEMORY_PEERS_WORK=$(PEERS_WORK) $(GO) test -run='^$$' -bench='^BenchmarkPeersBuild$$' -benchtime=5x -count=1 .
	MDMEMORY_PEERS_WORK=$(PEERS_WORK) $(GO) test -run='^$$' -bench='^BenchmarkPeersQuery$$' -benchtime=500x -count=1 .
