#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The labelled set (tests/labelled/README.md, issue 29): programs nobody here wrote, and a C pool
# of ours, under `latsnap record -t 50ms` with snapshots, each with waits of known kind: inside a
# request (latency: a lock held by another request, a sleep) and waiting for the next request
# (idle: pool workers, the runtimes' and the server's background threads). Each program logs the
# waits it makes (thread, kind, times); tests/labelled/score.py scores latsnap's outliers against
# them. Asserted per program and overall: precision and recall of "latency" at least 0.95, and no
# idle thread among the outliers `latsnap report` counts (causes and stalls) of MariaDB, the JVM
# and Go left idle (LAB_IDLE_S seconds here; make bench's section 10 leaves them 60 s).
#  a) the C pool (labpool), Python 3.11 (threading.Lock, time.sleep, queue.get), Node (a sync
#     Atomics.wait on a worker_threads holder, a sync sleep, the idle event loop), Go 1.19
#     (sync.Mutex, time.Sleep, workers on a channel), OpenJDK 17 (a contended synchronized block,
#     Thread.sleep, an idle fixed thread pool): in two lanes side by side;
#  b) MariaDB 10.11 in a third (its own datadir and socket): a row-lock wait (~0.9 s) inside an
#     UPDATE, SELECT SLEEP(1.0) inside the lock holder's transaction, SELECT SLEEP(0.3);
#     report's Longest waits name the row-lock wait's cause and its holder (session A); then
#     PostgreSQL 15 in the same lane, the same sessions (its backends wait for a row lock and in
#     pg_sleep() on their latch, in epoll_wait: a syscall of the idle list, inside a request);
#  c) issue 47's programs (tests/labelled/README.md: a design half, pylock nodeexec pyasync ruby
#     rustpool phpflock, and a held-out half, cxxpool housekeep pyproc rbcond perlpipe), in the
#     lanes;
#  d) the whole set.
set -u
. "$(dirname "$0")/lib.sh"

require_record labpool housekeeper
require java node mariadbd mariadb-install-db lttng-sessiond runuser ruby php perl
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || skip_all "needs PostgreSQL (postgresql-15)"
id postgres >/dev/null 2>&1 || skip_all "needs PostgreSQL's postgres user (postgresql-15)"
LAB=$ROOT/tests/labelled
PY=/usr/bin/python3
"$PY" -c 'import pymysql' 2>/dev/null ||
	skip_all "needs Debian's python3 ($PY) with python3-pymysql"
"$PY" -c 'import psycopg2' 2>/dev/null ||
	skip_all "needs Debian's python3 ($PY) with python3-psycopg2"
for f in "$BUILD/labelled/LabServer.class" "$BUILD/labelled/goserver" "$BUILD/labelled/cxxpool" \
	"$BUILD/labelled/rustpool"; do
	[ -e "$f" ] || skip_all "$f not built (run make check)"
done
require_lttng
export LATSNAP_BUILD=$BUILD
LAB_IDLE_S=${LAB_IDLE_S:-2}
MIN=0.95

t0=$(date +%s)
# Three lanes side by side, each program alone under its own `latsnap record`: MariaDB (most of
# its run is starting, stopping and idle); the C pool, Node and the JVM; Python and Go. A wait
# that the machine's load stretched is a wait for a CPU, which the scorer leaves out.
lane() {
	local p
	for p in "$@"; do
		"$LAB/run.sh" "$p" "$TMPD/$p" "$LAB_IDLE_S" >"$TMPD/$p.run" 2>&1
		echo "$?" >"$TMPD/$p.rc"
	done
}
lane mariadb postgres rustpool phpflock housekeep &
L1=$!
lane cpool node java nodeexec cxxpool rbcond &
L2=$!
track_bg "$L1"
track_bg "$L2"
lane python go pylock pyasync ruby pyproc perlpipe
wait "$L1" "$L2"
declare -A RUN_RC
for p in cpool python node go java mariadb postgres pylock nodeexec pyasync ruby cxxpool rustpool \
	phpflock housekeep pyproc rbcond perlpipe; do
	RUN_RC[$p]=$(cat "$TMPD/$p.rc" 2>/dev/null || echo none)
done
diag "the set ran in $(($(date +%s) - t0)) s"

