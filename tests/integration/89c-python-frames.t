#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Python 3.11 frames in the unwound user stack (man latsnap, PYTHON FRAMES): Debian 12's
# /usr/bin/python3 runs tests/workloads/pyframes.py, whose thread waits 200 ms on a
# threading.Lock in wait_for_lock(), called from handle(), and whose main thread then sleeps
# 200 ms in nap(). The lock wait's unwound stack names wait_for_lock then handle, with the
# script's path and the lines they were at, on the inner side of the _PyEval_EvalFrameDefault
# frame that runs them; nap's sleep names nap. Without the preload library's Python walk the
# stack shows only the interpreter's C frames. The waits are what this file is about, not whether
# the idle policy calls them work: --include-idle. A frame linked to unmapped memory ends the walk
# there and harms nothing; a C program's stacks get no Python frame. PYTHON311=PATH runs another
# CPython 3.11 (pyenv's 3.11.7, whose libpython3.11.so holds the interpreter, passes too).
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

T=$TMPD
SCRIPT=$ROOT/tests/workloads/pyframes.py
# The lines the script waits at, from the script itself.
line_of() { grep -n "# $1\$" "$SCRIPT" | cut -d: -f1; }
LOCK_LINE=$(line_of LOCK-WAIT)
HANDLE_LINE=$(line_of HANDLE-CALL)
SLEEP_LINE=$(line_of SLEEP)

# The outlier whose user frames include SYMBOL (the first one).
LOCK_SEL='select(.user_stack.source == "unwind" and
	([.user_stack.frames[]? | .symbol] | index("wait_for_lock")) != null)'
NAP_SEL='select(.user_stack.source == "unwind" and
	([.user_stack.frames[]? | .symbol] | index("nap")) != null)'

# frames_text OUT SEL: the selected outlier's user frames, innermost first, one a line:
# "symbol module line" (line "-" for a native frame).
frames_text() {
	grep '^{' "$1" | jq -s -r "[.[] | $2][0] // {} | .user_stack.frames[]? |
		\"\(.symbol // \"?\") \(.module // \"?\") \(.line // \"-\")\"" 2>/dev/null
}

# check_stack TAG OUT: the lock wait's frames, and nap's.
check_stack() {
	local tag=$1 out=$2 f i
	f=$(frames_text "$out" "$LOCK_SEL")
	ok "[ -n \"\$f\" ]" "$tag: the 200 ms lock wait's unwound stack names wait_for_lock" ||
		diag_file "$out" "  out: "
	i=$(printf '%s\n' "$f" | grep -n '^wait_for_lock ' | head -1 | cut -d: -f1)
	is "$(printf '%s\n' "$f" | sed -n "${i:-0}p")" "wait_for_lock $SCRIPT $LOCK_LINE" \
		"$tag: wait_for_lock at $SCRIPT:$LOCK_LINE"
	is "$(printf '%s\n' "$f" | sed -n "$((${i:-0} + 1))p")" "handle $SCRIPT $HANDLE_LINE" \
		"$tag: then its caller, handle, at $SCRIPT:$HANDLE_LINE"
	like "$(printf '%s\n' "$f" | sed -n "$((${i:-0} + 2))p")" '^_PyEval_EvalFrameDefault .* -$' \
		"$tag: then the _PyEval_EvalFrameDefault frame that ran them (a native frame)"
	like "$(printf '%s\n' "$f" | sed -n "$((${i:-0} - 1))p")" ' -$' \
		"$tag: the native frame the lock wait called stays on the inner side"
	printf '%s\n' "$f" | while IFS= read -r l; do diag "    $l"; done
	f=$(frames_text "$out" "$NAP_SEL")
	like "$(printf '%s\n' "$f" | grep '^nap ' | head -1)" "^nap $SCRIPT $SLEEP_LINE\$" \
		"$tag: the 200 ms time.sleep names nap at $SCRIPT:$SLEEP_LINE"
}

# --- what the program does without latsnap ---
"$PY" "$SCRIPT" 3 >"$T/plain.out" 2>"$T/plain.err"
PLAIN_RC=$?
is "$PLAIN_RC" 3 "without latsnap: pyframes.py exits 3 (as asked)"

# --- a) record --json, no snapshot ---
record_json_rc() {
	RECORD_EXPECT_RC=3 record_json "$@"
}
record_json_rc "$T/a.out" "$T/a.err" --include-idle -t 50ms -- "$PY" "$SCRIPT" 3
is "$RC" 3 "a) record exits with the program's status (3)"
is "$(grep -Fx -f "$T/plain.out" "$T/a.err")" "$(cat "$T/plain.out")" \
	"a) the program's output is unchanged, on stderr (--json: stdout is JSON only)"
