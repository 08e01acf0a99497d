# Tollgate — every entry point a developer or CI needs. `make demo` and
# `make test` set up everything themselves on a fresh Debian machine.

SHELL        := /bin/bash
.SHELLFLAGS  := -eu -o pipefail -c
GO           ?= go
RUN_DIR      ?= $(CURDIR)/.run
export TOLLGATE_RUN_DIR := $(RUN_DIR)

# apt-get runs as root: directly when make runs as root, else through sudo
# (as scripts/services.sh does), so a user with sudo can run make demo/test.
SUDO         := $(if $(filter 0,$(shell id -u)),,sudo)

# Static, release-style build flags (see docs/decisions.md for the tags).
BUILD_TAGS   := nobadger,nomysql,nopgx
GOFLAGS_BIN  := -trimpath -tags $(BUILD_TAGS)
# Both binaries report this version (caddy tollgate-version, settlementd version).
VERSION      ?= $(shell git describe --tags --always 2>/dev/null || echo unknown)
LDFLAGS_VER  := -X github.com/tollgate-rpc/tollgate/shared/version.Version=$(VERSION)

# Packages whose tests run the race detector. The contract and dev-chain tests
# drive go-ethereum's simulated EVM, which runs 5-10x slower under -race and
# has no goroutines of ours to check, so they run without it.
NORACE_PKGS  := ./contracts/...
RACE_PKGS     = $(shell $(GO) list ./... | grep -v '/contracts')

.PHONY: release notices help services services-stop tools node-deps browser-deps systemd-deps monitoring-deps nginx-deps contracts contracts-check build test test-go vet tidy-check clean-check fuzz demo demo-up demo-down devchain clean

help:
	@echo "make demo          run the local stack (services + dev chains) and walk it"
	@echo "make test          start services, vet, run every test"
	@echo "make services      start throwaway Redis + PostgreSQL under .run/"
	@echo "make services-stop stop them"
	@echo "make contracts     recompile Solidity, regenerate Go bindings"
	@echo "make build         build bin/caddy, bin/settlementd and the other commands under bin/"
	@echo "make release       versioned static binaries, SHA256SUMS, units and licences under dist/"
	@echo "make fuzz          run each network-facing fuzz target for FUZZTIME (default 20s)"

services:
	@scripts/services.sh start >/dev/null
	@scripts/services.sh env

services-stop:
	@scripts/services.sh stop

# Node.js is only needed to compile Solidity (and to check the committed
# artifacts are fresh); install it from Debian when missing.
tools:
	@command -v node >/dev/null && command -v npm >/dev/null || { \
	  echo "installing nodejs + npm with apt-get" >&2; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; }

# npm ci only when a lockfile is newer than what is installed.
# tests/x402: the independent x402 client (@x402/fetch); tests/x402v1: the
# legacy v1 client (x402-fetch, ~670 MB of dependencies); console: the web
# console's pinned build toolchain; tests/browser: playwright-core;
# tests/hardhat: Hardhat Network, the real EVM node whose mining the
# stuck-transaction tests control.
NPM_DIRS := contracts tests/js tests/x402 tests/x402v1 console tests/browser tests/hardhat
node-deps: tools
	@for d in $(NPM_DIRS); do \
	  [ -f $$d/package-lock.json ] || continue; \
	  if [ ! -f $$d/node_modules/.package-lock.json ] || [ $$d/package-lock.json -nt $$d/node_modules/.package-lock.json ]; then \
	    (cd $$d && npm ci --no-audit --no-fund --loglevel=error); fi; done

# The console's browser tests drive Debian's chromium through playwright-core.
browser-deps:
	@command -v chromium >/dev/null || { \
	  echo "installing chromium with apt-get" >&2; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The production systemd units are checked with systemd-analyze verify.
systemd-deps:
	@command -v systemd-analyze >/dev/null || { \
	  echo "installing systemd (for systemd-analyze) with apt-get" >&2; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd >/dev/null; }

# The monitoring tests check the alert rules and the dashboard's queries
# with promtool, from Debian's prometheus package (without recommends: no
# node exporter). See docs/decisions.md for why promtool.
monitoring-deps:
	@command -v promtool >/dev/null || { \
	  echo "installing prometheus (for promtool) with apt-get" >&2; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }

# The client-address test puts Debian's nginx in front of our Caddy as a
# load balancer that appends X-Forwarded-For.
nginx-deps:
	@command -v nginx >/dev/null || test -x /usr/sbin/nginx || { \
	  echo "installing nginx with apt-get" >&2; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx >/dev/null; }

contracts: node-deps
	cd contracts && node build.js
	$(GO) generate ./contracts/bindings

# Recompile into a temp dir and compare with the committed artifacts; the Go
# freshness test does the same, this is the quick manual form.
contracts-check: node-deps
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	  (cd contracts && node build.js --out $$tmp >/dev/null) && diff -r $$tmp contracts/build && echo "contract artifacts are fresh"

# bin/caddy is our custom Caddy (standard modules + http.handlers.tollgate),
# bin/settlementd the settlement daemon, bin/devchain the local chains,
# bin/tollgate-deploy the contracts' deploy command, bin/tollgate-node the
# node operators' command line (docs/node-operators.md).
build:
	@mkdir -p bin
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BIN) -ldflags '$(LDFLAGS_VER)' -o bin/caddy ./caddymodule/cmd/caddy
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BIN) -ldflags '$(LDFLAGS_VER)' -o bin/settlementd ./settlementd
	$(GO) build -o bin/devchain ./contracts/devchain
	$(GO) build -o bin/tollgate-deploy ./cmd/tollgate-deploy
	CGO_ENABLED=0 $(GO) build $(GOFLAGS_BIN) -ldflags '$(LDFLAGS_VER)' -o bin/tollgate-node ./cmd/tollgate-node

