#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A server's housekeeping is not latency (issue 46): a thread of a process that serves, never in
# a unit of work, that sleeps or waits to its own timeout is idle, whatever it waits in.
#  a) housekeeper, a TCP server whose threads sleep (usleep backing off 21 -> 200 ms), wait on a
#     condition variable, poll and epoll_wait, each to its own timeout, recorded at -t 20ms while
#     a client sends three requests: no outlier of the housekeepers, which summary.json and
#     stderr list idle; the slow request's 100 ms usleep, inside its unit of work, is the one
#     outlier (clock_nanosleep, ~100 ms).
#  b) the same threads with no socket (BATCH=1), a program that serves nothing: its worker's
#     three usleeps of 100 ms are outliers, and so are the sleeping housekeeper's.
#  c) memcached 1.6 (Debian's), the issue's case: idle, a little load, idle again at -t 20ms:
#     no outlier; its LRU maintainer's usleeps are listed idle.
set -u
. "$(dirname "$0")/lib.sh"

require_record housekeeper
require memcached ss
no_ust_wait
T=20ms
HK_COMMS='["hk_sleep", "hk_cond", "hk_poll", "hk_epoll"]'

# --- a) the server -----------------------------------------------------------------------------
LOG=$TMPD/hk.log
WL_LOG=$LOG timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record -v --json -t $T -o "$TMPD/hk.d" -- \
	"$WL/housekeeper" >"$TMPD/hk.out" 2>"$TMPD/hk.err" &
L=$!
track_bg "$L"
for _ in $(seq 200); do
	grep -qs '^port ' "$LOG" && break
	sleep 0.05
done
PORT=$(wl_log_get "$LOG" port)
[ -n "$PORT" ] || bail_out "housekeeper did not say its port"
sleep 2 # its housekeepers go round, 21 ms to 200 ms
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
REPLIES=
for c in f s f; do
	printf '%s' "$c" >&3
	read -r -n 1 -t 10 r <&3 && REPLIES=$REPLIES$r
done
exec 3>&-
is "$REPLIES" fsf "the server answered the three requests"
sleep 1.5
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
printf q >&3
exec 3>&-
wait "$L"
is "$?" 0 "housekeeper: latsnap record exits 0"
dump_outliers "$TMPD/hk.out"

HK_TIDS=$(awk '$1 == "tid" && $2 ~ /^hk_/ { printf "%s%s", sep, $3; sep = "," }' "$LOG")
is "$(tr ',' '\n' <<<"$HK_TIDS" | grep -c .)" 4 "the four housekeepers ran ($HK_TIDS)"
between "$(grep -c '^round hk_sleep ' "$LOG")" 10 1000 \
	"hk_sleep went round its usleep many times (each over the threshold)"
is "$(jcount "$TMPD/hk.out" "select(.tid as \$t | [$HK_TIDS] | index(\$t))")" 0 \
	"no outlier of the housekeepers' threads"
is "$(jcount "$TMPD/hk.out" "select(.comm as \$c | $HK_COMMS | index(\$c))")" 0 \
	"no outlier named after a housekeeper"
PID=$(wl_log_get "$LOG" pid)
SLOW="select(.tid == $PID and .syscall == \"clock_nanosleep\")"
is "$(jcount "$TMPD/hk.out" "$NOT_LOADING")" 1 "one outlier in all: the slow request's sleep"
is "$(jcount "$TMPD/hk.out" "$SLOW")" 1 "the slow request's usleep, in clock_nanosleep, is reported"
between "$(jfirst "$TMPD/hk.out" "$SLOW" .duration_ns)" 95000000 300000000 \
	"... lasting ~100 ms"
read -r _ _ S0 S1 <<<"$(grep '^slow ' "$LOG" | head -n 1)"
is "$(jfirst "$TMPD/hk.out" "$SLOW" "(.start_ns <= ${S1:-0} and .end_ns >= ${S0:-0})")" true \
	"... at the time the server logged it"
is "$(jfirst "$TMPD/hk.out" "$SLOW" .cause)" '"Requested sleep (nanosleep)"' \
	"... a requested sleep"