check_stack a "$T/a.out"

# --- b) with snapshots: the summary, show and show --html ---
RECORD_EXPECT_RC=3 record_snap b --include-idle -t 50ms -o "$T/snaps" -- "$PY" "$SCRIPT" 3
is "$RC" 3 "b) record -o exits with the program's status (3)"
is "$(grep -Fx -f "$T/plain.out" "$T/b.err")" "$(cat "$T/plain.out")" \
	"b) the program's output is unchanged, on stderr (--json: stdout is JSON only)"
SNAP=
for d in "$T"/snaps/*/; do
	if jq -e '.outliers[]? | select(([.user_stack.frames[]? | .symbol] |
		index("wait_for_lock")) != null)' "$d/summary.json" >/dev/null 2>&1; then
		SNAP=${d%/}
		break
	fi
done
ok "[ -n \"$SNAP\" ]" "b) a snapshot's summary.json holds the lock wait with wait_for_lock"
if [ -n "$SNAP" ]; then
	# Every snapshot's outliers: the lock wait and nap's sleep may be in different ones.
	cat "$T"/snaps/*/summary.json | jq -c '.outliers[]' >"$T/b.summary" 2>/dev/null
	check_stack "b) summary.json" "$T/b.summary"
	"$LATSNAP" show "$SNAP" >"$T/show.txt" 2>"$T/show.err"
	is "$?" 0 "b) latsnap show exits 0"
	like "$(grep -F 'wait_for_lock' "$T/show.txt" | head -1)" \
		"wait_for_lock \\(pyframes.py:$LOCK_LINE\\)" "b) show names wait_for_lock (pyframes.py:$LOCK_LINE)" ||
		diag_file "$T/show.err" "  show: "
	"$LATSNAP" show --html "$T/page.html" "$SNAP" 2>"$T/html.err"
	is "$?" 0 "b) latsnap show --html exits 0"
	ok "grep -q wait_for_lock '$T/page.html'" "b) the page names wait_for_lock"
	"$LATSNAP" report "$T/snaps" >"$T/report.txt" 2>"$T/report.err"
	is "$?" 0 "b) latsnap report reads the summaries back (exit 0)" ||
		diag_file "$T/report.err" "  report: "
	"$LATSNAP" flame "$T/snaps" >"$T/flame.txt" 2>"$T/flame.err"
	like "$(grep -o "[^;]*wait_for_lock[^;]*" "$T/flame.txt" | head -1)" \
		"^wait_for_lock \\(pyframes.py:$LOCK_LINE\\)\$" "b) flame names wait_for_lock (pyframes.py:$LOCK_LINE)"
fi

# --- c) a frame whose link to its caller points at unmapped memory ---
# The preload library reads the interpreter's memory fault-safely: the walk ends at the bad link
# (bad_chain named, its callers not), and the program runs on as it would.
BAD_LINE=$(line_of BAD-SLEEP)
"$PY" "$SCRIPT" bad-chain >"$T/bad-plain.out" 2>&1
record_json "$T/d.out" "$T/d.err" --include-idle -t 50ms -- "$PY" "$SCRIPT" bad-chain
is "$RC" 0 "c) record -- pyframes.py bad-chain: exit 0, no crash"
is "$(grep -Fx -f "$T/bad-plain.out" "$T/d.err")" "$(cat "$T/bad-plain.out")" \
	"c) the program's output is unchanged, on stderr (--json: stdout is JSON only)"
BAD_SEL='select(.user_stack.source == "unwind" and
	([.user_stack.frames[]? | .symbol] | index("bad_chain")) != null)'
is "$(frames_text "$T/d.out" "$BAD_SEL" | grep -v ' -$')" "bad_chain $SCRIPT $BAD_LINE" \
	"c) its only Python frame is bad_chain at $SCRIPT:$BAD_LINE (the walk ended at the bad link)" ||
	frames_text "$T/d.out" "$BAD_SEL" | while IFS= read -r l; do diag "    $l"; done

# --- d) a C program: no Python frame ---
record_json "$T/c.out" "$T/c.err" -t 50ms -- "$WL/sleeper" 150 2
is "$RC" 0 "d) record -- sleeper: exit 0"
ok "[ $(jcount "$T/c.out" 'select(.user_stack.source == "unwind")') -ge 1 ]" \
	"d) sleeper's outliers have unwound stacks"
is "$(jcount "$T/c.out" 'select([.user_stack.frames[]? | has("line")] | any)')" 0 \
	"d) no frame of a C program is a Python frame"

done_testing
