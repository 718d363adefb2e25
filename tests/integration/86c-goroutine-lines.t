#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A goroutine's frames carry their source lines (issue 47): the Go binary's DWARF line table
# says where in the program's source each frame of a goroutine's wait is, and nothing at review
# time can (a Go program loads no lttng-ust: no statedump for show to symbolize it again).
# `gowaits 300` (tests/workloads/go/waits.go) sleeps in main.nap: its outlier's main.nap frame
# is waits.go at the line of nap's time.Sleep, and main.main's at the line that calls nap; the
# line is the call's in the frame's own function, also where the callee was inlined (runtime.
# semacquire1 calls goparkunlock, inlined, in sema.go). show prints the file:line of each.
# b) A goroutine's waker: in `gowake 100` (tests/workloads/go/wake.go) main.receive waits on a
# channel that main.sender, on a thread of its own, sends on 100 ms later. The wait's waker is
# the sender's thread, and flag "waker-goroutine GOID" names the sender's goroutine (the one
# that ran runtime.ready). A channel receive is a goroutine waiting for work to the idle policy:
# --include-idle.
set -u
. "$(dirname "$0")/lib.sh"
no_ust_wait

require_record gowaits gowake
require_lttng

SRC=$ROOT/tests/workloads/go/waits.go
# The line of the first $2 in function $1 of waits.go.
line_in() { awk -v fn="^func $1\\\\(" -v pat="$2" '$0 ~ fn { f = 1 } f && index($0, pat) { print NR; exit }' "$SRC"; }
NAP_LINE=$(line_in nap 'time.Sleep(d)')
CALL_LINE=$(line_in main 'nap(')
ok '[ -n "$NAP_LINE" ] && [ -n "$CALL_LINE" ]' "waits.go: nap sleeps on line $NAP_LINE, main calls it on line $CALL_LINE"

OUT=$TMPD/out ERR=$TMPD/err
record_json "$OUT" "$ERR" -- -t 100ms --go-waits -- "$WL/gowaits" 300
is "$RC" 0 "record -t 100ms --go-waits -- gowaits 300: exit 0"
NAP='[.[] | select([.user_stack.frames[]?.symbol] | any(. == "main.nap"))] | .[0]'
F() { jq -r -s "$NAP | .user_stack.frames[] | select(.symbol == \"$1\") | \"\(.file):\(.line)\"" "$OUT" | head -n 1; }
diag "the sleep's frames: $(jq -r -s "$NAP | [.user_stack.frames[]? | \"\(.symbol) \(.file // \"-\"):\(.line // \"-\")\"] | join(\" < \")" "$OUT")"
is "$(F main.nap)" "$SRC:$NAP_LINE" "main.nap's frame: waits.go:$NAP_LINE, its time.Sleep"
is "$(F main.main)" "$SRC:$CALL_LINE" "main.main's frame: waits.go:$CALL_LINE, where it calls nap"
like "$(F time.Sleep)" '/src/runtime/time\.go:[0-9]+$' "time.Sleep's frame: the Go runtime's time.go"
MUTEX='[.[] | select([.user_stack.frames[]?.symbol] | any(. == "main.contend"))] | .[0]'
like "$(jq -r -s "$MUTEX | .user_stack.frames[] | select(.symbol == \"runtime.semacquire1\") | \"\(.file):\(.line)\"" "$OUT")" \
	'/src/runtime/sema\.go:[0-9]+$' "runtime.semacquire1's frame: sema.go (goparkunlock, inlined there, is proc.go's)"

SNAPS=$TMPD/snaps
record_snap snap -t 100ms --go-waits -o "$SNAPS" -- "$WL/gowaits" 300
is "$RC" 0 "record -t 100ms --go-waits -o DIR -- gowaits 300 (snapshots): exit 0"
SNAP=$(dirname "$(grep -l 'main.nap' "$SNAPS"/*/summary.json /dev/null | head -n 1)")
is "$(jq -r '[.outliers[].user_stack.frames[]? | select(.symbol == "main.nap") | .line] | .[0]' \
	"$SNAP/summary.json" 2>/dev/null)" "$NAP_LINE" "summary.json keeps main.nap's line"
run_latsnap "$TMPD/show" "$TMPD/show.err" show "$SNAP"
is "$RC" 0 "show DIR/ID: exit 0" || diag_file "$TMPD/show.err" "  stderr: "
ok 'grep -q "main.nap+0x[0-9a-f]*  .*waits.go:$NAP_LINE" "$TMPD/show"' \
	"show prints main.nap's frame with waits.go:$NAP_LINE" || diag_file "$TMPD/show" "  show: " 60

# b) the waker.
LOG=$TMPD/wake.log
WL_LOG=$LOG record_json "$OUT" "$ERR" -- -t 50ms --include-idle --go-waits -- "$WL/gowake" 100
is "$RC" 0 "b) record -t 50ms --include-idle --go-waits -- gowake 100: exit 0"
read -r SENDER_GOID SENDER_TID < <(awk '$1 == "sender" { print $2, $3; exit }' "$LOG")
RECV='[.[] | select(.flags | any(. == "go-wait: chan receive"))] | .[0]'
R() { jq -r -s "$RECV | $1" "$OUT" 2>/dev/null; }
diag "the receive: $(R '{tid, waker, flags} | tostring')"
between "$(R .duration_ns)" 80000000 2000000000 "b) main.receive waited ~100 ms on its channel"
is "$(R .waker.tid)" "${SENDER_TID:-?}" "b) its waker is the sender's thread"
is "$(R '.flags | any(. == "waker-goroutine '"${SENDER_GOID:-?}"'")')" true \
	"b) flag waker-goroutine ${SENDER_GOID:-?}: the sender's goroutine"
is "$(R '.user_stack.frames[] | select(.symbol == "main.receive") | "\(.file):\(.line)"')" \
	"$ROOT/tests/workloads/go/wake.go:$(awk '/^func receive\(/ { f = 1 } f && /return <-ch/ { print NR; exit }' \
		"$ROOT/tests/workloads/go/wake.go")" "b) main.receive's frame: the line that receives"

done_testing
