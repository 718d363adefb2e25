#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A Go program's goroutine waits (issue 29, Go), timed on the goroutine itself: uprobes on
# runtime.gopark and runtime.ready. `gowaits 300` (tests/workloads/go/waits.go) runs main.contend
# waiting 300 ms for a sync.Mutex that main.holder holds, then main.nap in time.Sleep(300 ms);
# main.idler, a worker goroutine with no work, waits on a channel all along. Without goroutine
# probes none of these is seen: the goroutines park, and their threads (Ms) wait in the
# scheduler, idle by the built-in rules.
#  a) The mutex wait is an outlier of kind sleep, within the span the workload logged around it,
#     all of it blocked, its stack the goroutine's own (frame pointers): sync.(*Mutex).lockSlow
#     below main.contend; flags goroutine and "goroutine GOID", cause "Go: sync.Mutex.Lock",
#     its thread one of the process's.
#  b) The sleep likewise: time.Sleep below main.nap, cause "Go: sleep".
#  c) The idle worker is not an outlier; with --include-idle it is (the policy saw it and judged
#     it idle): parked in chan receive (flag "go-wait: chan receive").
#  d) gowaits built without DWARF (-ldflags=-w): runtime.g's layout is unknown, so its goroutines
#     are not followed (no offset is guessed): record -v says so, once, and it still runs.
#  e) The rest of the pipeline takes them as any outlier: with snapshots, summary.json holds both
#     waits, and report and show read it and name them.
#  f) Without --go-waits (the probes trap at each park and wakeup: opt-in), no goroutine wait.
set -u
. "$(dirname "$0")/lib.sh"
no_ust_wait

require_record gowaits

OUT=$TMPD/out ERR=$TMPD/err LOG=$TMPD/wl.log
WL_LOG=$LOG record_json "$OUT" "$ERR" -- -t 100ms -v --go-waits -- "$WL/gowaits" 300
is "$RC" 0 "record -t 100ms -v -- gowaits 300: exit 0"
ok 'ndjson_ok "$OUT"' "stdout is NDJSON" || diag_file "$OUT" "  stdout: "
diag_file "$LOG" "  workload: "
PID=$(wl_log_get "$LOG" pid)
read -r LOCK_T0 LOCK_T1 < <(awk '$1 == "lock" { print $2, $3; exit }' "$LOG")
read -r NAP_T0 NAP_T1 < <(awk '$1 == "nap" { print $2, $3; exit }' "$LOG")
ok '[ -n "$PID" ] && [ -n "${LOCK_T1:-}" ] && [ -n "${NAP_T1:-}" ]' \
	"gowaits ran and logged its pid and the spans of its waits"
LOCK_T0=${LOCK_T0:-0} LOCK_T1=${LOCK_T1:-0} NAP_T0=${NAP_T0:-0} NAP_T1=${NAP_T1:-0}
J() { jq -s -r "[.[] | select(.pid == ${PID:-0})] | $1" "$OUT" 2>/dev/null; }
NAMES='[.user_stack.frames[]? | .symbol // ""]'
SUMMARY="\(.tid) \(.kind) \(.duration_ns / 1e6) ms \(.cause): \($NAMES | join(\" < \")) \(.flags)"
J "map(\"$SUMMARY\") | .[]" |
	while IFS= read -r line; do diag "  $line"; done

