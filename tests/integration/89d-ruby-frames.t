#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Ruby 3.1 frames in the unwound user stack (man latsnap, USER SYMBOLS, "Ruby 3.1 frames"):
# Debian 12's ruby (3.1) runs tests/workloads/rbframes.rb, whose serve() calls handle_request()
# in a loop (through a block of Integer#times), which sleeps 200 ms; then take_lock() waits
# 200 ms for a Mutex another thread holds. The sleep's unwound stack names handle_request, then
# "block in serve", with the script's path and the lines they were at, on the inner side of the
# rb_vm_exec frame that runs them, and serve and <main> at the next rb_vm_exec; the Mutex wait
# names take_lock. Without the preload library's Ruby walk the stack shows only libruby's C
# frames. --include-idle: the waits are what this file is about, not whether the idle policy
# calls them work. RUBY31=PATH runs another Ruby 3.1.
set -u
. "$(dirname "$0")/lib.sh"

RB=${RUBY31:-ruby}
require_record sleeper
require "$RB"
[ -r "$BUILD/liblatsnap.so" ] || skip_all "$BUILD/liblatsnap.so not built (run make)"
case $("$RB" -e 'print RUBY_VERSION' 2>/dev/null) in
3.1.*) ;;
*) skip_all "$RB is not Ruby 3.1" ;;
esac
no_ust_wait

T=$TMPD
SCRIPT=$ROOT/tests/workloads/rbframes.rb
# The lines the script waits at, from the script itself.
line_of() { grep -n "# $1\$" "$SCRIPT" | cut -d: -f1; }
SLEEP_LINE=$(line_of SLEEP)
SERVE_CALL=$(line_of SERVE-CALL)
SERVE_LOOP=$(line_of SERVE-LOOP)
LOCK_LINE=$(line_of LOCK-WAIT)
TAKE_CALL=$(line_of TAKE-CALL)

sel() {
	printf 'select(.user_stack.source == "unwind" and
		([.user_stack.frames[]? | .symbol] | index("%s")) != null)' "$1"
}

# frames_text OUT SEL: the selected outlier's user frames, innermost first, one a line:
# "symbol|module|line" (line "-" for a native frame).
frames_text() {
	grep '^{' "$1" | jq -s -r "[.[] | $2][0] // {} | .user_stack.frames[]? |
		\"\(.symbol // \"?\")|\(.module // \"?\")|\(.line // \"-\")\"" 2>/dev/null
}

