#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# CPU starvation: `cpucontend 300` pins a SCHED_FIFO spinner on each CPU for
# 300 ms. Thread "victim" wakes from a 20 ms nanosleep while every CPU is
# hogged, so its nanosleep is mostly runqueue time; thread "cruncher" spins
# in user space and is preempted: a "sleep" outlier (outside any syscall),
# mostly runqueue time.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require jq
require_latsnap
require_workloads cpucontend

OUT=$TMPD/out ERR=$TMPD/err LOG=$TMPD/wl.log
WL_LOG=$LOG WL_VERBOSE=1 record_json "$OUT" "$ERR" -- -t 50ms -s 50ms -- "$WL/cpucontend" 300
is "$RC" 0 "record -t 50ms -s 50ms -- cpucontend 300: exit 0"
ok 'ndjson_ok "$OUT"' "stdout is NDJSON"
dump_outliers "$OUT"
grep '^cpucontend: ' "$ERR" | while IFS= read -r l; do diag "workload: $l"; done

VICTIM=$(awk '$1 == "tid" && $2 == "victim" { print $3 }' "$LOG")
CRUNCHER=$(awk '$1 == "tid" && $2 == "cruncher" { print $3 }' "$LOG")
read -r _ _ V0 V1 < <(grep '^victim ' "$LOG")
read -r _ _ G0 G1 < <(grep '^cruncher_gap ' "$LOG")
ok '[ -n "$VICTIM" ] && [ -n "$CRUNCHER" ] && [ -n "${V1:-}" ] && [ -n "${G1:-}" ]' "cpucontend ran (victim $VICTIM, cruncher $CRUNCHER)"
# The workload's own measurement: did the starvation happen at all?
between "$(((${V1:-0} - ${V0:-0}) / 1000000))" 200 600 "workload: the victim's 20 ms nanosleep took 200-600 ms (starved)"
between "$(((${G1:-0} - ${G0:-0}) / 1000000))" 200 600 "workload: the cruncher was off CPU 200-600 ms"

# victim: a nanosleep outlier dominated by runqueue time.
SEL="select(.tid == ${VICTIM:-0} and .kind == \"syscall\" and (.syscall | test(\"^(clock_)?nanosleep$\")))"
is "$(jcount "$OUT" "$SEL")" 1 "victim: one nanosleep outlier"
O=$TMPD/v.json
jq -s -c "[.[] | $SEL] | .[0] // {}" "$OUT" >"$O" 2>/dev/null || echo '{}' >"$O"
J() { jq -r "$1" "$O" 2>/dev/null; }
is "$(J .comm)" victim "victim: comm is victim"
between "$(J .duration_ns)" 200000000 600000000 "victim: duration within [200 ms, 600 ms]"
is "$(J '.runqueue_ns > 0.5 * .duration_ns')" true "victim: runqueue_ns > 50% of duration_ns"
is "$(J .cause)" "waiting for CPU" "victim: the cause is waiting for CPU, whatever the stack"
between "$(J .blocked_ns)" 10000000 40000000 "victim: blocked_ns ~ the 20 ms sleep (10-40 ms)"
between "$(J '(.on_cpu_ns + .blocked_ns + .runqueue_ns - .duration_ns) | fabs')" 0 2000 \
	"victim: on_cpu + blocked + runqueue == duration within 2 us"
if [ -n "${V0:-}" ]; then
	is "$(J ".start_ns >= ($V0 - 50000) and .end_ns <= ($V1 + 50000)")" true \
		"victim: the outlier lies within the workload's own measurement"
fi
diag "victim: $(J '"dur=\(.duration_ns/1e6) on_cpu=\(.on_cpu_ns/1e6) blocked=\(.blocked_ns/1e6) rq=\(.runqueue_ns/1e6) cause=\(.cause)"')"

# cruncher: an off-CPU interval outside any syscall, dominated by runqueue.
SEL="select(.tid == ${CRUNCHER:-0} and .kind == \"sleep\")"
is "$(jcount "$OUT" "$SEL")" 1 "cruncher: one sleep outlier"
jq -s -c "[.[] | $SEL] | .[0] // {}" "$OUT" >"$O" 2>/dev/null || echo '{}' >"$O"
is "$(J .comm)" cruncher "cruncher: comm is cruncher"
is "$(J '.kind == "sleep" and .syscall == null and .syscall_nr == null')" true "cruncher: kind sleep, syscall and syscall_nr null"
between "$(J .duration_ns)" 200000000 600000000 "cruncher: duration within [200 ms, 600 ms]"
is "$(J '.runqueue_ns > 0.8 * .duration_ns')" true "cruncher: runqueue_ns dominates (> 80%)"
between "$(J '(.on_cpu_ns + .blocked_ns + .runqueue_ns - .duration_ns) | fabs')" 0 2000 \
	"cruncher: on_cpu + blocked + runqueue == duration within 2 us"
if [ -n "${G0:-}" ]; then
	is "$(J ".start_ns >= ($G0 - 50000) and .end_ns <= ($G1 + 50000)")" true \
		"cruncher: the outlier lies within the gap the workload measured"
fi
diag "cruncher: $(J '"dur=\(.duration_ns/1e6) on_cpu=\(.on_cpu_ns/1e6) blocked=\(.blocked_ns/1e6) rq=\(.runqueue_ns/1e6) cause=\(.cause) flags=\(.flags)"')"

# The real-time spinners never leave the CPU: no outlier for them.
is "$(jcount "$OUT" 'select(.comm | test("^spinner"))')" 0 "no outlier for the spinners"

done_testing
