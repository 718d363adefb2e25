#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# PHP 8.2 frames in the unwound user stack (man latsnap, USER SYMBOLS, "PHP 8.2 frames"): Debian
# 12's php8.2 (CLI, non-thread-safe) runs tests/workloads/phpframes.php, whose serve() calls
# handle_request() in a loop, which sleeps 200 ms in usleep(); then take_lock() waits in flock()
# for a lock a flock(1) child holds. The sleep's unwound stack names handle_request, serve and
# {main}, with the script's path and the lines they were at, on the inner side of the execute_ex
# frame that runs them; the flock wait names take_lock and the method that called it,
# Locker::acquire. Without the preload library's PHP walk the stack shows only the Zend engine's
# C frames. --include-idle: the waits are what this file is about, not whether the idle policy
# calls them work. PHP82=PATH runs another PHP 8.2 CLI.
set -u
. "$(dirname "$0")/lib.sh"

PHP=${PHP82:-php8.2}
require_record sleeper
require "$PHP" flock
[ -r "$BUILD/liblatsnap.so" ] || skip_all "$BUILD/liblatsnap.so not built (run make)"
case $("$PHP" -r 'echo PHP_MAJOR_VERSION, ".", PHP_MINOR_VERSION, PHP_ZTS ? " zts" : "";' 2>/dev/null) in
8.2) ;;
*) skip_all "$PHP is not a non-thread-safe PHP 8.2" ;;
esac
no_ust_wait

T=$TMPD
SCRIPT=$ROOT/tests/workloads/phpframes.php
# The lines the script waits at, from the script itself.
line_of() { grep -n "// $1\$" "$SCRIPT" | cut -d: -f1; }
SLEEP_LINE=$(line_of SLEEP)
SERVE_CALL=$(line_of SERVE-CALL)
MAIN_CALL=$(line_of MAIN-CALL)
LOCK_LINE=$(line_of LOCK-WAIT)
TAKE_CALL=$(line_of TAKE-CALL)
ACQUIRE_CALL=$(line_of ACQUIRE-CALL)

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

# check_stack TAG OUT: the sleep's frames, and the flock wait's.
check_stack() {
	local tag=$1 out=$2 f i
	f=$(frames_text "$out" "$(sel handle_request)")
	ok "[ -n \"\$f\" ]" "$tag: the 200 ms usleep's unwound stack names handle_request" ||
		diag_file "$out" "  out: "
	i=$(printf '%s\n' "$f" | grep -n '^handle_request|' | head -1 | cut -d: -f1)
	is "$(printf '%s\n' "$f" | sed -n "${i:-0},$((${i:-0} + 2))p")" \
		"handle_request|$SCRIPT|$SLEEP_LINE
serve|$SCRIPT|$SERVE_CALL
{main}|$SCRIPT|$MAIN_CALL" \
		"$tag: handle_request at :$SLEEP_LINE, serve at :$SERVE_CALL, {main} at :$MAIN_CALL"
	like "$(printf '%s\n' "$f" | sed -n "$((${i:-0} + 3))p")" '^execute_ex\|.*\|-$' \
		"$tag: then the execute_ex frame that ran them (a native frame)"
	like "$(printf '%s\n' "$f" | sed -n "$((${i:-0} - 1))p")" '^[^|]*\|[^|]*\|-$' \
		"$tag: the native frames usleep called stay on the inner side"
	printf '%s\n' "$f" | while IFS= read -r l; do diag "    $l"; done
	f=$(frames_text "$out" "$(sel take_lock)")
	is "$(printf '%s\n' "$f" | grep -A2 '^take_lock|')" \
		"take_lock|$SCRIPT|$LOCK_LINE
Locker::acquire|$SCRIPT|$ACQUIRE_CALL
{main}|$SCRIPT|$TAKE_CALL" \
		"$tag: the flock wait names take_lock at :$LOCK_LINE, the method Locker::acquire, {main}"
}

# --- what the program does without latsnap ---
"$PHP" "$SCRIPT" 3 "$T/lock" >"$T/plain.out" 2>"$T/plain.err"
is "$?" 3 "without latsnap: phpframes.php exits 3 (as asked)"

# --- a) record --json, no snapshot ---
RECORD_EXPECT_RC=3 record_json "$T/a.out" "$T/a.err" --include-idle -t 50ms -- \
	"$PHP" "$SCRIPT" 3 "$T/lock"
is "$RC" 3 "a) record exits with the program's status (3)"
is "$(grep -Fx -f "$T/plain.out" "$T/a.err")" "$(cat "$T/plain.out")" \
	"a) the program's output is unchanged, on stderr (--json: stdout is JSON only)"
check_stack a "$T/a.out"

# --- b) with snapshots: the summary and show ---
RECORD_EXPECT_RC=3 record_snap b --include-idle -t 50ms -o "$T/snaps" -- \
	"$PHP" "$SCRIPT" 3 "$T/lock"
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
		"handle_request \\(phpframes.php:$SLEEP_LINE\\)" \
		"b) show names handle_request (phpframes.php:$SLEEP_LINE)" ||
		diag_file "$T/show.err" "  show: "
	like "$(grep -F 'serve' "$T/show.txt" | head -1)" "serve \\(phpframes.php:$SERVE_CALL\\)" \
		"b) show names serve (phpframes.php:$SERVE_CALL)"
fi

done_testing
