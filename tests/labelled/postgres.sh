#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# postgres.sh DIR [IDLE_S]: PostgreSQL 15 (Debian's postgresql-15) in the labelled set (README.md):
# a private cluster made with initdb, owned by the postgres user (the server refuses root) in a
# directory of its own (DIR may be closed to that user), the server under
#   latsnap record -v --json -t 50ms -o DIR/snaps -- runuser -u postgres -- postgres -D ...
# on a unix socket only; postgres-client.py's sessions, IDLE_S seconds idle, a fast shutdown;
# then scored as run.sh does.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${LATSNAP_BUILD:-$ROOT/build}
LATSNAP=${LATSNAP:-$BUILD/latsnap}
PY=/usr/bin/python3
dir=$1 idle=${2:-2}
THRESHOLD=${THRESHOLD:-50ms}
TIMEOUT=${LATSNAP_TIMEOUT:-120}
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
mkdir -p "$dir"
: >"$dir/gt.log"
export LTTNG_UST_REGISTER_TIMEOUT=0
pgrep -x lttng-sessiond >/dev/null || lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1
if [ -z "$PG_BIN" ] || ! id postgres >/dev/null 2>&1; then
	echo "postgres.sh: PostgreSQL or its postgres user is not installed" >&2
	exit 1
fi
pgdir=$(mktemp -d /tmp/latsnap-lab-pg.XXXXXX) || exit 1
trap 'rm -rf "$pgdir"' EXIT
chown postgres: "$pgdir"
if ! runuser -u postgres -- "$PG_BIN/initdb" -D "$pgdir/data" -A trust -U postgres \
	>"$dir/install.log" 2>&1; then
	echo "postgres.sh: initdb failed:" >&2
	cat "$dir/install.log" >&2
	exit 1
fi
# deadlock_timeout: a lock wait is one wait. At its default, 1 s, the backend's timer wakes it
# for a deadlock check and it waits again: a commit slowed past that (its WAL fsync on a busy
# disk) splits session B's wait in two, the first ended by a timer, not by its holder.
# shellcheck disable=SC2086 # RECORD_ARGS: more flags, split
timeout -k 5 "$TIMEOUT" "$LATSNAP" record -v --json -t "$THRESHOLD" ${RECORD_ARGS:-} \
	-o "$dir/snaps" -- runuser -u postgres -- "$PG_BIN/postgres" -D "$pgdir/data" -k "$pgdir" \
	-c listen_addresses= -c deadlock_timeout=10s >"$dir/out" 2>"$dir/err" &
rec=$!
"$PY" "$HERE/postgres-client.py" "$pgdir" "$dir/gt.log" "$idle" >"$dir/client.log" 2>&1
client=$?
runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$pgdir/data" stop -m fast -w >>"$dir/install.log" 2>&1
wait "$rec"
rc=$?
[ "$client" = 0 ] || { echo "postgres.sh: the client failed:" >&2; cat "$dir/client.log" >&2; }
"$PY" "$HERE/score.py" --name postgres --gt "$dir/gt.log" --out "$dir/out" --err "$dir/err" \
	--snaps "$dir/snaps" --result "$dir/result.json" >"$dir/score.txt"
exit "$rc"
