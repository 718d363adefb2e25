#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A pipe read: `pipewait 120` blocks its parent in read() until the child
# "pipewriter" writes after 120 ms. One read outlier of ~120 ms in the
# parent, woken by pipewriter from pipe_write; the child (a descendant) is
# tracked too.
set -u
. "$(dirname "$0")/lib.sh"

require_record pipewait

OUT=$TMPD/out ERR=$TMPD/err LOG=$TMPD/wl.log
WL_LOG=$LOG record_json "$OUT" "$ERR" -- -t 50ms -- "$WL/pipewait" 120
is "$RC" 0 "record -t 50ms -- pipewait 120: exit 0"
ok 'ndjson_ok "$OUT"' "stdout is NDJSON" || diag_file "$OUT" "  stdout: "
dump_outliers "$OUT"

READER=$(wl_log_get "$LOG" reader)
WRITER=$(wl_log_get "$LOG" writer)
ok '[ -n "$READER" ] && [ -n "$WRITER" ]' "pipewait ran (reader $READER, writer $WRITER)"
SEL="select(.tid == ${READER:-0} and .syscall == \"read\")"
is "$(jcount "$OUT" "$SEL")" 1 "exactly one read outlier in the parent's thread"
is "$(jcount "$OUT" "select(.tid == ${READER:-0})")" 1 "no other outlier in the parent (waitpid is idle)"
O=$TMPD/o.json
jq -s -c "[.[] | $SEL] | .[0] // {}" "$OUT" >"$O" 2>/dev/null || echo '{}' >"$O"
J() { jq -r "$1" "$O" 2>/dev/null; }

is "$(J .kind)" syscall "kind is syscall"
is "$(J .pid)" "$READER" "pid is the parent's"
is "$(J .comm)" pipewait "comm is pipewait"
between "$(J .duration_ns)" 114000000 180000000 "duration_ns ~120 ms (within [114 ms, 180 ms])"
between "$(J '(.on_cpu_ns + .blocked_ns + .runqueue_ns - .duration_ns) | fabs')" 0 2000 \
	"on_cpu + blocked + runqueue == duration within 2 us"
is "$(J '.blocked_ns >= 0.8 * .duration_ns')" true "blocked time dominates"
is "$(J '[.kernel_stacks[]?.frames[]?.symbol // empty] | any(test("pipe_read"))')" true "a kernel frame is pipe_read"
is "$(J "[.kernel_stacks[]?.frames[]?.symbol // empty] | map(select(test(\"$GLUE_RE\"))) | length")" 0 \
	"no BPF/tracing glue frames in kernel_stacks"
diag "kernel stack: $(J '[.kernel_stacks[0].frames[]? | .symbol] | join(" < ")')"

is "$(J '.waker.comm')" pipewriter "the waker's comm is pipewriter"
is "$(J '.waker.pid')" "$WRITER" "the waker's pid is the child's"
is "$(J '.waker.frames | length > 0')" true "the waker has kernel frames"
is "$(J '[.waker.frames[]?.symbol // empty] | any(test("pipe_write"))')" true "a waker frame is pipe_write"
is "$(J "[.waker.frames[]?.symbol // empty] | map(select(test(\"$GLUE_RE\"))) | length")" 0 \
	"no BPF/tracing glue frames in the waker's stack"
diag "waker stack: $(J '[.waker.frames[]? | .symbol] | join(" < ")')"
is "$(J .cause)" "Reading from a pipe" "cause: the built-in rules name the pipe read"

# The child is a descendant: its nanosleep(120 ms) is an outlier too.
is "$(jcount "$OUT" "select(.pid == ${WRITER:-0} and .comm == \"pipewriter\" and (.syscall | test(\"nanosleep\")))")" 1 \
	"the child pipewriter (a descendant) is tracked: its nanosleep is an outlier"

done_testing