vet:
	$(GO) vet ./...

# The module must be tidy: go.mod lists what the code imports, nothing else.
# `go mod tidy -diff` prints the changes tidy would make and fails if any.
tidy-check:
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy" >&2; exit 1; }

# After a test run the working tree must be as it was (tests write under
# .run/, never into tracked files).
clean-check:
	@test -z "$$(git status --porcelain 2>/dev/null)" || { echo "the working tree changed during make test:" >&2; git status --short >&2; exit 1; }

# make test: services + vet + all tests. TOLLGATE_REQUIRE_SERVICES turns a
# missing Redis/PostgreSQL into a failure, TOLLGATE_REQUIRE_NODE does the same
# for the Solidity freshness check, so nothing is silently skipped.
# The gateway's integration tests run the real bin/caddy built here.
test: node-deps browser-deps systemd-deps monitoring-deps nginx-deps tidy-check build
	@mkdir -p $(RUN_DIR) && scripts/services.sh start > $(RUN_DIR)/services.env.sh
	@source $(RUN_DIR)/services.env.sh && \
	  export TOLLGATE_REQUIRE_SERVICES=1 TOLLGATE_REQUIRE_NODE=1 TOLLGATE_REQUIRE_BROWSER=1 \
	    TOLLGATE_CADDY_BIN=$(CURDIR)/bin/caddy TOLLGATE_SETTLEMENTD_BIN=$(CURDIR)/bin/settlementd \
	    TOLLGATE_DEVCHAIN_BIN=$(CURDIR)/bin/devchain TOLLGATE_DEPLOY_BIN=$(CURDIR)/bin/tollgate-deploy TOLLGATE_NODE_BIN=$(CURDIR)/bin/tollgate-node TOLLGATE_CHROMIUM=$$(command -v chromium) && \
	  $(GO) vet ./... && \
	  $(GO) test -count=1 -timeout 25m $(NORACE_PKGS) && \
	  $(GO) test -count=1 -race -timeout 25m $(RACE_PKGS)

FUZZTIME ?= 20s
fuzz:
	$(GO) test ./shared/money -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME)
	$(GO) test ./shared/events -run '^$$' -fuzz 'FuzzDecode$$' -fuzztime $(FUZZTIME)
	$(GO) test ./shared/events -run '^$$' -fuzz FuzzDecodeFlat -fuzztime $(FUZZTIME)
	$(GO) test ./shared/events -run '^$$' -fuzz FuzzAppendDecoded -fuzztime $(FUZZTIME)
	$(GO) test ./caddymodule/jsonrpc -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME)
	$(GO) test ./caddymodule/jsonrpc -run '^$$' -fuzz FuzzMatchReplies -fuzztime $(FUZZTIME)
	$(GO) test ./caddymodule/jsonrpc -run '^$$' -fuzz FuzzDeepValid -fuzztime $(FUZZTIME)
	$(GO) test ./caddymodule/cache -run '^$$' -fuzz FuzzKey -fuzztime $(FUZZTIME)
	$(GO) test ./caddymodule/paycheck -run '^$$' -fuzz FuzzDecodePayment -fuzztime $(FUZZTIME)
	$(GO) test ./caddymodule/paycheck -run '^$$' -fuzz FuzzVerifySIWX -fuzztime $(FUZZTIME)
	$(GO) test ./caddymodule/trust -run '^$$' -fuzz FuzzPinCalls -fuzztime $(FUZZTIME)
	$(GO) test ./caddymodule/mcp -run '^$$' -fuzz FuzzToolArguments -fuzztime $(FUZZTIME)
	$(GO) test ./caddymodule/mcp -run '^$$' -fuzz FuzzRawRPCToolIsTheTypedTool -fuzztime $(FUZZTIME)
	$(GO) test ./caddymodule/mcp -run '^$$' -fuzz FuzzPerCallEncodings -fuzztime $(FUZZTIME)
	$(GO) test ./caddymodule/evm -run '^$$' -fuzz FuzzLogsSpan -fuzztime $(FUZZTIME)
	$(GO) test ./shared/ethparse -run '^$$' -fuzz FuzzQuantity -fuzztime $(FUZZTIME)