# A program whose goal is not met is named in TODO_KEYS (PROGRAM:WHAT, or set:WHAT): its check is
# then TAP TODO, reported with its numbers and misjudged waits without failing the suite. Issue
# 47's second held-out half was measured once (tests/labelled/README.md: pyproc 0.714 precision,
# rbcond 0.2 recall, perlpipe 0.8 and 0.667), then the policy was taught what it got wrong (a
# forked worker process's main thread is a worker; a lock across processes whose holder waited
# for work; Ruby's sleeps told by the thread's status). What is still missed, on the BPF side:
# Nothing now: rbcond's main thread's sleeps and joins in ppoll (the thread that owns Ruby's
# signal pipe sleeps there) are no longer quieted in a process whose preload library says it runs
# Ruby, and are told by the thread's status (recall 0.6 -> 1); perlpipe's parent's select for its
# workers' answers is not quieted either: a poll or select that the thread it woke last ends
# waits for an answer (recall 0.667 -> 1).
TODO_KEYS=" "
# goal KEY VALUE MSG: VALUE >= MIN, a TODO check where KEY is in TODO_KEYS.
goal() {
	local key=$1 value=$2
	shift 2
	if [[ "$TODO_KEYS" == *" $key "* ]]; then
		todo_ok "awk 'BEGIN { exit !($value >= $MIN) }'" "$* (not met yet)"
	else
		between "$value" $MIN 1 "$*"
	fi
}

# check PROGRAM EXPECTED_LATENCY_WAITS IDLE_CHECK
check() {
	local p=$1 n=$2 idle=$3 r=$TMPD/$1/result.json
	is "${RUN_RC[$p]}" 0 "$p: latsnap record -- $p exits 0" ||
		{ diag_file "$TMPD/$p.run" "  run: "; diag_file "$TMPD/$p/err" "  stderr: " 30; }
	diag_file "$TMPD/$p/score.txt" "  "
	if [ ! -s "$r" ]; then
		fail "$p: scored"
		return
	fi
	# Ruby's GVL waits are as long as the computation's timeslices: their number varies. A
	# loaded machine may stretch a short labelled wait (a 40 ms sleep, a process's start) past
	# the 65 ms that make it count: at least the program's long waits, then.
	[ "$n" = - ] || ok "[ $(jq '.tp + .fn' "$r") -ge $n ]" \
		"$p: its $n latency waits logged (the run went as it should; $(jq '.tp + .fn' "$r") counted)" ||
		diag_file "$TMPD/$p/gt.log" "  gt: " 40
	goal "$p:precision" "$(jq .precision "$r")" "$p: precision of latency >= $MIN"
	goal "$p:recall" "$(jq .recall "$r")" "$p: recall of latency >= $MIN"
	if [ "$idle" = idle ] && [[ "$TODO_KEYS" == *" $p:idle "* ]]; then
		todo_ok "[ \"$(jq '.report_idle_threads | length' "$r")\" = 0 ]" \
			"$p idle ${LAB_IDLE_S} s: no idle thread among report's causes and stalls (not met yet)"
		diag "  $(jq -c '.report_idle_threads' "$r")"
	elif [ "$idle" = idle ]; then
		is "$(jq '.report_idle_threads | length' "$r")" 0 \
			"$p idle ${LAB_IDLE_S} s: no idle thread among report's causes and stalls" ||
			diag "  $(jq -c '.report_idle_threads' "$r")"
	fi
	run_latsnap "$TMPD/$p.report" "$TMPD/$p.report.err" report "$TMPD/$p/snaps"
	[ "$RC" = 0 ] || diag "$p: latsnap report exited $RC: $(head -c 300 "$TMPD/$p.report.err")"
}

check cpool 6 -
check python 6 -
check node 10 -
check go 6 idle
check java 6 idle
check mariadb 3 idle
check postgres 3 idle
check pylock 8 -
check nodeexec 4 -
check pyasync 4 -
check ruby - -
check cxxpool 12 -
check rustpool 12 -
check phpflock 8 -
check housekeep 2 -
check pyproc 10 -
check rbcond 10 -
check perlpipe 12 -

