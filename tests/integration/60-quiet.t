#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# No false positives: a million fast getppid() calls give no outlier; idle
# waits (epoll_wait with a timeout) are not outliers unless --include-idle.
set -u
. "$(dirname "$0")/lib.sh"
no_ust_wait

require_record loop epollidle sleeper

OUT=$TMPD/out ERR=$TMPD/err

record_json "$OUT" "$ERR" -- -t 50ms -- "$WL/loop" 1000000
is "$RC" 0 "record -- loop 1000000: exit 0"
is "$(jcount "$OUT" "$NOT_LOADING")" 0 "a million fast syscalls: no outlier" || dump_outliers "$OUT"
loading_note "$OUT"
diag "took ${ELAPSED_MS} ms in all"

# -t 1ms: a getppid never blocks. On a busy machine one may be preempted for over a millisecond,
# and then it must be reported as what it is, time on the runqueue; in a VM the host may also
# steal the vCPU in the middle of one, which shows as on-CPU time without a switch. Never as a
# wait.
record_json "$OUT" "$ERR" -- -t 1ms -s 1s -- "$WL/loop" 1000000
is "$(jcount "$OUT" 'select(.syscall == "getppid" and .blocked_ns > 0)')" 0 \
	"-t 1ms: no getppid outlier claims it blocked" || dump_outliers "$OUT"
is "$(jcount "$OUT" 'select(.syscall == "getppid" and .runqueue_ns > 0.5 * .duration_ns and .cause != "waiting for CPU")')" 0 \
	"-t 1ms: a preempted getppid is waiting for CPU" || dump_outliers "$OUT"
is "$(jcount "$OUT" 'select(.syscall == "getppid" and .runqueue_ns <= 0.5 * .duration_ns and .switches > 0)')" 0 \
	"-t 1ms: a getppid that switched out did so for the runqueue" || dump_outliers "$OUT"

LOG=$TMPD/wl.log
WL_LOG=$LOG record_json "$OUT" "$ERR" -- -t 50ms -- "$WL/epollidle" 200 3
is "$RC" 0 "record -- epollidle 200 3: exit 0"
is "$(jcount "$OUT" "$NOT_LOADING")" 0 "epoll_wait is idle: no outlier by default" || dump_outliers "$OUT"
loading_note "$OUT"
is "$(grep -c '^epoll ' "$LOG")" 3 "the workload did wait three times"

CONF=$TMPD/idle.conf
for how in flag config; do
	if [ $how = flag ]; then
		record_json "$OUT" "$ERR" -- -t 50ms --include-idle -- "$WL/epollidle" 200 3
	else
		printf '# idle too\ninclude-idle = true\n' >"$CONF"
		record_json "$OUT" "$ERR" -- -t 50ms -c "$CONF" -- "$WL/epollidle" 200 3
	fi
	is "$RC" 0 "include-idle ($how): exit 0"
	SEL='select(.kind == "syscall" and (.syscall == "epoll_wait" or .syscall == "epoll_pwait" or .syscall == "epoll_pwait2"))'
	is "$(jcount "$OUT" "$SEL")" 3 "include-idle ($how): three epoll_wait outliers" || dump_outliers "$OUT"
	is "$(jq -s "[.[] | $SEL | .duration_ns >= 190000000 and .duration_ns <= 300000000] | length > 0 and all" "$OUT" 2>/dev/null)" \
		true "include-idle ($how): each lasts ~200 ms (190-300 ms)"
	is "$(jq -s "[.[] | $SEL | .comm == \"epollidle\" and .blocked_ns > 0.8 * .duration_ns] | length > 0 and all" "$OUT" 2>/dev/null)" \
		true "include-idle ($how): comm epollidle, mostly blocked"
done

# The idle list is settable: naming the sleep calls idle silences a sleeper, by flag or config;
# an unknown name is a usage error naming it.
record_json "$OUT" "$ERR" -- -t 50ms --idle-syscalls nanosleep,clock_nanosleep -- "$WL/sleeper" 100 1
is "$RC" 0 "--idle-syscalls nanosleep,clock_nanosleep -- sleeper: exit 0"
is "$(jcount "$OUT" "$NOT_LOADING")" 0 "a sleep on the idle list is no outlier" || dump_outliers "$OUT"
loading_note "$OUT"
printf 'idle-syscalls = clock_nanosleep, nanosleep\n' >"$CONF"
record_json "$OUT" "$ERR" -- -t 50ms -c "$CONF" -- "$WL/sleeper" 100 1
is "$(jcount "$OUT" "$NOT_LOADING")" 0 "idle-syscalls from the config file: no outlier" || dump_outliers "$OUT"
loading_note "$OUT"
record_json "$OUT" "$ERR" -- -t 50ms -c "$CONF" --include-idle -- "$WL/sleeper" 100 1
is "$(jcount "$OUT" 'select(.syscall == "clock_nanosleep" or .syscall == "nanosleep")')" 1 \
	"--include-idle reports the sleep again"
record_json "$OUT" "$ERR" -- --idle-syscalls epoll_wait,not_a_syscall -- true
is "$RC" 2 "an unknown syscall in --idle-syscalls: exit 2"
like "$(cat "$ERR")" "not_a_syscall" "the message names the unknown syscall"

done_testing