devchain:
	$(GO) run ./contracts/devchain

# make demo: its own Redis/PostgreSQL, the dev chains, settlementd and our
# Caddy on non-default ports, then the narrated money-loop walkthrough
# (internal/walkthrough, the same steps the e2e test runs); exits 0 only if
# every step checked out.
demo: node-deps
	@scripts/demo.sh

# demo-up leaves the stack running and prints its URLs; demo-down stops it.
demo-up: node-deps
	@scripts/demo.sh up

demo-down:
	@scripts/demo.sh down

clean:
	rm -rf bin

# A real Redis Cluster (three masters, one replica each; redis-server from
# Debian on loopback ports 17000-17005, data under .run/cluster/):
# cluster-up starts it and prints TOLLGATE_CLUSTER_URL, cluster-down stops it.
# cluster-test runs the cluster tests — each starts its own cluster on free
# ports (internal/rediscluster), three gateways and two settlementd replicas,
# fails a master over, and tears everything down; they are part of make test too.
.PHONY: cluster-up cluster-down cluster-test
cluster-up:
	@scripts/cluster.sh start

cluster-down:
	@scripts/cluster.sh stop

cluster-test: build
	@mkdir -p $(RUN_DIR) && scripts/services.sh start > $(RUN_DIR)/services.env.sh
	@source $(RUN_DIR)/services.env.sh && \
	  export TOLLGATE_REQUIRE_SERVICES=1 TOLLGATE_CADDY_BIN=$(CURDIR)/bin/caddy \
	    TOLLGATE_SETTLEMENTD_BIN=$(CURDIR)/bin/settlementd TOLLGATE_DEVCHAIN_BIN=$(CURDIR)/bin/devchain && \
	  $(GO) test -count=1 -timeout 10m -v -run 'Cluster' ./internal/rediscluster ./settlementd

# settlementd ingest throughput against the real Redis + PostgreSQL:
# BENCH_EVENTS stream entries per case (backlog drain, sustained producer,
# several worker/batch settings), then a producer paced at 25,000 entries/s.
# The figures to read are events/s, CPU per event (cpu-µs/ev: on a shared
# machine the steadier one) and drain-ms ≈ 0 for the paced run.
# Then bench-close. Figures and reading: docs/benchmarks.md.
BENCH_EVENTS ?= 200000
.PHONY: bench-settlement
bench-settlement:
	@mkdir -p $(RUN_DIR) && scripts/services.sh start > $(RUN_DIR)/services.env.sh
	@source $(RUN_DIR)/services.env.sh && export TOLLGATE_REQUIRE_SERVICES=1 && \
	  $(GO) test ./settlementd/internal/ingest -run '^$$' -bench 'BenchmarkIngest$$' -benchtime $(BENCH_EVENTS)x -count 1 && \
	  $(GO) test ./settlementd/internal/ingest -run '^$$' -bench 'BenchmarkIngestPaced' -benchtime 250000x -count 1 && \
	  BENCH_PACK=8 $(GO) test ./settlementd/internal/ingest -run '^$$' -bench 'BenchmarkIngest$$/(backlog|sustained)/workers=2/batch=4000$$' -benchtime $(BENCH_EVENTS)x -count 1
	@$(MAKE) --no-print-directory bench-close

# The close of one epoch holding 10k, 100k and 1M revenue events (1,000
# nodes, 25,000 payers): median/min/max over BENCH_CLOSE_RUNS closes (all
# but the last rolled back, the last committed), in ms.
.PHONY: bench-close
bench-close:
	@mkdir -p $(RUN_DIR) && scripts/services.sh start > $(RUN_DIR)/services.env.sh
	@source $(RUN_DIR)/services.env.sh && export TOLLGATE_REQUIRE_SERVICES=1 && \
	  $(GO) test ./settlementd/internal/epochs -run '^$$' -bench 'BenchmarkClose' -benchtime 1x -count 1 -timeout 30m

