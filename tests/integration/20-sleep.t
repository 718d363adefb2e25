#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A timer sleep: `sleeper 100` (one nanosleep of 100 ms in slow_nap()) under
# -t 50ms is exactly one outlier, with consistent times, a sensible kernel
# stack and a waker; thresholds above the sleep give none.
set -u
. "$(dirname "$0")/lib.sh"
no_ust_wait

require_record sleeper

OUT=$TMPD/out ERR=$TMPD/err LOG=$TMPD/wl.log
# --no-preload: the user stack below is the kernel's frame-pointer walk (the preload library's
# unwound stacks are 90-unwind's).
WL_LOG=$LOG record_json "$OUT" "$ERR" -- -t 50ms --no-preload -- "$WL/sleeper" 100 1
is "$RC" 0 "record -t 50ms -- sleeper 100: exit 0"
ok 'ndjson_ok "$OUT"' "stdout is NDJSON (one JSON object per line)" || diag_file "$OUT" "  stdout: "
dump_outliers "$OUT"

PID=$(wl_log_get "$LOG" pid)
read -r NAP_T0 NAP_T1 < <(awk '$1 == "nap" { print $3, $4; exit }' "$LOG")
ok '[ -n "$PID" ]' "sleeper ran (pid $PID)"
SEL="select(.pid == ${PID:-0}) | $NOT_LOADING"
is "$(jcount "$OUT" "$SEL")" 1 "exactly one outlier for the sleeper's pid"
is "$(jcount "$OUT" "$NOT_LOADING")" 1 "exactly one outlier in all (the workload loading from disk aside)"
loading_note "$OUT"
O=$TMPD/o.json
jq -s -c "[.[] | $SEL] | .[0] // {}" "$OUT" >"$O" 2>/dev/null || echo '{}' >"$O"
J() { jq -r "$1" "$O" 2>/dev/null; }

# Every field of the contract's OUTLIER form is there.
for k in kind pid tid comm syscall syscall_nr start_ns end_ns duration_ns on_cpu_ns blocked_ns \
	runqueue_ns switches cause kernel_stacks user_stack waker wait_chain flags; do
	[ "$(J "has(\"$k\")")" = true ] || MISSING_KEYS="${MISSING_KEYS:-} $k"
done
is "${MISSING_KEYS:-}" "" "the outlier has every contract field"
is "$(J '[.kernel_stacks[]?.frames[]? | (has("addr") and has("symbol") and has("offset") and has("module") and (.addr | type == "string" and startswith("0x")))] | all')" \
	true "every kernel frame has addr (0x...), symbol, offset, module"

is "$(J .kind)" syscall "kind is syscall"
like "$(J .syscall)" '^(clock_)?nanosleep$' "syscall is nanosleep or clock_nanosleep"
if [ "$(uname -m)" = x86_64 ]; then
	case "$(J .syscall)" in
	nanosleep) is "$(J .syscall_nr)" 35 "syscall_nr matches the name (x86_64)" ;;
	*) is "$(J .syscall_nr)" 230 "syscall_nr matches the name (x86_64)" ;;
	esac
fi
is "$(J .tid)" "$PID" "tid is the sleeper's (single-threaded) pid"
is "$(J .comm)" sleeper "comm is sleeper"
is "$(J .cause)" "Requested sleep (nanosleep)" "cause: the built-in rule for a requested sleep"

DUR=$(J .duration_ns)
between "$DUR" 95000000 150000000 "duration_ns within [95 ms, 150 ms]"
is "$(J '(.end_ns - .start_ns) == .duration_ns')" true "end_ns - start_ns == duration_ns"
is "$(J '.start_ns < .end_ns')" true "start_ns < end_ns"
SUMDIFF=$(J '(.on_cpu_ns + .blocked_ns + .runqueue_ns - .duration_ns) | fabs')
between "$SUMDIFF" 0 2000 "on_cpu + blocked + runqueue == duration within 2 us"
is "$(J '.blocked_ns >= 0.8 * .duration_ns')" true "blocked time dominates (>= 80%)"
is "$(J '[.on_cpu_ns, .blocked_ns, .runqueue_ns, .switches] | map(. >= 0) | all')" true "no negative times"
is "$(J '.switches >= 1')" true "at least one context switch"

# Timestamps are CLOCK_MONOTONIC: the syscall lies within what the workload
# measured around it (50 us slack).
if [ -n "${NAP_T0:-}" ]; then
	is "$(J ".start_ns >= ($NAP_T0 - 50000) and .end_ns <= ($NAP_T1 + 50000)")" true \
		"start_ns/end_ns are CLOCK_MONOTONIC, inside the workload's own [$NAP_T0, $NAP_T1]"
	diag "workload: nanosleep from $NAP_T0 to $NAP_T1; latsnap: $(J '"\(.start_ns) to \(.end_ns)"')"
else
	fail "workload logged its nap"
fi

