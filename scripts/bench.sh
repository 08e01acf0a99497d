#!/usr/bin/env bash
# make bench: the gateway's data-path cost against a plain Caddy
# reverse_proxy, in one run. Installs wrk if missing,
# starts a Redis of its own (port BENCH_REDIS_PORT, default 17210), builds bin/caddy and the bench driver,
# then runs internal/bench, which starts the fast upstream and both Caddys
# and measures (a) upstream, (b) reverse_proxy, (c) gateway + funded key,
# (d) gateway free tier at each concurrency.
#
# Knobs (environment): BENCH_DURATION (10s), BENCH_WARMUP (3s),
# BENCH_CONCURRENCY ("16 64"), BENCH_THREADS, BENCH_PROFILE=1 (CPU profile
# of the gateway under load → .run/bench/gateway-cpu.pprof; BENCH_PROFILE_SETUP
# names the setups profiled, BENCH_PROFILE_ROUNDS=all profiles every round; the
# report splits each profile between our code, the MCP SDK, Caddy and the runtime),
# BENCH_UPDATE_DOCS=1 (rewrite the results block of docs/benchmarks.md),
# BENCH_SETUPS ("b c c0": only those setups; "t t0", trust at its defaults vs
# the node unjudged, only when named), BENCH_BASELINE_BIN, BENCH_WS=0 (skip the
# WebSocket fan-out row), BENCH_WS_SUBSCRIBERS (1000), BENCH_CLUSTER=0 (skip the Redis Cluster row).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$REPO"
GO="${GO:-go}"
RUN_DIR="${TOLLGATE_RUN_DIR:-$REPO/.run}"

if ! command -v wrk >/dev/null; then
	echo "bench: installing wrk with apt-get" >&2
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi

mkdir -p "$RUN_DIR" bin
scripts/services.sh start >"$RUN_DIR/services.env.sh"
# shellcheck disable=SC1091
source "$RUN_DIR/services.env.sh"

CGO_ENABLED=0 "$GO" build -trimpath -tags nobadger,nomysql,nopgx -o bin/caddy ./caddymodule/cmd/caddy
"$GO" build -o bin/tollgate-bench ./internal/bench

# A Redis of the bench's own (no persistence, like the test Redis): the
# Redis CPU column then counts the bench's metering only, not whatever else
# uses the test Redis on a shared machine (other test suites, benchmarks).
BENCH_REDIS_PORT="${BENCH_REDIS_PORT:-17210}"
bdir="$RUN_DIR/bench-redis"
mkdir -p "$bdir"
redis-cli -p "$BENCH_REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true # a run that died left it
redis-server --port "$BENCH_REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
	--unixsocket "$bdir/redis.sock" --unixsocketperm 700 \
	--daemonize yes --pidfile "$bdir/redis.pid" --logfile "$bdir/redis.log" --dir "$bdir" >/dev/null
trap 'redis-cli -p "$BENCH_REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true' EXIT
for _ in $(seq 50); do
	redis-cli -p "$BENCH_REDIS_PORT" ping >/dev/null 2>&1 && break
	sleep 0.1
done
export REDIS_URL="redis://127.0.0.1:$BENCH_REDIS_PORT/0"
# The same Redis over a Unix socket: the (c-unix) row, a colocated Redis.
export BENCH_REDIS_SOCKET="$bdir/redis.sock"

export BENCH_OUT="${BENCH_OUT:-$RUN_DIR/bench}"
bin/tollgate-bench
