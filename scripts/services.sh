#!/usr/bin/env bash
# Throwaway Redis + PostgreSQL for Tollgate's integration tests.
#
#   scripts/services.sh start    # install if missing, start (or reuse), print export lines
#   scripts/services.sh env      # print the export lines only
#   scripts/services.sh stop     # stop both (tolerates already-stopped)
#   scripts/services.sh status   # say what runs (exit 0 only if both are up)
#
# Typical use:  eval "$(scripts/services.sh start)"; CI=1 go test ./...
#
# Everything lives under ${TOLLGATE_RUN_DIR:-<repo>/.run}; ports come from
# TOLLGATE_REDIS_PORT (16379) and TOLLGATE_PG_PORT (15432), so several
# checkouts / run dirs can run side by side. Nothing here is durable: fsync is
# off and Redis never persists, so a crash just means "start again".
#
# Only the two export lines go to stdout (so eval is safe); all progress goes
# to stderr.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
RUN_DIR="${TOLLGATE_RUN_DIR:-$REPO/.run}"
REDIS_PORT="${TOLLGATE_REDIS_PORT:-16379}"
PG_PORT="${TOLLGATE_PG_PORT:-15432}"
WAIT_SECS=30

PG_DB=tollgate
PG_ROLE=tollgate
PG_SUPERUSER=postgres # bootstrap superuser name given to initdb

REDIS_URL="redis://127.0.0.1:${REDIS_PORT}/0"
DATABASE_URL="postgres://${PG_ROLE}@127.0.0.1:${PG_PORT}/${PG_DB}?sslmode=disable"

