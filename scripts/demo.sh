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

step "1/6 services: Redis and PostgreSQL under $RUN_DIR"
eval "$(scripts/services.sh start)"
echo "REDIS_URL=$REDIS_URL"
echo "DATABASE_URL=$DATABASE_URL"

step "2/6 building the dev chain and our Caddy"
go build -o bin/devchain ./contracts/devchain
CGO_ENABLED=0 go build -trimpath -tags nobadger,nomysql,nopgx -o bin/caddy ./caddymodule/cmd/caddy
bin/caddy list-modules | grep -x http.handlers.tollgate

step "3/6 starting chains 137 and 8453 (contracts deployed, dev accounts funded)"
manifest="$RUN_DIR/devchain.json"
rm -f "$manifest"
bin/devchain -manifest "$manifest" >"$RUN_DIR/devchain.log" 2>&1 &
chain_pid=$!
caddy_pid=""
cleanup() {
  [ -n "$caddy_pid" ] && { kill "$caddy_pid" 2>/dev/null || true; wait "$caddy_pid" 2>/dev/null || true; }
  kill $chain_pid 2>/dev/null || true; wait $chain_pid 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 1 150); do
  [ -s "$manifest" ] && break
  kill -0 $chain_pid 2>/dev/null || { cat "$RUN_DIR/devchain.log"; echo "dev chain exited" >&2; exit 1; }
  sleep 0.2
done
[ -s "$manifest" ] || { cat "$RUN_DIR/devchain.log"; echo "dev chain did not write its manifest" >&2; exit 1; }
bin/devchain summary -manifest "$manifest"

step "4/6 a developer deposits 5 USDT into RevenueVault over JSON-RPC"
bin/devchain deposit -manifest "$manifest" -from developer-1 -amount 5

step "5/6 the gateway: our Caddy with the root Caddyfile, the dev chains as providers"
export TOLLGATE_HTTP_PORT="${TOLLGATE_HTTP_PORT:-18080}" TOLLGATE_ADMIN_LISTEN="${TOLLGATE_ADMIN_LISTEN:-127.0.0.1:12019}"
TOLLGATE_RPC_137=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["polygon"]["rpc_url"])' "$manifest")
TOLLGATE_RPC_8453=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["base"]["rpc_url"])' "$manifest")
export TOLLGATE_RPC_137 TOLLGATE_RPC_8453
bin/caddy run --config Caddyfile --adapter caddyfile >"$RUN_DIR/caddy.log" 2>&1 &
caddy_pid=$!
gw="http://localhost:$TOLLGATE_HTTP_PORT"
for _ in $(seq 1 150); do
  curl -fsS "$gw/rpc/health" >/dev/null 2>&1 && break
  kill -0 $caddy_pid 2>/dev/null || { tail -20 "$RUN_DIR/caddy.log"; echo "caddy exited" >&2; exit 1; }
  sleep 0.2
done
rpc() { curl -fsS "$gw$1" -H 'content-type: application/json' -d "$2"; echo; }
check() { grep -q "$2" <<<"$1" || { echo "unexpected answer: $1" >&2; exit 1; }; }
out=$(rpc /rpc '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'); echo "POST /rpc eth_chainId      -> $out"; check "$out" '"0x89"'
out=$(rpc /rpc/8453 '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'); echo "POST /rpc/8453 eth_chainId -> $out"; check "$out" '"0x2105"'
out=$(rpc /rpc '[{"jsonrpc":"2.0","id":"a","method":"eth_blockNumber"},{"jsonrpc":"2.0","id":"b","method":"net_version"}]'); echo "POST /rpc batch            -> $out"; check "$out" '"id":"b"'

step "6/6 observability"
echo "GET /rpc/stats/polygon -> $(curl -fsS "$gw/rpc/stats/polygon")"

printf '\n\033[1mdemo: every step checked out\033[0m (the full money loop arrives with the gateway and settlementd)\n'
