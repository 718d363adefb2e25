#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A burst: `manythreads 32 100`: 32 threads nanosleep 100 ms at the same
# moment. Exactly 32 outliers, 32 distinct threads, nothing lost.
set -u
. "$(dirname "$0")/lib.sh"

require_record manythreads forker

N=32
OUT=$TMPD/out ERR=$TMPD/err LOG=$TMPD/wl.log
WL_LOG=$LOG record_json "$OUT" "$ERR" -- -t 50ms -- "$WL/manythreads" $N 100
is "$RC" 0 "record -t 50ms -- manythreads $N 100: exit 0"
ok 'ndjson_ok "$OUT"' "stdout is NDJSON"
PID=$(wl_log_get "$LOG" pid)

SEL="select(.kind == \"syscall\" and (.syscall | test(\"^(clock_)?nanosleep$\")))"
NSLEEP=$(jcount "$OUT" "$SEL")
is "$NSLEEP" $N "exactly $N nanosleep outliers" || dump_outliers "$OUT"
is "$(jq -s "[.[] | $SEL | .tid] | unique | length" "$OUT" 2>/dev/null)" $N "$N distinct tids"
is "$(jq -s "[.[] | $SEL | .tid] | sort" "$OUT" 2>/dev/null | jq -c .)" \
	"$(awk '$1 == "nap" { print $2 }' "$LOG" | sort -n | jq -s -c .)" "the tids are those of the napping threads"
is "$(jq -s "[.[] | $SEL | .pid == ${PID:-0}] | length > 0 and all" "$OUT" 2>/dev/null)" true "all in the workload's process"
is "$(jq -s "[.[] | $SEL | .comm | test(\"^napper[0-9]+$\")] | length > 0 and all" "$OUT" 2>/dev/null)" true "comms are the thread names (napperNN)"
is "$(jq -s "[.[] | $SEL | .duration_ns >= 95000000 and .duration_ns <= 200000000] | length > 0 and all" "$OUT" 2>/dev/null)" \
	true "every duration within [95 ms, 200 ms]"
is "$(jq -s "[.[] | $SEL | (.on_cpu_ns + .blocked_ns + .runqueue_ns - .duration_ns) | fabs <= 2000] | length > 0 and all" "$OUT" 2>/dev/null)" \
	true "every on_cpu + blocked + runqueue == duration within 2 us"
is "$(jq -s "[.[] | $SEL | [.kernel_stacks[]?.frames[]?.symbol // empty] | any(test(\"nanosleep|common_nsleep\"))] | length > 0 and all" "$OUT" 2>/dev/null)" \
	true "every outlier has a nanosleep kernel frame"
is "$(jq -s "[.[] | $SEL | .waker != null] | length > 0 and all" "$OUT" 2>/dev/null)" true "every outlier has a waker"
is "$(jq -s "[.[] | $SEL | select(.kernel_stacks | length == 0)] | length" "$OUT" 2>/dev/null)" 0 "no outlier without a kernel stack"
diag "durations (ms): $(jq -s -r "[.[] | $SEL | .duration_ns / 1e6 | floor] | sort | map(tostring) | join(\" \")" "$OUT" 2>/dev/null)"

# The totals line on stderr.
TOTALS=$(grep -i 'outliers' "$ERR" | tail -n 1)
ok '[ -n "$TOTALS" ]' "stderr has a totals line (mentions outliers)" || diag_file "$ERR" "  stderr: "
diag "totals: $TOTALS"
if [[ $TOTALS =~ lost[:=\ ]*([0-9]+) ]] || [[ $TOTALS =~ ([0-9]+)\ lost ]]; then
	is "${BASH_REMATCH[1]}" 0 "totals: nothing lost"
else
	fail "totals line reports lost"
fi
if [[ $TOTALS =~ ([0-9]+)[^0-9]*outliers|outliers[^0-9]*([0-9]+) ]]; then
	is "${BASH_REMATCH[1]}${BASH_REMATCH[2]}" "$(jcount "$OUT")" "totals: the outlier count matches the JSON lines"
else
	fail "totals line has an outlier count"
fi

# Threads and processes that exited leave nothing in the kernel maps (checked with -v's report).
record_json "$OUT" "$ERR" -- -v -t 50ms -- "$WL/forker" 60 3
is "$RC" 0 "record -v -- forker: exit 0"
like "$(grep 'kernel state left' "$ERR")" '0 tracked processes, 0 outliers in flight' \
	"no tracked process and no outlier in flight is left once every thread exited"

done_testing