# Kernel stacks: where it waited, innermost first, without BPF glue.
FRAMES='[.kernel_stacks[]?.frames[]?.symbol // empty]'
is "$(J "$FRAMES | any(test(\"hrtimer_nanosleep|do_nanosleep|common_nsleep\"))")" true \
	"a kernel frame is hrtimer_nanosleep/do_nanosleep/common_nsleep"
is "$(J "$FRAMES | map(select(test(\"$GLUE_RE\"))) | length")" 0 \
	"no BPF/tracing glue frames in kernel_stacks" || diag "glue: $(J "$FRAMES | map(select(test(\"$GLUE_RE\")))")"
# innermost first: the sleep function comes before the syscall entry.
ORDER=$(J '[.kernel_stacks[]? | .frames | map(.symbol // "")
	| { s: (map(test("do_nanosleep|hrtimer_nanosleep|common_nsleep")) | index(true)),
	    e: (map(test("do_syscall_64|entry_SYSCALL|__x64_sys_|__do_sys_")) | index(true)) }
	| select(.s != null and .e != null) | .s < .e] | if length == 0 then "none" else all end')
is "$ORDER" true "kernel frames are innermost first (do_nanosleep before the syscall entry)"
is "$(J '([.kernel_stacks[]?.weight_ns] | add // 0) as $w | $w > 0 and $w <= 1.01 * .duration_ns')" \
	true "kernel stack weights are positive and add up to no more than the duration"
diag "kernel stack: $(J '[.kernel_stacks[0].frames[]? | .symbol] | join(" < ")')"

# The waker: the timer interrupt, reported as [hardirq] ([softirq] on PREEMPT_RT), never a task.
WCOMM=$(J '.waker.comm // "null"')
isnt "$WCOMM" null "there is a waker"
if [[ $WCOMM == "[hardirq]" || $WCOMM == "[softirq]" ]]; then
	is "$(J '.waker.pid == 0 and .waker.tid == 0 and (.flags | any(startswith("waker-in-interrupt")))')" true \
		"interrupt waker: pid 0, tid 0 and flag waker-in-interrupt"
else
	fail "interrupt waker: pid 0, tid 0 and flag waker-in-interrupt (the waker is $WCOMM, not the timer interrupt)"
fi
# hrtimer_wakeup runs in hard interrupt context (softirq on PREEMPT_RT).
ok '[ "$WCOMM" = "[hardirq]" ] || [ "$WCOMM" = "[softirq]" ]' "the timer sleep's waker is the timer interrupt (got $WCOMM)"
is "$(J '[.waker.frames[]?.symbol // empty] | any(test("hrtimer_wakeup|hrtimer_interrupt|__hrtimer_run_queues"))')" true \
	"the waker's frames show the hrtimer expiry"
is "$(J "[.waker.frames[]?.symbol // empty] | map(select(test(\"$GLUE_RE\"))) | length")" 0 \
	"no BPF/tracing glue frames in the waker's stack"
diag "waker: $(J '.waker | if . == null then "null" else "\(.comm) pid=\(.pid) tid=\(.tid) frames=\([.frames[]?.symbol] | join(" < "))" end') flags=$(J '.flags | tostring')"

# Without the preload library the user stack is the kernel's frame-pointer walk, symbolized from
# mappings read while the sleeper lived (it has exited by the time the outlier is decoded). The
# walk passes through libc, which keeps no frame pointers, so the wrapper's own caller
# (slow_nap) may be skipped; main() and the libc wrapper are certain.
SRC=$(J '.user_stack.source')
is "$SRC" frame-pointer "no preload library: user_stack.source is frame-pointer"
is "$(J '[.user_stack.frames[]? | select(.symbol == "main" and ((.module // "") | endswith("/sleeper")))] | length')" \
	1 "the user stack has main() of the sleeper binary, symbolized after it exited"
is "$(J '[.user_stack.frames[]? | select((.module // "") | test("/libc[.-]"))] | length >= 1')" \
	true "the user stack starts in libc's syscall wrapper"
is "$(J '[.flags[] | select(startswith("user-stack-unsymbolized"))] | length')" 0 \
	"no user-stack-unsymbolized flag"
diag "user stack ($SRC): $(J '[.user_stack.frames[]? | .symbol // .addr] | join(" < ")')"
diag "cause: $(J .cause)"

# --- thresholds -----------------------------------------------------------
record_json "$OUT" "$ERR" -- -t 200ms -- "$WL/sleeper" 100 1
is "$RC" 0 "record -t 200ms -- sleeper 100: exit 0"
is "$(jcount "$OUT" "$NOT_LOADING")" 0 "threshold above the sleep: no outlier" || dump_outliers "$OUT"
loading_note "$OUT"

# -s alone does not make a syscall an outlier.
record_json "$OUT" "$ERR" -- -t 200ms -s 10ms -- "$WL/sleeper" 100 1
is "$(jcount "$OUT" 'select(.kind == "syscall")')" 0 "-t 200ms -s 10ms: no syscall outlier" || dump_outliers "$OUT"

CONF=$TMPD/latsnap.conf
printf '# test config\nthreshold = 200ms\n' >"$CONF"
record_json "$OUT" "$ERR" -- -c "$CONF" -- "$WL/sleeper" 100 1
is "$RC" 0 "record -c (threshold = 200ms): exit 0"
is "$(jcount "$OUT" "$NOT_LOADING")" 0 "config threshold = 200ms: no outlier" || dump_outliers "$OUT"
loading_note "$OUT"

record_json "$OUT" "$ERR" -- -c "$CONF" -t 50ms -- "$WL/sleeper" 100 1
is "$(jcount "$OUT" 'select(.comm == "sleeper")')" 1 "command line -t 50ms wins over config threshold = 200ms" || dump_outliers "$OUT"

# Default threshold is 50ms: two naps of 60 ms and 40 ms -> one outlier.
# (sleeper MS N GAP: 60 ms naps, gaps of 40 ms nanosleep)
record_json "$OUT" "$ERR" -- -- "$WL/sleeper" 60 2 40
is "$(jcount "$OUT" "$NOT_LOADING")" 2 "default threshold 50ms: the two 60 ms naps are outliers, the 40 ms gap is not" || dump_outliers "$OUT"

done_testing
