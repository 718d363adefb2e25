#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# File locks (issue 47): in `filelock 150 KIND`, process "lockholder" holds an exclusive lock on a
# file for 150 ms while process "lockwaiter" asks for it: an outlier of ~150 ms in lockwaiter,
# whose cause names the file lock and whose kernel stack proves it, woken by lockholder. KIND 0
# is flock(LOCK_EX), 1 fcntl(F_SETLKW), 2 fcntl(F_OFD_SETLKW). Then Debian's PHP 8.2 CLI doing
# the same with PHP's flock() (tests/workloads/filelock.php), as a PHP-FPM worker would.
set -u
. "$(dirname "$0")/lib.sh"

require_record filelock
require php

OUT=$TMPD/out ERR=$TMPD/err

check_wait() { # LABEL SYSCALL CAUSE FRAME_RE
	local label=$1 sc=$2 cause=$3 frame=$4 O=$TMPD/o.json
	jq -s -c "[.[] | select(.syscall == \"$sc\")] | .[0] // {}" "$OUT" >"$O" 2>/dev/null ||
		echo '{}' >"$O"
	J() { jq -r "$1" "$O" 2>/dev/null; }
	diag "kernel stack: $(J '[.kernel_stacks[0].frames[]? | .symbol] | join(" < ")')"
	is "$(J .cause)" "$cause" "$label: the cause names the file lock"
	is "$(J "[.kernel_stacks[]?.frames[]?.symbol // empty] | any(test(\"^($frame)\$\"))")" true \
		"$label: a kernel frame is $frame"
	between "$(J .duration_ns)" 100000000 2000000000 "$label: it waited ~ the hold"
	WAITED_TID=$(J .tid)
}

kinds=(flock fcntl fcntl)
names=("flock(LOCK_EX)" "fcntl(F_SETLKW)" "fcntl(F_OFD_SETLKW)")
causes=("Waiting for a file lock (flock)" "Waiting for a file lock (fcntl)" \
	"Waiting for a file lock (fcntl)")
frames=("locks_lock_inode_wait|__do_sys_flock" fcntl_setlk fcntl_setlk)
for k in 0 1 2; do
	label=${names[$k]}
	LOG=$TMPD/wl.$k.log
	WL_LOG=$LOG record_json "$OUT" "$ERR" -- -t 50ms -- "$WL/filelock" 150 $k
	is "$RC" 0 "$label: record -t 50ms -- filelock 150 $k: exit 0"
	dump_outliers "$OUT"
	is "$(jcount "$OUT" "select(.syscall == \"${kinds[$k]}\")")" 1 \
		"$label: exactly one ${kinds[$k]} outlier"
	check_wait "$label" "${kinds[$k]}" "${causes[$k]}" "${frames[$k]}"
	is "$WAITED_TID" "$(awk '$1 == "tid" && $2 == "lockwaiter" { print $3 }' "$LOG")" \
		"$label: in thread lockwaiter"
	is "$(jq -r -s "[.[] | select(.syscall == \"${kinds[$k]}\")] | .[0].waker.comm" "$OUT")" \
		lockholder "$label: woken by lockholder"
done

# PHP: the lock file in our own directory, never a shared one.
LOCKF=$TMPD/php.lock
record_json "$OUT" "$ERR" -- -t 50ms -- php "$ROOT/tests/workloads/filelock.php" "$LOCKF" 300
is "$RC" 0 "PHP: record -t 50ms -- php filelock.php FILE 300: exit 0"
dump_outliers "$OUT"
is "$(jcount "$OUT" 'select(.syscall == "flock")')" 1 "PHP: exactly one flock outlier"
check_wait "PHP flock()" flock "Waiting for a file lock (flock)" \
	"locks_lock_inode_wait|__do_sys_flock"
like "$(grep -o 'waiter [0-9]*' "$ERR")" "waiter $WAITED_TID" "PHP: in the waiting PHP process"

done_testing
