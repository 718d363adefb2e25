#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A Go program's stacks (issue 29, items 3 and 6). `gowaits 300` (tests/workloads/go/waits.go,
# static: no preload library, its user stacks are the kernel's frame-pointer walks) runs three
# goroutine waits of 300 ms one after the other: main.contend on a sync.Mutex, main.nap in
# time.Sleep (called only after the mutex wait), main.pipeReader in a blocking read of a pipe.
# The first two park their goroutine: the threads (Go's Ms) then wait on the scheduler's own
# stack, entered through runtime.mcall, whose frame chain leads back into the stack of the
# goroutine that left; that goroutine runs on elsewhere, so what the walk found there was
# another time's frames (`time.Sleep < main.nap` before main.nap ever ran).
#  a) --include-idle (every wait reported, so every stack seen): no stack goes on past
#     runtime.mcall, runtime.morestack or runtime.mstart, and one that stops at mcall says why
#     (go-stack-cut); no goroutine frame in a scheduler's stack, main.nap in none from before it
#     ran; the pipe read, a syscall on its goroutine's own stack, is named down to
#     main.pipeReader and runtime.goexit, uncut.
#  b) The built-in rules: the Ms waiting for work (runtime.stopm, runtime.findRunnable, sysmon)
#     are idle, not outliers, and the totals line counts them.
set -u
. "$(dirname "$0")/lib.sh"
no_ust_wait

require_record gowaits

OUT=$TMPD/out ERR=$TMPD/err LOG=$TMPD/wl.log
WL_LOG=$LOG record_json "$OUT" "$ERR" -- -t 100ms --include-idle -- "$WL/gowaits" 300
is "$RC" 0 "record -t 100ms --include-idle -- gowaits 300: exit 0"
ok 'ndjson_ok "$OUT"' "stdout is NDJSON" || diag_file "$OUT" "  stdout: "
diag_file "$LOG" "  workload: "
PID=$(wl_log_get "$LOG" pid)
NAP_T0=$(wl_log_get "$LOG" nap)
READER=$(wl_log_get "$LOG" tid 3)
ok '[ -n "$PID" ] && [ -n "$NAP_T0" ] && [ -n "$READER" ]' "gowaits ran and logged its pid, nap and reader"
J() { jq -s -r "[.[] | select(.pid == ${PID:-0})] | $1" "$OUT" 2>/dev/null; }
STACKS='map("\(.tid) \(.syscall) from \(.start_ns): \([.user_stack.frames[]? | .symbol // .addr] | join(" < ")) \(.flags | map(select(startswith("go-"))))") | .[]'
J "$STACKS" | while IFS= read -r line; do diag "  $line"; done

# The frames' names, and where the first switch is among the callers (the innermost frame is
# where the thread is, not a call).
NAMES='[.user_stack.frames[]? | .symbol // ""]'
SWITCH='"^runtime\\.(mcall|morestack|mstart)(\\.abi0)?$"'
FIRST_SWITCH="($NAMES | [range(1; length) as \$i | select(.[\$i] | test($SWITCH)) | \$i] | first)"

# a) the stacks.
between "$(J "map(select($NAMES | any(. == \"runtime.mcall\"))) | length")" 1 1000 \
	"some thread waits on the scheduler's stack, entered through runtime.mcall"
is "$(J "map(select($FIRST_SWITCH as \$s | \$s != null and \$s + 1 < ($NAMES | length))) | length")" 0 \
	"no user stack goes on past runtime.mcall, runtime.morestack or runtime.mstart"
is "$(J "map(select($NAMES | any(. == \"runtime.schedule\") and any(startswith(\"main.\")))) | length")" 0 \
	"no goroutine's frame (main.*) in a stack that is in the scheduler"
is "$(J "map(select(($NAMES | any(. == \"main.nap\")) and .start_ns < ${NAP_T0:-0})) | length")" 0 \
	"main.nap is in no stack of a wait that began before main.nap ran"
is "$(J "map(select(($NAMES | last // \"\") == \"runtime.mcall\" and (.flags | any(startswith(\"go-stack-cut:\")) | not))) | length")" 0 \
	"every stack that stops at runtime.mcall says so (flag go-stack-cut)"
is "$(J "map(select($NAMES | any(. == \"runtime.sysmon\")) | $NAMES | last) | unique | join(\" \")")" \
	runtime.mstart.abi0 "sysmon's stack ends where its thread started (runtime.mstart)"

READ="map(select(.tid == ${READER:-0} and .syscall == \"read\"))"
is "$(J "$READ | length")" 1 "the pipe read is one outlier, on the reader's thread"
is "$(J "$READ | .[0] | $NAMES | (index(\"syscall.read\") // 99) < (index(\"main.pipeReader\") // -1)")" true \
	"its user stack names the goroutine's function, main.pipeReader, beyond syscall.read"
like "$(J "$READ | .[0] | $NAMES | last")" '^runtime\.goexit(\.abi0)?$' \
	"its stack ends at the goroutine's start (runtime.goexit): the chain is whole"
is "$(J "$READ | .[0] | .flags | map(select(startswith(\"go-\"))) | length")" 0 \
	"the read's stack is not cut"

# b) the idle Ms, by the built-in rules.
WL_LOG=$TMPD/wl2.log record_json "$OUT" "$ERR" -- -t 100ms -- "$WL/gowaits" 300
is "$RC" 0 "record -t 100ms -- gowaits 300: exit 0"
PID=$(wl_log_get "$TMPD/wl2.log" pid)
IDLE_RE='"^runtime\\.(stopm|findRunnable|findrunnable|sysmon)$"'
is "$(J "map(select($NAMES | any(test($IDLE_RE)))) | length")" 0 \
	"no thread waiting for a goroutine (runtime.stopm, findRunnable, sysmon) is an outlier" ||
	J "$STACKS" | while IFS= read -r line; do diag "  $line"; done
N_IDLE=$(sed -nE 's/^latsnap: [0-9]+ outliers, .*\), ([0-9]+) idle$/\1/p' "$ERR")
between "${N_IDLE:-0}" 2 1000 "the totals line counts them as idle (${N_IDLE:-none})" ||
	diag_file "$ERR" "  stderr: "

done_testing