SUMS=$(find "$TMPD/hk.d" -name summary.json | sort)
[ -n "$SUMS" ] || fail "the slow request's snapshot was written"
# Each place as its stack was read: "usleep in sleep_keeper (clock_nanosleep)" where the preload
# library unwound it, the innermost frame alone ("clock_nanosleep (clock_nanosleep)") where not.
# shellcheck disable=SC2086
is "$(jq -s -r '[.[].idle[]? | select(.comm == "hk_sleep" or .comm == "hk_cond") |
	"\(.comm) \(.site | capture("\\((?<s>[a-z_]+)\\)$").s)"] | unique | join(", ")' $SUMS)" \
	"hk_cond futex, hk_sleep clock_nanosleep" \
	"summary.json lists the housekeepers' timed waits idle (sites: $(jq -s -r '[.[].idle[]? | .site] | unique | join("; ")' $SUMS))"
grep -qE "^latsnap: record: idle, not latency: hk_sleep\[[0-9]+\] clock_nanosleep .*: a server's housekeeping" \
	"$TMPD/hk.err"
ok $? "-v says why hk_sleep's sleep is idle: a server's housekeeping"
grep -qE '^latsnap:   hk_sleep\[[0-9]+\] [0-9]+ x .*\(clock_nanosleep\), ' \
	"$TMPD/hk.err"
ok $? "stderr lists hk_sleep's sleeps idle" || diag_file "$TMPD/hk.err" "  stderr: " 30

# --- b) the same threads in a program that serves nothing --------------------------------------
WL_LOG=$TMPD/bn.log record_json "$TMPD/bn.out" "$TMPD/bn.err" -t $T -- "$WL/housekeeper" 1 3
is "$RC" 0 "housekeeper BATCH=1: latsnap record exits 0"
dump_outliers "$TMPD/bn.out"
BN='select(.comm == "bn_worker" and .syscall == "clock_nanosleep")'
is "$(jcount "$TMPD/bn.out" "$BN")" 3 "a batch worker's three usleeps are outliers"
is "$(jq -s "[.[] | $BN | .duration_ns >= 95000000 and .duration_ns <= 300000000] | all" \
	"$TMPD/bn.out")" true "... of ~100 ms each"
between "$(jcount "$TMPD/bn.out" 'select(.comm == "hk_sleep")')" 1 100 \
	"the sleeping housekeeper's usleeps too: no socket, no work, a batch job's sleeps"

# --- c) memcached ------------------------------------------------------------------------------
MPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --json -t $T -o "$TMPD/mc.d" -- \
	memcached -t 4 -U 0 -l 127.0.0.1 -p "$MPORT" -u nobody >"$TMPD/mc.out" 2>"$TMPD/mc.err" &
L=$!
track_bg "$L"
for _ in $(seq 200); do
	[ -n "$(ss -Hltn "sport = :$MPORT" 2>/dev/null)" ] && break
	sleep 0.05
done
# timeout's child is latsnap, whose child is memcached.
MC=$(pgrep -P "$(pgrep -P "$L" | head -n 1)" -x memcached)
[ -n "$MC" ] || bail_out "memcached did not start under latsnap record"
sleep 6 # idle: its LRU maintainer backs off in usleep
# Each command in one write: a request that comes in pieces (bash's printf writes line by line)
# keeps its worker waiting for the rest inside the unit of work, the client's latency.
ANSWERS=$(python3 - "$MPORT" <<'EOF_PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
f = s.makefile("rb")
for i in (1, 2, 3):
    s.sendall(b"set k%d 0 0 5\r\nhello\r\nget k%d\r\n" % (i, i))
    print(";".join(f.readline().decode().rstrip("\r\n") for _ in range(4)), end=";")
EOF_PY
)
is "$ANSWERS" "STORED;VALUE k1 0 5;hello;END;STORED;VALUE k2 0 5;hello;END;STORED;VALUE k3 0 5;hello;END;" \
	"memcached answered three sets and gets"
sleep 3 # idle again
kill -TERM "$MC"
wait "$L"
is "$?" 0 "memcached: latsnap record exits 0"
dump_outliers "$TMPD/mc.out"
loading_note "$TMPD/mc.out"
is "$(jcount "$TMPD/mc.out" "$NOT_LOADING")" 0 "memcached idle and lightly loaded: no outlier"
grep -qE '^latsnap:   mc-lrumaint\[[0-9]+\] [0-9]+ x usleep in ' "$TMPD/mc.err"
ok $? "memcached was tracked: its LRU maintainer's usleeps are listed idle" ||
	diag_file "$TMPD/mc.err" "  stderr: " 20

done_testing
