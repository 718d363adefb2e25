#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh PROGRAM DIR [IDLE_S] [ROUNDS]: one program of the labelled set (README.md) under
#   latsnap record -v --json -t 50ms -o DIR/snaps -- PROGRAM...
# driven by its client, then scored: DIR/gt.log (ground truth), DIR/out (record's stdout), DIR/err
# (its stderr), DIR/snaps, DIR/result.json and DIR/score.txt (score.py's). PROGRAM: cpool, python,
# java, go, node, mariadb, postgres; issue 47's: pylock, nodeexec, pyasync, ruby, cxxpool,
# rustpool, phpflock, housekeep, pyproc, rbcond, perlpipe. IDLE_S: seconds the program is left
# idle after its requests (default 2). Environment: LATSNAP_BUILD (default build/),
# LATSNAP_TIMEOUT (default 120 s), THRESHOLD, RECORD_ARGS (more flags for record: --include-idle
# shows every wait's frames).
# Exits with record's status (the score is in the files).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${LATSNAP_BUILD:-$ROOT/build}
LATSNAP=${LATSNAP:-$BUILD/latsnap}
PY=/usr/bin/python3 # Debian's: the one the packages are for
prog=$1 dir=$2 self='' client='' idle=${3:-2} rounds=${4:-2}
THRESHOLD=${THRESHOLD:-50ms}
TIMEOUT=${LATSNAP_TIMEOUT:-120}
mkdir -p "$dir"
: >"$dir/gt.log"
sock=$dir/sock
# lttng-ust in each program would wait for a session daemon that is slow to answer: not what is
# measured here.
export LTTNG_UST_REGISTER_TIMEOUT=0
export LAB_LOG=$dir/gt.log
# One session daemon for all: programs run side by side would each start one, and all but one
# would fail.
pgrep -x lttng-sessiond >/dev/null || lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1

case $prog in
cpool) cmd=("$BUILD/workloads/labpool" "$sock") ;;
python) cmd=("$PY" "$HERE/pyserver.py" "$sock") ;;
java) cmd=(java -cp "$BUILD/labelled" LabServer "$sock") ;;
go)
	# A goroutine's waits are timed with record --go-waits (uprobes, opt-in for their cost).
	cmd=("$BUILD/labelled/goserver" "$sock")
	RECORD_ARGS="--go-waits ${RECORD_ARGS:-}"
	;;
node) cmd=(node "$HERE/nodeserver.js" "$sock") ;;
pyasync) cmd=("$PY" "$HERE/pyasync.py" "$sock") ;;
ruby) cmd=(ruby "$HERE/rbserver.rb" "$sock") && export LAB_STAMP=1 ;;
# Self-driven: no client, the program writes its own window.
pylock) cmd=("$PY" "$HERE/pylock.py") self=1 ;;
nodeexec) cmd=(node "$HERE/nodeexec.js") self=1 ;;
cxxpool) cmd=("$BUILD/labelled/cxxpool") self=1 ;;
rustpool) cmd=("$BUILD/labelled/rustpool") self=1 ;;
phpflock) cmd=(php "$HERE/phpflock.php") self=1 ;;
pyproc) cmd=("$PY" "$HERE/pyproc.py") self=1 ;;
rbcond) cmd=(ruby "$HERE/rbcond.rb") self=1 ;;
perlpipe) cmd=(perl "$HERE/perlpipe.pl") self=1 ;;
# memcached-style: a server's housekeeping threads; its own log, turned into ground truth.
housekeep)
	cmd=("$BUILD/workloads/housekeeper")
	export WL_LOG=$dir/wl.log
	: >"$WL_LOG"
	client=("$PY" "$HERE/hkdrive.py" "$WL_LOG" "$dir/gt.log" "$rounds" "$idle")
	;;
mariadb) exec "$HERE/mariadb.sh" "$dir" "$idle" ;;
postgres) exec "$HERE/postgres.sh" "$dir" "$idle" ;;
*)
	echo "run.sh: unknown program $prog" >&2
	exit 2
	;;
esac

# shellcheck disable=SC2086 # RECORD_ARGS: more flags, split
timeout -k 5 "$TIMEOUT" "$LATSNAP" record -v --json -t "$THRESHOLD" ${RECORD_ARGS:-} \
	-o "$dir/snaps" -- "${cmd[@]}" >"$dir/out" 2>"$dir/err" &
rec=$!
status=0
if [ -z "${self:-}" ]; then
	[ -n "${client[*]:-}" ] || client=("$PY" "$HERE/client.py" "$sock" "$dir/gt.log" "$rounds" "$idle")
	"${client[@]}" >"$dir/client.log" 2>&1
	status=$?
fi
wait "$rec"
rc=$?
[ "$status" = 0 ] || { echo "run.sh: $prog: the client failed:" >&2; cat "$dir/client.log" >&2; }
"$PY" "$HERE/score.py" --name "$prog" --gt "$dir/gt.log" --out "$dir/out" --err "$dir/err" \
	--snaps "$dir/snaps" --result "$dir/result.json" >"$dir/score.txt"
exit "$rc"
