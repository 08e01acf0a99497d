#!/usr/bin/env bash
# A throwaway Redis Cluster for Tollgate's cluster tests: three masters with
# one replica each, Debian's redis-server on loopback ports.
#
#   scripts/cluster.sh start    # install if missing, start, wait for cluster_state:ok, print the export line
#   scripts/cluster.sh env      # print the export line only
#   scripts/cluster.sh stop     # stop every node, remove the data (tolerates already-stopped)
#   scripts/cluster.sh status   # CLUSTER NODES of the first reachable node (exit 0 only if the state is ok)
#
# Settings (environment):
#   TOLLGATE_CLUSTER_DIR           data, logs and pid files (default ${TOLLGATE_RUN_DIR:-<repo>/.run}/cluster)
#   TOLLGATE_CLUSTER_PORT          first port (default 17000); nodes use PORT..PORT+5, their cluster bus +10000
#   TOLLGATE_CLUSTER_NODE_TIMEOUT  cluster-node-timeout in ms (default 1000): how long a silent master
#                                  stays a master before its replica is promoted
#
# Each node lives in <dir>/<port>/ (redis.pid, redis.log, nodes.conf). Nothing
# persists (no RDB, no AOF): like services.sh, a crash means "start again".
# Only the export line goes to stdout; progress goes to stderr.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
DIR="${TOLLGATE_CLUSTER_DIR:-${TOLLGATE_RUN_DIR:-$REPO/.run}/cluster}"
BASE="${TOLLGATE_CLUSTER_PORT:-17000}"
NODE_TIMEOUT="${TOLLGATE_CLUSTER_NODE_TIMEOUT:-1000}"
NODES=6
WAIT_SECS=30

log() { printf 'cluster: %s\n' "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}

[[ "$BASE" =~ ^[0-9]+$ ]] || die "TOLLGATE_CLUSTER_PORT '$BASE' is not a number"
[[ "$NODE_TIMEOUT" =~ ^[0-9]+$ ]] || die "TOLLGATE_CLUSTER_NODE_TIMEOUT '$NODE_TIMEOUT' is not a number"
((BASE + NODES - 1 + 10000 <= 65535)) || die "TOLLGATE_CLUSTER_PORT $BASE is too high (the cluster bus uses port+10000)"

ports() { seq "$BASE" $((BASE + NODES - 1)); }

# The URL go-redis's ParseClusterURL reads: the first node in the authority,
# the others as addr= parameters (any one of them is enough to find the rest,
# listing all survives the first one being down).
url() {
	local u="redis://127.0.0.1:$BASE" p
	local sep='?'
	for p in $(ports); do
		((p == BASE)) && continue
		u+="${sep}addr=127.0.0.1:$p"
		sep='&'
	done
	printf '%s' "$u"
}

print_env() { printf 'export TOLLGATE_CLUSTER_URL=%s\n' "$(url)"; }

install() {
	command -v redis-server >/dev/null && command -v redis-cli >/dev/null && return
	local sudo=()
	if [[ $(id -u) -ne 0 ]]; then
		command -v sudo >/dev/null || die "need root (or sudo) to apt-get install redis-server"
		sudo=(sudo)
	fi
	log "installing redis-server with apt-get"
	"${sudo[@]}" apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq redis-server redis-tools >&2
}

up() { redis-cli -p "$1" ping 2>/dev/null | grep -q PONG; }

wait_for() { # wait_for <what> <command...>
	local what=$1 i
	shift
	for ((i = 0; i < WAIT_SECS * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	die "$what did not happen within ${WAIT_SECS}s (logs under $DIR)"
}

state_ok() { redis-cli -p "$1" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; }

# Every node agrees: state ok and three masters with slots, seen from each.
all_ok() {
	local p
	for p in $(ports); do
		state_ok "$p" || return 1
		# flags are field 3 ("myself,master"); a master owning slots has a 9th field
		[[ $(redis-cli -p "$p" cluster nodes 2>/dev/null | awk '$3 ~ /master/ && $3 !~ /fail/ && NF >= 9' | wc -l) -eq 3 ]] || return 1
	done
}

start() {
	install
	mkdir -p "$DIR"
	DIR="$(cd "$DIR" && pwd -P)"
	exec 9>"$DIR/.lock"
	flock -w 120 9 || die "another cluster.sh holds $DIR/.lock"
	local p fresh=0
	for p in $(ports); do
		if up "$p"; then
			continue
		fi
		rm -rf "${DIR:?}/$p"
		mkdir -p "$DIR/$p"
		fresh=$((fresh + 1))
		# cluster-replica-validity-factor 0: a replica is promoted however long
		# it was cut off (the tests kill masters on purpose); no persistence;
		# a replica's first sync starts at once (Redis waits 5 s by default, and
		# a test may fail a master over sooner: its replica would be empty).
		redis-server --port "$p" --bind 127.0.0.1 --protected-mode no \
			--cluster-enabled yes --cluster-config-file nodes.conf \
			--cluster-node-timeout "$NODE_TIMEOUT" --cluster-replica-validity-factor 0 \
			--dir "$DIR/$p" --daemonize yes --pidfile "$DIR/$p/redis.pid" --logfile "$DIR/$p/redis.log" \
			--save '' --appendonly no --repl-diskless-sync-delay 0 9>&- >&2
	done
	for p in $(ports); do
		wait_for "redis on port $p answering" up "$p"
	done
	if ((fresh == NODES)); then
		local addrs=()
		for p in $(ports); do addrs+=("127.0.0.1:$p"); done
		log "creating the cluster on ports $BASE-$((BASE + NODES - 1))"
		redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes >"$DIR/create.log" 2>&1 ||
			die "redis-cli --cluster create failed: $(tail -5 "$DIR/create.log")"
	elif ((fresh > 0)); then
		die "only some nodes of $DIR were running; run '$0 stop' first"
	fi
	wait_for "cluster_state:ok on every node" all_ok
	log "up: $(url)"
	print_env
}

stop() {
	[[ -d "$DIR" ]] || return 0
	local p pid pids=()
	for p in $(ports); do
		[[ -f "$DIR/$p/redis.pid" ]] || continue
		pid=$(cat "$DIR/$p/redis.pid")
		# Only a redis-server of this directory: the pid file may be stale.
		if [[ -n "$pid" ]] && grep -q redis-server "/proc/$pid/cmdline" 2>/dev/null; then
			kill -9 "$pid" 2>/dev/null || true
			pids+=("$pid")
		fi
	done
	for pid in "${pids[@]}"; do
		wait_for "redis $pid exiting" test ! -e "/proc/$pid/cmdline" -o ! -s "/proc/$pid/cmdline"
	done
	rm -rf "$DIR"
	log "stopped"
}

status() {
	local p
	for p in $(ports); do
		if up "$p"; then
			redis-cli -p "$p" cluster nodes
			state_ok "$p"
			return
		fi
	done
	die "no node answers"
}

case "${1:-}" in
start) start ;;
env) print_env ;;
stop) stop ;;
status) status ;;
*) die "usage: $0 start|env|stop|status" ;;
esac