# goroutine_wait NAME FUNCTION T0 T1 CAUSE INNER: the checks of one goroutine's wait, the outlier
# whose frames name FUNCTION; INNER is the frame that must be below FUNCTION.
goroutine_wait() {
	local name=$1 fn=$2 t0=$3 t1=$4 cause=$5 inner=$6
	local W="map(select($NAMES | any(. == \"$fn\")))"
	is "$(J "$W | length")" 1 "$name: one outlier names $fn" || return
	W="$W | .[0]"
	is "$(J "$W | .kind")" sleep "$name: kind sleep (off-CPU, outside a syscall)"
	is "$(J "$W | .start_ns >= $t0 and .end_ns <= $t1")" true \
		"$name: it lies within the span the workload logged around the wait"
	between "$(J "$W | .duration_ns")" 150000000 $((t1 - t0)) \
		"$name: its duration is the wait's (the span is $(((t1 - t0) / 1000000)) ms)"
	is "$(J "$W | .blocked_ns == .duration_ns")" true "$name: all of it blocked"
	is "$(J "$W | .user_stack.source")" frame-pointer \
		"$name: its user stack is a frame-pointer walk"
	is "$(J "$W | $NAMES | (index(\"$inner\") // 99) < (index(\"$fn\") // -1)")" true \
		"$name: its frames are the goroutine's: $inner below $fn"
	is "$(J "$W | $NAMES | .[0]")" runtime.gopark \
		"$name: innermost, where it parked: runtime.gopark"
	is "$(J "$W | .flags | any(. == \"goroutine\")")" true "$name: flag goroutine"
	is "$(J "$W | .flags | any(test(\"^goroutine [0-9]+$\"))")" true \
		"$name: flag 'goroutine GOID'"
	is "$(J "$W | .cause")" "$cause" "$name: cause '$cause'"
	is "$(J "$W | .tid > 0 and .comm == \"gowaits\"")" true \
		"$name: its thread, the M it parked on, is one of gowaits'"
}

# a) the mutex wait, b) the sleep.
goroutine_wait "mutex wait" main.contend "$LOCK_T0" "$LOCK_T1" "Go: sync.Mutex.Lock" \
	'sync.(*Mutex).lockSlow'
goroutine_wait "sleep" main.nap "$NAP_T0" "$NAP_T1" "Go: sleep" time.Sleep

# c) the idle worker.
is "$(J "map(select($NAMES | any(. == \"main.idler\"))) | length")" 0 \
	"the worker goroutine waiting for work on a channel (main.idler) is not an outlier"
WL_LOG=$TMPD/wl2.log record_json "$OUT" "$ERR" -- -t 100ms --include-idle --go-waits -- "$WL/gowaits" 300
is "$RC" 0 "record -t 100ms --include-idle -- gowaits 300: exit 0"
PID=$(wl_log_get "$TMPD/wl2.log" pid)
IDLER="map(select($NAMES | any(. == \"main.idler\")))"
is "$(J "$IDLER | length")" 1 "with --include-idle, it is: the policy judged it idle"
is "$(J "$IDLER | .[0].flags | any(. == \"go-wait: chan receive\")")" true \
	"parked in chan receive (flag go-wait)"
is "$(J "$IDLER | .[0].cause")" "Go: chan receive" "its cause names its wait: Go: chan receive"

# d) no DWARF: built as the Makefile builds the Go workloads, with -ldflags=-w.
require go
NODWARF=$TMPD/gowaits-nodwarf
GOENV=off GO111MODULE=off GOFLAGS= CGO_ENABLED=0 GOCACHE=$BUILD/go/cache GOPATH=$BUILD/go/path \
	go build -buildvcs=false -ldflags=-w -o "$NODWARF" "$ROOT/tests/workloads/go/waits.go" \
	2>"$TMPD/go.err"
ok '[ -x "$NODWARF" ]' "gowaits built with -ldflags=-w" || diag_file "$TMPD/go.err" "  go: "
WL_LOG=$TMPD/wl3.log record_json "$OUT" "$ERR" -- -t 100ms -v --go-waits -- "$NODWARF" 300
is "$RC" 0 "record -t 100ms -v -- gowaits-nodwarf 300: exit 0"
PID=$(wl_log_get "$TMPD/wl3.log" pid)
is "$(grep -c 'a Go binary without DWARF.*not followed' "$ERR")" 1 \
	"record -v says once that its goroutines are not followed (no DWARF)" ||
	diag_file "$ERR" "  stderr: "
is "$(J 'map(select(.flags | any(. == "goroutine"))) | length')" 0 "no goroutine wait is reported"

# e) snapshots, report, show.
require_lttng
SNAPS=$TMPD/snaps
record_snap snap -t 100ms --go-waits -o "$SNAPS" -- "$WL/gowaits" 300
is "$RC" 0 "record -t 100ms -o DIR -- gowaits 300 (snapshots): exit 0"
SUMS=$(grep -l '"goroutine"' "$SNAPS"/*/summary.json 2>/dev/null)
is "$(jq -r -s '[.[].outliers[] | select(.flags | any(. == "goroutine")) | .cause] | unique |
	join(",")' $SUMS 2>/dev/null)" "Go: sleep,Go: sync.Mutex.Lock" \
	"the snapshots' summary.json hold the two goroutine waits"
run_latsnap "$TMPD/report" "$TMPD/report.err" report "$SNAPS"
is "$RC" 0 "report DIR: exit 0" || diag_file "$TMPD/report.err" "  stderr: "
ok 'grep -q "Go: sync.Mutex.Lock" "$TMPD/report" && grep -q "Go: sleep" "$TMPD/report"' \
	"report names both causes" || diag_file "$TMPD/report" "  report: "
SNAP=$(dirname "$(grep -l 'main.contend' $SUMS /dev/null | head -n 1)")
run_latsnap "$TMPD/show" "$TMPD/show.err" show "$SNAP"
is "$RC" 0 "show DIR/ID of the mutex wait's snapshot: exit 0" || diag_file "$TMPD/show.err" "  stderr: "
ok 'grep -q "sync.(\*Mutex).lockSlow" "$TMPD/show" && grep -q "main.contend" "$TMPD/show"' \
	"show lists its goroutine frames" || diag_file "$TMPD/show" "  show: " 60

# f) the probes are opt-in.
WL_LOG=$TMPD/wl4.log record_json "$OUT" "$ERR" -- -t 100ms -v -- "$WL/gowaits" 300
is "$RC" 0 "record -t 100ms (no --go-waits) -- gowaits 300: exit 0"
is "$(jcount "$OUT" 'select(.flags | any(. == "goroutine"))')" 0 \
	"without --go-waits, no goroutine wait is timed"

done_testing
