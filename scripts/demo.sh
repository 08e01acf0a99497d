#!/usr/bin/env bash
# make demo: bring up everything Tollgate runs on, locally, and walk what exists.
# At the foundation stage that is: throwaway Redis + PostgreSQL, the two dev
# chains with the contracts deployed, and a real deposit sent over HTTP by a
# dev account that is mined and emits Deposited. Exits non-zero if any step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
RUN_DIR="${TOLLGATE_RUN_DIR:-$PWD/.run}"
mkdir -p "$RUN_DIR" bin
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "1/4 services: Redis and PostgreSQL under $RUN_DIR"
eval "$(scripts/services.sh start)"
echo "REDIS_URL=$REDIS_URL"
echo "DATABASE_URL=$DATABASE_URL"

step "2/4 building the dev chain"
go build -o bin/devchain ./contracts/devchain

step "3/4 starting chains 137 and 8453 (contracts deployed, dev accounts funded)"
manifest="$RUN_DIR/devchain.json"
rm -f "$manifest"
bin/devchain -manifest "$manifest" >"$RUN_DIR/devchain.log" 2>&1 &
chain_pid=$!
trap 'kill $chain_pid 2>/dev/null || true; wait $chain_pid 2>/dev/null || true' EXIT
for _ in $(seq 1 150); do
  [ -s "$manifest" ] && break
  kill -0 $chain_pid 2>/dev/null || { cat "$RUN_DIR/devchain.log"; echo "dev chain exited" >&2; exit 1; }
  sleep 0.2
done
[ -s "$manifest" ] || { cat "$RUN_DIR/devchain.log"; echo "dev chain did not write its manifest" >&2; exit 1; }
bin/devchain summary -manifest "$manifest"

step "4/4 a developer deposits 5 USDT into RevenueVault over JSON-RPC"
bin/devchain deposit -manifest "$manifest" -from developer-1 -amount 5

printf '\n\033[1mdemo: every step checked out\033[0m (the full money loop arrives with the gateway and settlementd)\n'