# Redis-only metering throughput: paid decisions/s from the
# meter straight to Redis, no gateway (shared/meter BenchmarkMeterDecisions).
# Against the test Redis by default; set BENCH_REDIS_CLUSTER=host:port,... to
# drive a Redis Cluster with BENCH_SHARDS shards (default 12), and
# BENCH_REPLICA_WAIT=20ms for WAIT 1 after each debit.
BENCH_METER_TIME ?= 10s
.PHONY: bench-meter
bench-meter:
	@mkdir -p $(RUN_DIR) && scripts/services.sh start > $(RUN_DIR)/services.env.sh
	@source $(RUN_DIR)/services.env.sh && export TOLLGATE_REQUIRE_SERVICES=1 \
	  TOLLGATE_BENCH_REDIS_CLUSTER="$(BENCH_REDIS_CLUSTER)" TOLLGATE_BENCH_SHARDS="$(BENCH_SHARDS)" \
	  TOLLGATE_BENCH_REPLICA_WAIT="$(BENCH_REPLICA_WAIT)" && \
	  $(GO) test ./shared/meter -run '^$$' -bench 'BenchmarkMeterDecisions' -benchtime $(BENCH_METER_TIME) -count 1

# The same driver against one master and against three: bench-meter on the
# test Redis, then on a throwaway Redis Cluster (scripts/cluster.sh, ports
# 17100-17105, data under .run/bench-cluster/, stopped afterwards).
.PHONY: bench-meter-cluster
bench-meter-cluster:
	@$(MAKE) --no-print-directory bench-meter
	@export TOLLGATE_CLUSTER_DIR=$(RUN_DIR)/bench-cluster TOLLGATE_CLUSTER_PORT=17100 && \
	  trap 'scripts/cluster.sh stop' EXIT && scripts/cluster.sh start >/dev/null && \
	  $(MAKE) --no-print-directory bench-meter BENCH_REDIS_CLUSTER=$$(seq -s, -f '127.0.0.1:%g' 17100 17105)

# Gateway data-path cost: a fast local upstream measured directly,
# through a plain Caddy reverse_proxy, and through our gateway with a funded
# key and anonymously, with wrk at concurrency 16 and 64; prints req/s, p50,
# p99 and the (c)/(b), (d)/(b) ratios. Figures and reading: docs/benchmarks.md.
.PHONY: bench
bench:
	@scripts/bench.sh

# THIRD_PARTY_NOTICES.md: the Go modules linked into both binaries and their
# licences (internal/notices; TestThirdPartyNoticesFresh keeps it current).
notices:
	$(GO) run ./internal/notices -o THIRD_PARTY_NOTICES.md

# make release: static linux/amd64 binaries stamped with $(VERSION) (git
# describe --tags --always), the production Caddyfile, environment templates
# and systemd units, LICENSE/NOTICE/CHANGELOG/SECURITY and every linked
# module's licence, in $(DIST)/tollgate-$(VERSION)-linux-amd64/ with its
# SHA256SUMS, and the same as a .tar.gz with $(DIST)/SHA256SUMS.
# TestMakeRelease runs it on a clean clone. See docs/operators.md, "Release".
DIST    ?= $(CURDIR)/dist
RELNAME := tollgate-$(VERSION)-linux-amd64
release:
	@rm -rf $(DIST)/$(RELNAME) $(DIST)/$(RELNAME).tar.gz && mkdir -p $(DIST)/$(RELNAME)/systemd $(DIST)/$(RELNAME)/licenses
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build $(GOFLAGS_BIN) -ldflags '-s -w $(LDFLAGS_VER)' -o $(DIST)/$(RELNAME)/caddy ./caddymodule/cmd/caddy
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build $(GOFLAGS_BIN) -ldflags '-s -w $(LDFLAGS_VER)' -o $(DIST)/$(RELNAME)/settlementd ./settlementd
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build $(GOFLAGS_BIN) -ldflags '-s -w $(LDFLAGS_VER)' -o $(DIST)/$(RELNAME)/tollgate-node ./cmd/tollgate-node
	cp deploy/production/*.service $(DIST)/$(RELNAME)/systemd/
	cp deploy/production/Caddyfile deploy/production/*.env.example LICENSE NOTICE THIRD_PARTY_NOTICES.md CHANGELOG.md SECURITY.md docs/operators.md $(DIST)/$(RELNAME)/
	$(GO) run ./internal/notices -licenses $(DIST)/$(RELNAME)/licenses -o /dev/null
	cd $(DIST)/$(RELNAME) && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort | xargs sha256sum > SHA256SUMS
	tar -C $(DIST) --owner=0 --group=0 --numeric-owner --sort=name -czf $(DIST)/$(RELNAME).tar.gz $(RELNAME)
	cd $(DIST) && sha256sum $(RELNAME).tar.gz > SHA256SUMS
	@echo "release $(VERSION): $(DIST)/$(RELNAME).tar.gz"
