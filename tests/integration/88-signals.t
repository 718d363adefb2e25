#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Signals to `latsnap record -- COMMAND`, and what becomes of COMMAND (man page, SIGNALS), as
# perf record does: on SIGINT or SIGTERM latsnap stops recording, sends SIGTERM to COMMAND if it
# still runs, waits for it, writes the last snapshot and exits 0.
#  a) kill -INT, b) kill -TERM of latsnap while COMMAND (the sleeper, 150 naps of 200 ms) runs,
#     in snapshot mode: COMMAND ends (no process left over), latsnap exits 0 and says how COMMAND
#     ended, and every summary of the output directory reads back with report.
#  c) A COMMAND that ignores SIGTERM: latsnap waits for it until a second SIGINT, then leaves it
#     running, says so, and exits 0.
#  d) The idle list at exit (stderr): largest total first; without -v at most 10 entries and a
#     line that counts the rest and says -v lists them; with -v every entry, no such line.
set -u
. "$(dirname "$0")/lib.sh"

require_record sleeper workpool
require lttng lttng-sessiond babeltrace2

no_ust_wait

# wait_log LOG N: until LOG has N "nap" lines (30 s at most).
wait_log() {
	local i n
	for ((i = 0; i < 300; i++)); do
		n=$(grep -c '^nap' "$1" 2>/dev/null)
		[ "${n:-0}" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# wait_exit PID: waits for the background latsnap PID (60 s at most, then SIGKILL); sets RC.
wait_exit() {
	local i
	for ((i = 0; i < 600; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$1" 2>/dev/null; then
		diag "latsnap $1 still running 60 s after the signal: killed"
		kill -KILL "$1" 2>/dev/null
	fi
	wait "$1"
	RC=$?
}

# alive PID: whether PID exists and is not a zombie.
alive() {
	[ -r "/proc/$1/stat" ] && ! awk '{ exit $3 != "Z" }' "/proc/$1/stat" 2>/dev/null
}

# --- a), b): SIGINT, SIGTERM ----------------------------------------------------------------------
for SIG in INT TERM; do
	tag=$(echo "$SIG" | tr 'A-Z' 'a-z')
	[ "$SIG" = TERM ] && t="b)" || t="a)"
	OUT=$TMPD/$tag.d
	WL_LOG=$TMPD/$tag.log "$LATSNAP" record -t 50ms -o "$OUT" -- "$WL/sleeper" 200 150 \
		>"$TMPD/$tag.out" 2>"$TMPD/$tag.err" &
	LP=$!
	track_bg "$LP"
	wait_log "$TMPD/$tag.log" 3
	ok $? "$t record -o DIR -- sleeper 200 150: naps under way"
	SP=$(wl_log_get "$TMPD/$tag.log" pid)
	kill "-$SIG" "$LP"
	wait_exit "$LP"
	is "$RC" 0 "$t kill -$SIG of latsnap: it exits 0" || diag_file "$TMPD/$tag.err" "  stderr: "
	if alive "${SP:-0}"; then
		fail "$t COMMAND (pid $SP) ended: no process left over"
		diag "  $(ps -o pid,ppid,stat,args -p "$SP" | tail -n 1)"
		kill -KILL "$SP" 2>/dev/null
	else
		pass "$t COMMAND (pid $SP) ended: no process left over"
	fi
	like "$(cat "$TMPD/$tag.err")" "SIG$SIG: ending COMMAND \\(pid $SP\\) with SIGTERM" \
		"$t stderr says latsnap ends COMMAND with SIGTERM"
	like "$(cat "$TMPD/$tag.err")" "COMMAND \\(pid $SP\\) ended by SIGTERM" \
		"$t and how COMMAND ended"
	like "$(tail -n 5 "$TMPD/$tag.err")" "latsnap: [0-9]+ outliers, [0-9]+ snapshots" \
		"$t the totals line is printed"
	N=$(find "$OUT" -mindepth 2 -maxdepth 2 -name summary.json | wc -l)
	NDIR=$(find "$OUT" -mindepth 1 -maxdepth 1 -type d | wc -l)
	ok '[ "$N" -ge 1 ] && [ "$N" = "$NDIR" ]' \
		"$t every snapshot directory is complete, the earlier ones and the last ($N of $NDIR)"
	run_latsnap "$TMPD/$tag.report" "$TMPD/$tag.report.err" report "$OUT"
	is "$RC" 0 "$t report DIR: exit 0" || diag_file "$TMPD/$tag.report.err" "  stderr: "
	like "$(head -n 1 "$TMPD/$tag.report")" \
		"^$OUT: $N snapshots \\($N complete, 0 incomplete or corrupt\\): [1-9][0-9]* outliers" \
		"$t report reads every summary"
	like "$(cat "$TMPD/$tag.report")" 'Requested sleep' "$t report shows the naps"
done

# --- c) a COMMAND that ignores SIGTERM ------------------------------------------------------------
WL_LOG=$TMPD/c.log "$LATSNAP" record --no-snapshot -t 50ms -- \
	sh -c 'trap "" TERM; exec "$0" 200 150' "$WL/sleeper" >"$TMPD/c.out" 2>"$TMPD/c.err" &
LP=$!
track_bg "$LP"
wait_log "$TMPD/c.log" 2
ok $? "c) record -- sleeper ignoring SIGTERM: naps under way"
SP=$(wl_log_get "$TMPD/c.log" pid)
kill -INT "$LP"
for ((i = 0; i < 300; i++)); do
	grep -q 'ending COMMAND' "$TMPD/c.err" && break
	sleep 0.1
done
sleep 1
ok 'kill -0 "$LP" 2>/dev/null' "c) latsnap waits for a COMMAND that ignores SIGTERM"
kill -INT "$LP"
wait_exit "$LP"
is "$RC" 0 "c) a second SIGINT: latsnap exits 0" || diag_file "$TMPD/c.err" "  stderr: "
like "$(cat "$TMPD/c.err")" "SIGINT again: COMMAND \\(pid $SP\\) left running, no longer tracked" \
	"c) and says it leaves COMMAND running"
ok 'alive "${SP:-0}"' "c) COMMAND (pid $SP) still runs"
kill -KILL "${SP:-0}" 2>/dev/null

# --- d) the idle list at exit ---------------------------------------------------------------------
# idle_entries ERR: the exit-time idle list's entries of record's stderr, one a line:
# "TOTAL_NS ENTRY"; and "more N" for the line that counts those not shown.
idle_entries() {
	awk '/^latsnap: idle waits/ { on = 1; next }
		on && /^latsnap:   \.\.\. and / { print "more", $4; next }
		on && /^latsnap:   / { v = $(NF - 1); u = $NF
			m = u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "us" ? 1e3 : 1
			printf "%.0f %s\n", v * m, $2; next }
		on { on = 0 }' "$1"
}
# sorted ENTRIES: whether the totals go from the largest down.
sorted() {
	grep -v '^more' "$1" | awk 'NR > 1 && $1 > prev { bad = 1 } { prev = $1 } END { exit bad }'
}

timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --no-snapshot -t 50ms -- \
	"$WL/workpool" 14 30 60 60 >"$TMPD/d.out" 2>"$TMPD/d.err"
is "$?" 0 "d) record -- workpool 14 workers: exit 0"
idle_entries "$TMPD/d.err" >"$TMPD/d.idle"
NSHOWN=$(grep -vc '^more' "$TMPD/d.idle")
MORE=$(awk '$1 == "more" { print $2 }' "$TMPD/d.idle")
ok '[ "$NSHOWN" -le 10 ] && [ "${MORE:-0}" -ge 1 ]' \
	"d) without -v: at most 10 entries ($NSHOWN) and a line for the $MORE more" ||
	diag_file "$TMPD/d.err" "  stderr: "
like "$(grep '^latsnap:   \.\.\. and ' "$TMPD/d.err")" \
	'and [0-9]+ more threads and places \([0-9]+ waits, [0-9.]+ [mun]?s in all.*\): -v lists every one' \
	"d) that line counts the rest's waits and time, and says -v lists every one"
ok 'sorted "$TMPD/d.idle"' "d) the entries go from the largest total down" ||
	diag_file "$TMPD/d.idle" "  idle: "

timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record -v --no-snapshot -t 50ms -- \
	"$WL/workpool" 14 30 60 60 >"$TMPD/v.out" 2>"$TMPD/v.err"
is "$?" 0 "d) record -v -- workpool 14 workers: exit 0"
idle_entries "$TMPD/v.err" >"$TMPD/v.idle"
NALL=$(grep -vc '^more' "$TMPD/v.idle")
ok '[ "$NALL" -gt 10 ] && ! grep -q "^more" "$TMPD/v.idle"' \
	"d) with -v: every entry ($NALL), no line of more" || diag_file "$TMPD/v.idle" "  idle: "
ok 'sorted "$TMPD/v.idle"' "d) largest total first there too"

done_testing
