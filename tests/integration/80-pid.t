#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Attaching to a running process: `record -p PID -d 1s` on a sleeper loop
# that started before latsnap reports that process's naps and stops after
# 1 s; a child the process forks while attached is tracked too.
set -u
. "$(dirname "$0")/lib.sh"

require_record sleeper forker

OUT=$TMPD/out ERR=$TMPD/err

# --- -p on an already-running sleeper loop --------------------------------
# 60 naps of 100 ms: 6 s, longer than latsnap needs to start and run 1 s.
"$WL/sleeper" 100 60 </dev/null >/dev/null 2>"$TMPD/sleeper.err" &
SPID=$!
track_bg $SPID
sleep 0.3
# another process, not attached: must not show up
"$WL/sleeper" 100 60 </dev/null >/dev/null 2>&1 &
OTHER=$!
track_bg $OTHER

record_json "$OUT" "$ERR" -- -t 50ms -p "$SPID" -d 1s
is "$RC" 0 "record -p PID -d 1s: exit 0"
ok 'ndjson_ok "$OUT"' "stdout is NDJSON"
ok 'kill -0 $SPID 2>/dev/null' "latsnap stopped after -d 1s, while the process still runs (took ${ELAPSED_MS} ms)"
dump_outliers "$OUT"
# The nap under way when the run ends is reported unfinished: counted apart.
N=$(jcount "$OUT" "select($ENDED)")
between "$N" 3 12 "3-12 outliers for 1 s of 100 ms naps (and $(jcount "$OUT" "select($ENDED | not)") unfinished)"
is "$(jq -s "[.[] | .pid == $SPID] | all" "$OUT" 2>/dev/null)" true "every outlier is the attached process's (pid $SPID)"
is "$(jcount "$OUT" "select(.pid == $OTHER)")" 0 "the other sleeper (pid $OTHER) is not tracked"
# A nap under way at attach time may be missing or cut short; the others are
# whole 100 ms nanosleeps.
is "$(jq -s '[.[] | .comm == "sleeper" and .duration_ns <= 150000000] | all' "$OUT" 2>/dev/null)" true \
	"all are sleeper's, none longer than 150 ms"
[[ $N =~ ^[0-9]+$ ]] || N=0
between "$(jcount "$OUT" "select(.kind == \"syscall\" and (.syscall | test(\"^(clock_)?nanosleep\$\"))
	and .duration_ns >= 95000000 and .duration_ns <= 150000000 and $ENDED)")" $((N > 0 ? N - 1 : 1)) "$N" \
	"all but at most the first are nanosleeps of 95-150 ms"
kill -TERM $SPID $OTHER 2>/dev/null
wait $SPID $OTHER 2>/dev/null

# --- -p PID tracks the children the process forks later -------------------
LOG=$TMPD/forker.log
WL_LOG=$LOG "$WL/forker" 100 100 </dev/null >/dev/null 2>"$TMPD/forker.err" &
FPID=$!
track_bg $FPID
sleep 0.3
timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --no-snapshot --json -t 50ms -p "$FPID" -d 6s >"$OUT" 2>"$ERR" &
LPID=$!
track_bg $LPID
# Wait until latsnap writes the parent's naps (tracking is live), at most
# 3 s; then ask for a child anyway (output may be buffered).
live=0
for ((i = 0; i < 60; i++)); do
	if [ "$(jcount "$OUT" "select(.pid == $FPID)" 2>/dev/null)" -ge 1 ] 2>/dev/null; then
		live=1
		break
	fi
	kill -0 $LPID 2>/dev/null || break
	sleep 0.05
done
ok '[ $live = 1 ]' "outliers appear on stdout while latsnap runs (within 3 s of start)"
kill -USR1 $FPID
wait $LPID
RC=$?
is "$RC" 0 "record -p PID -d 6s: exit 0" || diag_file "$ERR" "  stderr: "
kill -TERM $FPID 2>/dev/null
wait $FPID 2>/dev/null
dump_outliers "$OUT"
CHILD=$(wl_log_get "$LOG" child)
ok '[ -n "$CHILD" ]' "forker forked a child ($CHILD)"
is "$(jcount "$OUT" "select(.pid == ${CHILD:-0} and .comm == \"forkchild\" and (.syscall | test(\"nanosleep\")) and $ENDED)")" 1 \
	"the child forked after attaching is tracked: its nanosleep is an outlier"
is "$(jq -s "[.[] | .pid == $FPID or .pid == ${CHILD:-0}] | all" "$OUT" 2>/dev/null)" true \
	"every outlier is the parent's or the child's"

# --all: a process nobody named is tracked; kernel threads are not.
# It naps for longer than the window, however late a loaded machine lets latsnap attach.
"$WL/sleeper" 120 16 80 &
ALLPID=$!
track_bg "$ALLPID"
record_json "$OUT" "$ERR" -- -a -t 50ms -d 1200ms
is "$RC" 0 "record -a -d 1200ms: exit 0"
ok '[ "$(jcount "$OUT" "select(.pid == $ALLPID and (.syscall == \"clock_nanosleep\" or .syscall == \"nanosleep\"))")" -ge 2 ]' \
	"--all reports the sleeper nobody named" || dump_outliers "$OUT"
is "$(jcount "$OUT" 'select(.comm | test("^(kworker|ksoftirqd|rcu_|migration|kthreadd|idle_inject|cpuhp)"))')" 0 \
	"--all leaves kernel threads out"
wait "$ALLPID" 2>/dev/null

done_testing
