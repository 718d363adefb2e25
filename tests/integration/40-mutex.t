#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Lock contention: in `mutexwait 150`, thread "holder" holds a pthread mutex
# for 150 ms while thread "waiter" blocks on it: a futex outlier of ~150 ms in
# waiter, woken by holder. Once with the holder sleeping, once spinning.
set -u
. "$(dirname "$0")/lib.sh"

require_record mutexwait

OUT=$TMPD/out ERR=$TMPD/err

for mode in 0 1; do
	label=$([ $mode = 0 ] && echo "holder sleeps" || echo "holder spins")
	LOG=$TMPD/wl.$mode.log
	WL_LOG=$LOG record_json "$OUT" "$ERR" -- -t 50ms -- "$WL/mutexwait" 150 $mode
	is "$RC" 0 "$label: record -t 50ms -- mutexwait 150 $mode: exit 0"
	ok 'ndjson_ok "$OUT"' "$label: stdout is NDJSON"
	dump_outliers "$OUT"
	WAITER=$(awk '$1 == "tid" && $2 == "waiter" { print $3 }' "$LOG")
	HOLDER=$(awk '$1 == "tid" && $2 == "holder" { print $3 }' "$LOG")
	PID=$(wl_log_get "$LOG" pid)
	SEL='select(.comm == "waiter" and .syscall == "futex")'
	is "$(jcount "$OUT" "$SEL")" 1 "$label: exactly one futex outlier in thread waiter"
	O=$TMPD/o.json
	jq -s -c "[.[] | $SEL] | .[0] // {}" "$OUT" >"$O" 2>/dev/null || echo '{}' >"$O"
	J() { jq -r "$1" "$O" 2>/dev/null; }
	is "$(J .tid)" "$WAITER" "$label: tid is the waiter thread's"
	is "$(J .pid)" "$PID" "$label: pid is the process's"
	is "$(J .kind)" syscall "$label: kind is syscall"
	between "$(J .duration_ns)" 140000000 220000000 "$label: duration within [140 ms, 220 ms]"
	between "$(J '(.on_cpu_ns + .blocked_ns + .runqueue_ns - .duration_ns) | fabs')" 0 2000 \
		"$label: on_cpu + blocked + runqueue == duration within 2 us"
	is "$(J '[.kernel_stacks[]?.frames[]?.symbol // empty] | any(test("futex_wait|futex_q_wait|__futex_wait"))')" true \
		"$label: a kernel frame is futex_wait/futex_q_wait/__futex_wait"
	is "$(J "[.kernel_stacks[]?.frames[]?.symbol // empty] | map(select(test(\"$GLUE_RE\"))) | length")" 0 \
		"$label: no BPF/tracing glue frames"
	is "$(J '.waker.comm')" holder "$label: the waker is thread holder"
	is "$(J '.waker.tid')" "$HOLDER" "$label: the waker's tid is holder's"
	is "$(J '[.waker.frames[]?.symbol // empty] | any(test("futex_wake"))')" true "$label: a waker frame is futex_wake"
	diag "kernel stack: $(J '[.kernel_stacks[0].frames[]? | .symbol] | join(" < ")')"
	diag "waker stack: $(J '[.waker.frames[]? | .symbol] | join(" < ")')"
	like "$(J .cause)" 'lock contention' "$label: cause is lock contention ($(J .cause))"
	diag "wait_chain: $(J '.wait_chain | tostring')"
done

done_testing
