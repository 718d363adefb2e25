#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# mariadb.sh DIR [IDLE_S]: MariaDB 10.11 (Debian's mariadb-server) in the labelled set (README.md):
# a private datadir under DIR made with mariadb-install-db, the server under
#   latsnap record -v --json -t 50ms -o DIR/snaps -- mariadbd --no-defaults --user=root ...
# on a unix socket in DIR (no network), performance_schema on (it names each session's thread);
# mariadb-client.py's sessions, IDLE_S seconds idle, SHUTDOWN; then scored as run.sh does.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${LATSNAP_BUILD:-$ROOT/build}
LATSNAP=${LATSNAP:-$BUILD/latsnap}
PY=/usr/bin/python3
dir=$1 idle=${2:-2}
THRESHOLD=${THRESHOLD:-50ms}
TIMEOUT=${LATSNAP_TIMEOUT:-120}
mkdir -p "$dir"
: >"$dir/gt.log"
export LTTNG_UST_REGISTER_TIMEOUT=0
pgrep -x lttng-sessiond >/dev/null || lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1
if ! mariadb-install-db --no-defaults --user=root --datadir="$dir/data" \
	--auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1; then
	echo "mariadb.sh: mariadb-install-db failed:" >&2
	cat "$dir/install.log" >&2
	exit 1
fi
# shellcheck disable=SC2086 # RECORD_ARGS: more flags, split
timeout -k 5 "$TIMEOUT" "$LATSNAP" record -v --json -t "$THRESHOLD" ${RECORD_ARGS:-} \
	-o "$dir/snaps" -- mariadbd --no-defaults --user=root --datadir="$dir/data" --socket="$dir/sock" \
	--skip-networking --pid-file="$dir/mariadbd.pid" --log-error="$dir/mariadbd.err" \
	--performance-schema=ON --innodb-buffer-pool-size=32M >"$dir/out" 2>"$dir/err" &
rec=$!
"$PY" "$HERE/mariadb-client.py" "$dir/sock" "$dir/gt.log" "$idle" >"$dir/client.log" 2>&1
client=$?
wait "$rec"
rc=$?
[ "$client" = 0 ] || { echo "mariadb.sh: the client failed:" >&2; cat "$dir/client.log" >&2; }
"$PY" "$HERE/score.py" --name mariadb --gt "$dir/gt.log" --out "$dir/out" --err "$dir/err" \
	--snaps "$dir/snaps" --result "$dir/result.json" >"$dir/score.txt"
exit "$rc"