# check_stack TAG OUT: the sleep's frames, and the Mutex wait's.
check_stack() {
	local tag=$1 out=$2 f i
	f=$(frames_text "$out" "$(sel handle_request)")
	ok "[ -n \"\$f\" ]" "$tag: the 200 ms sleep's unwound stack names handle_request" ||
		diag_file "$out" "  out: "
	i=$(printf '%s\n' "$f" | grep -n '^handle_request|' | head -1 | cut -d: -f1)
	is "$(printf '%s\n' "$f" | sed -n "${i:-0}p")" "handle_request|$SCRIPT|$SLEEP_LINE" \
		"$tag: handle_request at $SCRIPT:$SLEEP_LINE"
	is "$(printf '%s\n' "$f" | sed -n "$((${i:-0} + 1))p")" "block in serve|$SCRIPT|$SERVE_CALL" \
		"$tag: then its caller, the block in serve, at $SCRIPT:$SERVE_CALL"
	like "$(printf '%s\n' "$f" | sed -n "$((${i:-0} + 2))p")" '^rb_vm_exec\|.*\|-$' \
		"$tag: then the rb_vm_exec frame that ran them (a native frame)"
	like "$(printf '%s\n' "$f" | sed -n "$((${i:-0} - 1))p")" '^[^|]*\|[^|]*\|-$' \
		"$tag: the native frame the sleep called stays on the inner side"
	is "$(printf '%s\n' "$f" | grep -A1 '^serve|')" \
		"serve|$SCRIPT|$SERVE_LOOP
<main>|$SCRIPT|$(grep -n '^serve(2)' "$SCRIPT" | cut -d: -f1)" \
		"$tag: further out, serve at $SCRIPT:$SERVE_LOOP (Integer#times), called from <main>"
	printf '%s\n' "$f" | while IFS= read -r l; do diag "    $l"; done
	f=$(frames_text "$out" "$(sel take_lock)")
	is "$(printf '%s\n' "$f" | grep -A1 '^take_lock|')" \
		"take_lock|$SCRIPT|$LOCK_LINE
<main>|$SCRIPT|$TAKE_CALL" \
		"$tag: the Mutex wait names take_lock at $SCRIPT:$LOCK_LINE, called from <main>:$TAKE_CALL"
}

# check_holder TAG OUT: the thread that holds the Mutex sleeps 200 ms in a block of a block of
# <main>; a thread of Thread.new is walked as the main thread is. (Now and then its signal finds
# it unready and its outlier has no unwound stack: then there is nothing to name.)
check_holder() {
	local tag=$1 out=$2 f
	f=$(grep '^{' "$out" | jq -r 'select(.tid != .pid and .user_stack.source == "unwind") |
		[.user_stack.frames[]? | select(.line != null) | "\(.symbol)|\(.line)"] | join(" ")' |
		head -1)
	if [ -n "$f" ]; then
		is "$f" "block (2 levels) in <main>|$(line_of HOLD-SLEEP) block in <main>|$(line_of HOLD-LOCK)" \
			"$tag: the Thread.new thread's sleep names its blocks, at their lines"
	else
		ok 0 "$tag: the Thread.new thread's outlier has no unwound stack this time # SKIP"
	fi
}

# --- what the program does without latsnap ---
"$RB" "$SCRIPT" 3 >"$T/plain.out" 2>"$T/plain.err"
is "$?" 3 "without latsnap: rbframes.rb exits 3 (as asked)"

# --- a) record --json, no snapshot ---
RECORD_EXPECT_RC=3 record_json "$T/a.out" "$T/a.err" --include-idle -t 50ms -- "$RB" "$SCRIPT" 3
is "$RC" 3 "a) record exits with the program's status (3)"
is "$(grep -Fx -f "$T/plain.out" "$T/a.err")" "$(cat "$T/plain.out")" \
	"a) the program's output is unchanged, on stderr (--json: stdout is JSON only)"
check_stack a "$T/a.out"
check_holder a "$T/a.out"

# --- b) with snapshots: the summary and show ---
RECORD_EXPECT_RC=3 record_snap b --include-idle -t 50ms -o "$T/snaps" -- "$RB" "$SCRIPT" 3
is "$RC" 3 "b) record -o exits with the program's status (3)"
SNAP=
for d in "$T"/snaps/*/; do
	if jq -e '.outliers[]? | select(([.user_stack.frames[]? | .symbol] |
		index("handle_request")) != null)' "$d/summary.json" >/dev/null 2>&1; then
		SNAP=${d%/}
		break
	fi
done
ok "[ -n \"$SNAP\" ]" "b) a snapshot's summary.json holds the sleep with handle_request"
if [ -n "$SNAP" ]; then
	"$LATSNAP" show "$SNAP" >"$T/show.txt" 2>"$T/show.err"
	is "$?" 0 "b) latsnap show exits 0"
	like "$(grep -F 'handle_request' "$T/show.txt" | head -1)" \
		"handle_request \\(rbframes.rb:$SLEEP_LINE\\)" \
		"b) show names handle_request (rbframes.rb:$SLEEP_LINE)" ||
		diag_file "$T/show.err" "  show: "
	like "$(grep -F 'block in serve' "$T/show.txt" | head -1)" \
		"block in serve \\(rbframes.rb:$SERVE_CALL\\)" \
		"b) show names block in serve (rbframes.rb:$SERVE_CALL)"
fi

# --- c) a C program: no Ruby frame ---
record_json "$T/c.out" "$T/c.err" -t 50ms -- "$WL/sleeper" 150 2
is "$RC" 0 "c) record -- sleeper: exit 0"
ok "[ $(jcount "$T/c.out" 'select(.user_stack.source == "unwind")') -ge 1 ]" \
	"c) sleeper's outliers have unwound stacks"
is "$(jcount "$T/c.out" 'select([.user_stack.frames[]? | has("line")] | any)')" 0 \
	"c) no frame of a C program is an interpreter's frame"

done_testing
