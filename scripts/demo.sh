#!/usr/bin/env bash
# make demo:      scripts/demo.sh        start everything, walk the whole money loop, tear down
# make demo-up:   scripts/demo.sh up     start everything and leave it running; prints the URLs
# make demo-down: scripts/demo.sh down   stop what `up` started
#
# On a fresh Debian machine this installs what is missing (Redis, PostgreSQL
# via scripts/services.sh), builds bin/caddy, bin/settlementd, bin/devchain and
# bin/tollgate-demo, and runs cmd/tollgate-demo, which starts the dev chains
# (contracts deployed, dev accounts funded), settlementd (every job on, keys
# from the dev-chain manifest, never printed) and our Caddy with the root
# Caddyfile, then walks the steps of internal/walkthrough — the same code the
# end-to-end test runs. Exits non-zero if any step fails.
#
# The demo has its own Redis and PostgreSQL (ports 26379 and 25432, data under
# .run/demo/services) and its own ports (gateway 28080, settlementd 28081,
# Caddy admin 22019, chains 28545/28546), so a stack left running by `up`
# never meets `make test`'s services (16379/15432) or default ports.
# Override with TOLLGATE_DEMO_{HTTP,SETTLEMENTD,ADMIN,POLYGON,BASE,REDIS,PG}_PORT;
# TOLLGATE_DEMO_BIN (default bin) is where the binaries are built.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
RUN_DIR="${TOLLGATE_RUN_DIR:-$REPO/.run}"
DEMO_DIR="$RUN_DIR/demo"
PIDS="$DEMO_DIR/stack.pids"
BIN="${TOLLGATE_DEMO_BIN:-bin}"
mkdir -p "$DEMO_DIR" "$BIN"
cmd="${1:-run}"

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
services() {
	TOLLGATE_RUN_DIR="$DEMO_DIR/services" TOLLGATE_REDIS_PORT="${TOLLGATE_DEMO_REDIS_PORT:-26379}" \
		TOLLGATE_PG_PORT="${TOLLGATE_DEMO_PG_PORT:-25432}" scripts/services.sh "$@"
}
ports=(-http-port "${TOLLGATE_DEMO_HTTP_PORT:-28080}" -settlementd-port "${TOLLGATE_DEMO_SETTLEMENTD_PORT:-28081}"
	-admin-port "${TOLLGATE_DEMO_ADMIN_PORT:-22019}" -polygon-port "${TOLLGATE_DEMO_POLYGON_PORT:-28545}"
	-base-port "${TOLLGATE_DEMO_BASE_PORT:-28546}")

# alive PID NAME: the pid runs our binary NAME (guards against a reused pid).
alive() { [[ -r /proc/$1/cmdline ]] && tr '\0' ' ' </proc/"$1"/cmdline | grep -q "/$2 "; }

down() {
	if [[ -f "$PIDS" ]]; then
		# Stop in reverse start order: gateway, settlementd, chains.
		for name in caddy settlementd devchain; do
			pid=$(awk -v n="$name" '$1 == n {print $2}' "$PIDS")
			[[ -n "$pid" ]] && alive "$pid" "$name" || continue
			kill -TERM "$pid" 2>/dev/null || true
			for _ in $(seq 1 150); do alive "$pid" "$name" || break; sleep 0.1; done
			if alive "$pid" "$name"; then kill -KILL "$pid" 2>/dev/null || true; fi
			echo "stopped $name (pid $pid)"
		done
		rm -f "$PIDS" "$DEMO_DIR/gateway.url" "$DEMO_DIR/admin.token"
	else
		echo "no demo stack is running (no $PIDS)"
	fi
	services stop
}

running() {
	[[ -f "$PIDS" ]] || return 1
	while read -r name pid; do alive "$pid" "$name" && return 0; done <"$PIDS"
	return 1
}

case "$cmd" in
down)
	down
	exit 0
	;;
run | up) ;;
*)
	echo "usage: scripts/demo.sh [run|up|down]" >&2
	exit 2
	;;
esac

if running; then
	echo "a demo stack from 'make demo-up' is running ($(cat "$DEMO_DIR/gateway.url" 2>/dev/null)); 'make demo-down' first" >&2
	exit 1
fi

step "services: the demo's own Redis and PostgreSQL under $DEMO_DIR/services"
eval "$(services start)"
echo "REDIS_URL=$REDIS_URL"
echo "DATABASE_URL=$DATABASE_URL"

step "building $BIN/caddy (our Caddy), $BIN/settlementd, $BIN/devchain, $BIN/tollgate-demo"
started=$SECONDS
CGO_ENABLED=0 go build -trimpath -tags nobadger,nomysql,nopgx -o "$BIN/caddy" ./caddymodule/cmd/caddy
CGO_ENABLED=0 go build -trimpath -tags nobadger,nomysql,nopgx -o "$BIN/settlementd" ./settlementd
go build -o "$BIN/devchain" ./contracts/devchain
go build -o "$BIN/tollgate-demo" ./cmd/tollgate-demo
"$BIN/caddy" list-modules | grep -x http.handlers.tollgate
echo "built in $((SECONDS - started)) s"

if [[ "$cmd" == up ]]; then
	step "starting the stack (it keeps running; make demo-down stops it)"
	"$BIN/tollgate-demo" up -fresh -repo "$REPO" -run-dir "$DEMO_DIR" -bin "$BIN" "${ports[@]}"
	exit 0
fi

trap 'services stop >/dev/null 2>&1 || true' EXIT
step "the stack and the walkthrough (internal/walkthrough; the e2e test runs the same steps)"
"$BIN/tollgate-demo" run -fresh -repo "$REPO" -run-dir "$DEMO_DIR" -bin "$BIN" "${ports[@]}" ${TOLLGATE_DEMO_FLAGS:-}
