#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Idle or latency in a real CPython 3.11 (Debian 12's /usr/bin/python3, stripped; PYTHON311=PATH
# runs another 3.11): a threading.Lock's, a queue.Queue's, an Event's and a ThreadPoolExecutor's
# waits are all one futex wait on a semaphore under PyThread_acquire_lock_timed(). The workload
# (tests/workloads/pywaits.py) logs each wait with its label: two threads taking one Lock in turn
# outside any request (latency: every lock wait and every hold), two queue.Queue workers, a
# SimpleQueue worker (Debian's _queue module is stripped: told by its module), an Event waiter
# and an idle pool (idle). With the preload library's Python frames, every latency span is
# an outlier, named a Python lock, and no idle span is one; the idle waits are counted.
set -u
. "$(dirname "$0")/lib.sh"

PY=${PYTHON311:-/usr/bin/python3}
require_record sleeper
require "$PY"
[ -r "$BUILD/liblatsnap.so" ] || skip_all "$BUILD/liblatsnap.so not built (run make)"
case $("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) in
3.11) ;;
*) skip_all "$PY is not CPython 3.11" ;;
esac
no_ust_wait

MIN_NS=65000000 # spans this long are outliers for sure (the threshold is 50 ms)
SCRIPT=$ROOT/tests/workloads/pywaits.py

record_snap py -t 50ms -o "$TMPD/py.d" -- "$PY" "$SCRIPT" 3
is "$RC" 0 "pywaits under record: exit 0"
dump_outliers "$TMPD/py.out"
LOG=$TMPD/py.log

wl_spans "$LOG" "$MIN_NS" 'lock|nap' >"$TMPD/spans.json"
NLOCK=$(awk -v min=$MIN_NS '$1 == "lock" && $4 - $3 >= min' "$LOG" | wc -l)
ok '[ "$NLOCK" -ge 3 ]' "the lockers waited for the Lock ($NLOCK waits of 65 ms or more)"
for role in jobworker eventwaiter poolworker; do
	ok '[ "$(awk -v r=$role '"'"'$1 == "thread" && $3 == r'"'"' "$LOG" | wc -l)" -ge 1 ]' \
		"the workload logged its $role threads"
done
read -r TP FN FP TN <<<"$(wl_score "$TMPD/spans.json" "$TMPD/py.out")"
diag "latency reported $TP, missed $FN; idle reported $FP, left out $TN"
is "$FN" 0 "every Lock wait and every hold is an outlier (latency)"
is "$FP" 0 "no queue, Event or pool wait is an outlier (idle)"
ok '[ "${TP:-0}" -ge $((NLOCK + 3)) ] && [ "${TN:-0}" -ge 4 ]' \
	"both kinds were there to judge (latency $TP, idle $TN)"

# The lock waits: by their thread and time, named a Python lock from their Python frame.
LOCKERS=$(awk '$1 == "thread" && $3 == "locker" { print $2 }' "$LOG" | paste -sd, -)
SEL="select(.syscall == \"futex\" and (.tid | IN($LOCKERS)))"
NOUT=$(jcount "$TMPD/py.out" "$SEL")
ok '[ "$NOUT" -ge "$NLOCK" ]' "the lockers' futex outliers ($NOUT) cover their Lock waits ($NLOCK)"
is "$(jq -s -r "[.[] | $SEL | .cause] | unique | join(\",\")" "$TMPD/py.out")" \
	"Userspace lock contention (Python Lock)" "each named a Python Lock, not a semaphore"
is "$(jq -s -r "[.[] | $SEL | [.user_stack.frames[]? | select(.line != null) | .symbol][0]] | unique | join(\",\")" "$TMPD/py.out")" \
	"take_resource" "each one's innermost Python frame is take_resource()"

# The idle waits were seen and counted, not dropped: the totals line's idle count.
IDLE=$(sed -nE 's/^latsnap: [0-9]+ outliers, .*\), ([0-9]+) idle$/\1/p' "$TMPD/py.err")
ok '[ "${IDLE:-0}" -ge 4 ]' "record counted the idle waits (${IDLE:-none} idle)"

done_testing