# b) MariaDB's row-lock wait in report: with its cause and its holder, session A (in its own
# SLEEP inside the transaction that holds the row), in the Longest waits.
A_TID=$(awk '$1 == "thread" && $3 == "mariadb_session_a" { print $2 }' "$TMPD/mariadb/gt.log")
B_TID=$(awk '$1 == "thread" && $3 == "mariadb_session_b" { print $2 }' "$TMPD/mariadb/gt.log")
run_latsnap "$TMPD/mdb.report.json" "$TMPD/mdb.report.err" report --json "$TMPD/mariadb/snaps"
ROW=$(jq -c --argjson b "${B_TID:-0}" '[.longest[] | select(.tid == $b)] | max_by(.duration_ns)' \
	"$TMPD/mdb.report.json" 2>/dev/null)
like "$(jq -r '.cause' <<<"$ROW" 2>/dev/null)" "Row lock wait|Storage engine wait" \
	"mariadb: report names session B's row-lock wait as one" || diag "  $ROW"
is "$(jq -r '.held_up_by.tid' <<<"$ROW" 2>/dev/null)" "${A_TID:-none}" \
	"mariadb: report's Longest waits name its holder, session A ($A_TID)" || diag "  $ROW"
is "$(jq -r '.held_up_by.cause' <<<"$ROW" 2>/dev/null)" "Requested sleep (SQL SLEEP())" \
	"mariadb: the holder was in its SLEEP() meanwhile" || diag "  $ROW"

# b) PostgreSQL's row-lock wait in report: its cause, and its holder, session A, in pg_sleep().
A_TID=$(awk '$1 == "thread" && $3 == "postgres_session_a" { print $2 }' "$TMPD/postgres/gt.log")
B_TID=$(awk '$1 == "thread" && $3 == "postgres_session_b" { print $2 }' "$TMPD/postgres/gt.log")
run_latsnap "$TMPD/pg.report.json" "$TMPD/pg.report.err" report --json "$TMPD/postgres/snaps"
ROW=$(jq -c --argjson b "${B_TID:-0}" '[.longest[] | select(.tid == $b)] | max_by(.duration_ns)' \
	"$TMPD/pg.report.json" 2>/dev/null)
is "$(jq -r '.cause' <<<"$ROW" 2>/dev/null)" "Lock wait (PostgreSQL heavyweight lock)" \
	"postgres: report names session B's row-lock wait as one" || diag "  $ROW"
is "$(jq -r '.held_up_by.tid' <<<"$ROW" 2>/dev/null)" "${A_TID:-none}" \
	"postgres: report's Longest waits name its holder, session A ($A_TID)" || diag "  $ROW"
is "$(jq -r '.held_up_by.cause' <<<"$ROW" 2>/dev/null)" "Requested sleep (SQL pg_sleep())" \
	"postgres: the holder was in its pg_sleep() meanwhile" || diag "  $ROW"

# d) the whole set: issue 29's programs (asserted), then all (said; with issue 47's, whose misses
# are TODO above).
totals() {
	local f
	read -r TP FN RIGHT FP <<<"$(for f in "$@"; do cat "$TMPD/$f/result.json"; done 2>/dev/null |
		jq -s -r '[(map(.tp) | add), (map(.fn) | add), (map(.correct_outliers) | add),
		(map(.fp) | add)] | map(tostring) | join(" ")')"
	PREC=$(awk -v r="${RIGHT:-0}" -v f="${FP:-0}" 'BEGIN { printf "%.3f", r + f ? r / (r + f) : 1 }')
	RECALL=$(awk -v t="${TP:-0}" -v n="${FN:-0}" 'BEGIN { printf "%.3f", t + n ? t / (t + n) : 0 }')
}
totals cpool python node go java mariadb postgres pylock nodeexec pyasync ruby cxxpool rustpool \
	phpflock housekeep pyproc rbcond perlpipe
diag "the set, all: latency waits $((TP + FN)), found $TP; outliers $((RIGHT + FP)), $FP of them" \
	"idle: precision $PREC, recall $RECALL"
totals cpool python node go java mariadb postgres
diag "the set of issue 29: latency waits $((TP + FN)), found $TP; outliers $((RIGHT + FP)), $FP of" \
	"them idle: precision $PREC, recall $RECALL"
goal set:precision "$PREC" "the set (issue 29's programs): precision of latency >= $MIN"
goal set:recall "$RECALL" "the set (issue 29's programs): recall of latency >= $MIN"

done_testing