log() { printf 'services: %s\n' "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}

for p in "$REDIS_PORT" "$PG_PORT"; do
	[[ "$p" =~ ^[0-9]+$ ]] || die "port '$p' is not a number"
done

# Absolute run dir, so every path below is independent of the caller's cwd.
abs_run_dir() {
	mkdir -p "$RUN_DIR"
	RUN_DIR="$(cd "$RUN_DIR" && pwd -P)"
	REDIS_PIDFILE="$RUN_DIR/redis.pid"
	REDIS_LOG="$RUN_DIR/redis.log"
	REDIS_DIR="$RUN_DIR/redis"
	PG_DIR="$RUN_DIR/pg"
	PG_DATA="$PG_DIR/data"
	PG_LOG="$PG_DIR/postgres.log"
}

# Serialise start/stop on one run dir: two engineers (or two `make` targets)
# calling start at once must not both run initdb. The daemons are launched
# with fds 3 and 9 closed: otherwise they would hold this lock forever and keep
# the caller's $(...) pipe (fd 3) open, hanging `eval "$(services.sh start)"`.
take_lock() {
	exec 9>"$RUN_DIR/.services.lock"
	if ! flock -w 120 9; then
		die "another services.sh holds $RUN_DIR/.services.lock for >120s"
	fi
}

print_env() {
	printf 'export REDIS_URL=%s\n' "$REDIS_URL"
	printf 'export DATABASE_URL=%s\n' "$DATABASE_URL"
}

# ---------------------------------------------------------------- installing

APT_UPDATED=0
apt_install() {
	local sudo=()
	if [[ $(id -u) -ne 0 ]]; then
		command -v sudo >/dev/null || die "need root (or sudo) to apt-get install $*"
		sudo=(sudo)
	fi
	if [[ $APT_UPDATED -eq 0 ]]; then
		log "apt-get update"
		"${sudo[@]}" apt-get update >&2
		APT_UPDATED=1
	fi
	log "apt-get install -y $*"
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y "$@" >&2
}

# Sets PG_BIN to a directory holding initdb, pg_ctl, pg_isready and psql.
# An existing data dir pins the major version (a v15 cluster cannot be started
# by v16 binaries), otherwise PATH wins, then the newest /usr/lib/postgresql.
find_pg_bin() {
	PG_BIN=""
	local d want=""
	[[ -f "$PG_DATA/PG_VERSION" ]] && want="$(cat "$PG_DATA/PG_VERSION")"
	if [[ -n "$want" && -x "/usr/lib/postgresql/$want/bin/pg_ctl" ]]; then
		PG_BIN="/usr/lib/postgresql/$want/bin"
		return 0
	fi
	if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
		d="$(dirname "$(readlink -f "$(command -v pg_ctl)")")"
		if [[ -x "$d/initdb" && -x "$d/pg_isready" && -x "$d/psql" ]]; then
			PG_BIN="$d"
			return 0
		fi
	fi
	# Version dirs are plain numbers, so word-splitting the sorted list is safe.
	# shellcheck disable=SC2012
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [[ -x "$d/initdb" && -x "$d/pg_ctl" ]]; then
			PG_BIN="$d"
			return 0
		fi
	done
	return 1
}

ensure_installed() {
	if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
		apt_install redis-server
	fi
	if ! find_pg_bin; then
		apt_install postgresql
		find_pg_bin || die "postgresql installed but initdb/pg_ctl not found"
	fi
	# pg_isready/psql normally sit next to initdb; fall back to PATH.
	PG_ISREADY="$PG_BIN/pg_isready"
	[[ -x "$PG_ISREADY" ]] || PG_ISREADY="$(command -v pg_isready)" || die "pg_isready not found"
	PSQL="$PG_BIN/psql"
	[[ -x "$PSQL" ]] || PSQL="$(command -v psql)" || die "psql not found"
}

# ---------------------------------------------------------------- redis

# redis-cli waits forever on a hung (e.g. SIGSTOPped) server: bound it.
rcli() { timeout 5 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "$@"; }

redis_ping() { [[ "$(rcli ping 2>/dev/null)" == "PONG" ]]; }

# PID of the redis answering on our port (empty if none).
redis_served_pid() {
	{ rcli info server 2>/dev/null || true; } |
		tr -d '\r' | sed -n 's/^process_id://p'
}

pidfile_pid() { if [[ -s "$1" ]]; then tr -dc '0-9' <"$1"; fi; }

# A zombie (exited, not yet reaped by a slow PID 1) counts as gone.
pid_alive() {
	[[ -n "$1" ]] && kill -0 "$1" 2>/dev/null &&
		[[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]]
}

start_redis() {
	local pid
	pid="$(pidfile_pid "$REDIS_PIDFILE")"
	if redis_ping; then
		if [[ "$(redis_served_pid)" == "$pid" ]]; then
			log "redis: reusing running instance on 127.0.0.1:$REDIS_PORT (pid $pid)"
		else
			log "redis: port $REDIS_PORT already answers but was not started from $RUN_DIR; reusing it"
		fi
		return 0
	fi
	# Not answering. A live pid from our pidfile is a hung/half-dead instance
	# of ours: SIGKILL it (only if it really is a redis-server; nothing is
	# persisted, and SIGTERM would not reach a stopped process). Start fresh.
	if pid_alive "$pid" && grep -q redis "/proc/$pid/comm" 2>/dev/null; then
		log "redis: pid $pid is not answering on $REDIS_PORT; killing it"
		kill -9 "$pid" 2>/dev/null || true
		wait_gone "$pid" || die "could not kill hung redis pid $pid"
	fi
	[[ -e "$REDIS_PIDFILE" ]] && log "redis: removing stale pidfile" && rm -f "$REDIS_PIDFILE"
	mkdir -p "$REDIS_DIR"
	log "redis: starting on 127.0.0.1:$REDIS_PORT (log $REDIS_LOG)"
	redis-server --port "$REDIS_PORT" --bind 127.0.0.1 \
		--save "" --appendonly no \
		--daemonize yes --pidfile "$REDIS_PIDFILE" --logfile "$REDIS_LOG" \
		--dir "$REDIS_DIR" --databases 16 >&2 3>&- 9>&-
	local i
	for ((i = 0; i < WAIT_SECS * 10; i++)); do
		redis_ping && {
			log "redis: ready"
			return 0
		}
		sleep 0.1
	done
	tail -n 20 "$REDIS_LOG" >&2 || true
	die "redis did not answer PING on port $REDIS_PORT within ${WAIT_SECS}s"
}

stop_redis() {
	local pid served
	pid="$(pidfile_pid "$REDIS_PIDFILE")"
	served="$(redis_served_pid)"
	if [[ -n "$served" && "$served" != "$pid" ]]; then
		# Probably another run dir's instance on the same port: not ours to stop.
		log "redis: port $REDIS_PORT is served by pid $served, not started from $RUN_DIR; leaving it"
		return 0
	fi
	if [[ -n "$served" ]]; then
		log "redis: shutting down pid $pid"
		rcli shutdown nosave >/dev/null 2>&1 || true
	elif pid_alive "$pid" && grep -q redis "/proc/$pid/comm" 2>/dev/null; then
		log "redis: pid $pid not answering; killing it"
		kill -9 "$pid" 2>/dev/null || true
	else
		log "redis: not running"
	fi
	if pid_alive "$pid"; then
		wait_gone "$pid" || {
			log "redis: pid $pid still alive, SIGKILL"
			kill -9 "$pid" 2>/dev/null || true
		}
	fi
	rm -f "$REDIS_PIDFILE"
}

wait_gone() {
	local i
	for ((i = 0; i < WAIT_SECS * 10; i++)); do
		pid_alive "$1" || return 0
		sleep 0.1
	done
	return 1
}

# ---------------------------------------------------------------- postgres

# initdb and pg_ctl refuse to run as root, so as root everything server-side
# runs as the `postgres` system user, which must own the cluster directory.
pg_as_owner() {
	if [[ $(id -u) -eq 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

prepare_pg_dir() {
	mkdir -p "$PG_DIR"
	if [[ $(id -u) -eq 0 ]]; then
		if ! id postgres >/dev/null 2>&1; then
			log "postgres: creating system user 'postgres'"
			useradd --system --home-dir /nonexistent --shell /usr/sbin/nologin postgres
		fi
		chown postgres: "$PG_DIR"
		# The postgres user must be able to reach the run dir (e.g. not under /root).
		runuser -u postgres -- test -w "$PG_DIR" ||
			die "user postgres cannot write $PG_DIR; set TOLLGATE_RUN_DIR to a path it can reach"
	fi
	# Unix sockets have a ~107-byte path limit; deep run dirs fall back to /tmp.
	PG_SOCK="$PG_DIR/sock"
	if ((${#PG_SOCK} + 20 > 100)); then
		PG_SOCK="/tmp/tollgate-pg-$(printf '%s' "$RUN_DIR" | cksum | cut -d' ' -f1)"
	fi
	mkdir -p "$PG_SOCK"
	[[ $(id -u) -eq 0 ]] && chown postgres: "$PG_SOCK"
	return 0
}

pg_ctl_() { pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DATA" "$@"; }

pg_postmaster_pid() { head -n1 "$PG_DATA/postmaster.pid" 2>/dev/null | tr -dc '0-9' || true; }

# Our own liveness test instead of `pg_ctl status`: that one trusts kill -0,
# which also succeeds for the zombie of a crashed postmaster (PID 1 here reaps
# slowly), and for an unrelated process that reused a stale pid.
pg_running() {
	local pid
	pid="$(pg_postmaster_pid)"
	pid_alive "$pid" && grep -q '^postgres' "/proc/$pid/comm" 2>/dev/null
}

pg_ready() { "$PG_ISREADY" -q -h 127.0.0.1 -p "$PG_PORT" -t 2 >/dev/null 2>&1; }

wait_pg_ready() {
	local i
	for ((i = 0; i < WAIT_SECS * 10; i++)); do
		pg_ready && return 0
		sleep 0.1
	done
	return 1
}

sql_quote() { printf "'%s'" "${1//\'/\'\'}"; }

init_pg() {
	if [[ -d "$PG_DATA" && ! -f "$PG_DATA/PG_VERSION" ]]; then
		log "postgres: removing half-initialised $PG_DATA"
		rm -rf "$PG_DATA"
	fi
	[[ -f "$PG_DATA/PG_VERSION" ]] && return 0
	log "postgres: initdb $PG_DATA ($PG_BIN)"
	pg_as_owner "$PG_BIN/initdb" -D "$PG_DATA" -U "$PG_SUPERUSER" \
		--auth-local=trust --auth-host=trust -E UTF8 --no-locale --no-sync >&2
	# Throwaway cluster: trust on the socket and loopback only.
	pg_as_owner tee "$PG_DATA/pg_hba.conf" >/dev/null <<-'EOF'
		# Tollgate throwaway test cluster: trust, local socket + loopback only.
		local all all trust
		host  all all 127.0.0.1/32 trust
		host  all all ::1/128 trust
	EOF
	printf "\ninclude_if_exists = 'tollgate.conf'\n" | pg_as_owner tee -a "$PG_DATA/postgresql.conf" >/dev/null
}

# Rewritten on every start so a changed port / run dir takes effect.
write_pg_conf() {
	pg_as_owner tee "$PG_DATA/tollgate.conf" >/dev/null <<-EOF
		# Written by scripts/services.sh on each start; durability is off on purpose.
		listen_addresses = '127.0.0.1'
		port = $PG_PORT
		unix_socket_directories = $(sql_quote "$PG_SOCK")
		max_connections = 200
		fsync = off
		synchronous_commit = off
		full_page_writes = off
		logging_collector = off
	EOF
}

start_pg() {
	prepare_pg_dir
	init_pg
	local i pid
	if pg_running; then
		# Up: give a cluster that is still starting/recovering time to accept
		# connections, but stop waiting as soon as it dies.
		for ((i = 0; i < WAIT_SECS * 10; i++)); do
			if pg_ready || ! pg_running; then break; fi
			sleep 0.1
		done
		if pg_ready; then
			log "postgres: reusing running cluster on 127.0.0.1:$PG_PORT"
		elif pg_running; then
			log "postgres: cluster runs but is not ready on port $PG_PORT; restarting"
			write_pg_conf
			pg_ctl_ -l "$PG_LOG" -w -t "$WAIT_SECS" -m fast restart >&2 3>&- 9>&-
		fi
	fi
	if ! pg_running; then
		if pg_ready; then
			die "port $PG_PORT already has a PostgreSQL that is not $PG_DATA; pick another TOLLGATE_PG_PORT"
		fi
		# After a crash the postmaster may linger as a zombie, and postgres
		# refuses to start while kill -0 still finds the pid in postmaster.pid.
		pid="$(pg_postmaster_pid)"
		if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
			log "postgres: waiting for crashed postmaster $pid to be reaped"
			for ((i = 0; i < WAIT_SECS * 10; i++)); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
		fi
		write_pg_conf
		log "postgres: starting on 127.0.0.1:$PG_PORT (log $PG_LOG)"
		# postgres itself replaces a stale postmaster.pid whose process is gone.
		if ! pg_ctl_ -l "$PG_LOG" -w -t "$WAIT_SECS" start >&2 3>&- 9>&-; then
			tail -n 20 "$PG_LOG" >&2 || true
			die "postgres did not start"
		fi
	fi
	wait_pg_ready || die "postgres not ready on port $PG_PORT within ${WAIT_SECS}s"

	local psql=("$PSQL" -X -q -h 127.0.0.1 -p "$PG_PORT" -U "$PG_SUPERUSER" -d postgres -v ON_ERROR_STOP=1 -tA)
	if [[ -z "$("${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = '$PG_ROLE'")" ]]; then
		log "postgres: creating role $PG_ROLE"
		# Superuser so tests can CREATE/DROP their own databases.
		"${psql[@]}" -c "CREATE ROLE $PG_ROLE LOGIN SUPERUSER" >&2
	fi
	if [[ -z "$("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" ]]; then
		log "postgres: creating database $PG_DB"
		"${psql[@]}" -c "CREATE DATABASE $PG_DB OWNER $PG_ROLE" >&2
	fi
	log "postgres: ready"
}

stop_pg() {
	if [[ ! -f "$PG_DATA/PG_VERSION" ]]; then
		log "postgres: no cluster in $PG_DATA"
		return 0
	fi
	if pg_running; then
		log "postgres: stopping"
		pg_ctl_ -w -t "$WAIT_SECS" -m fast stop >&2 || pg_ctl_ -w -t "$WAIT_SECS" -m immediate stop >&2
	else
		log "postgres: not running"
	fi
}

# ---------------------------------------------------------------- commands

cmd_start() {
	# From here on anything a tool prints goes to stderr; fd 3 is the real stdout.
	exec 3>&1 1>&2
	abs_run_dir
	take_lock
	ensure_installed
	start_redis
	start_pg
	print_env >"$RUN_DIR/services.env"
	log "wrote $RUN_DIR/services.env"
	print_env >&3
}

cmd_stop() {
	exec 3>&1 1>&2
	abs_run_dir
	take_lock
	if command -v redis-cli >/dev/null; then stop_redis; else log "redis: not installed"; fi
	if find_pg_bin; then stop_pg; else log "postgres: not installed"; fi
}

cmd_status() {
	abs_run_dir
	local ok=0 pid
	if command -v redis-cli >/dev/null && redis_ping; then
		pid="$(redis_served_pid)"
		if [[ "$pid" == "$(pidfile_pid "$REDIS_PIDFILE")" ]]; then
			echo "redis:    running on 127.0.0.1:$REDIS_PORT (pid $pid, $RUN_DIR)"
		else
			echo "redis:    port $REDIS_PORT answers (pid $pid) but not from $RUN_DIR"
		fi
	else
		echo "redis:    not running on 127.0.0.1:$REDIS_PORT"
		ok=1
	fi
	if find_pg_bin && pg_running; then
		if "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -t 2; then
			echo "postgres: running on 127.0.0.1:$PG_PORT (pid $(head -n1 "$PG_DATA/postmaster.pid"), $PG_DATA)"
		else
			echo "postgres: process up for $PG_DATA but not accepting connections on port $PG_PORT"
			ok=1
		fi
	else
		echo "postgres: not running ($PG_DATA)"
		ok=1
	fi
	return $ok
}

case "${1:-}" in
start) cmd_start ;;
env) print_env ;;
stop) cmd_stop ;;
status) cmd_status ;;
*)
	echo "usage: $0 {start|env|stop|status}" >&2
	exit 2
	;;
esac
