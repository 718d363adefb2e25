#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The target never waits on latsnap's behalf (issue 17, item 2):
#  a) no snapshot session at all (--no-snapshot): the unwound stack of unwind-nofp (built
#     without frame pointers) still reaches the outlier, through the kernel, with the functions
#     only an unwinder finds;
#  b) with a session daemon and a snapshot session, and LTTNG_UST_REGISTER_TIMEOUT unset (as a
#     user has it): at -t 2ms, across several starts of a single-threaded sleeper, no futex wait
#     at all (lttng-ust's registration wait was one, "Userspace lock contention", woken by
#     "sleeper-ust"), and the first nap, right after start, has its unwound stack (the reason the
#     registration wait existed);
#  c) the preload library loads no tracer: no lttng-ust mapped, no thread of its own.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require jq
require_latsnap
require_lttng
require_workloads unwind-nofp sleeper
unset LTTNG_UST_REGISTER_TIMEOUT

# a) The stack without LTTng.
OUT=$TMPD/a.out ERR=$TMPD/a.err
record_json "$OUT" "$ERR" -t 40ms -- "$WL/unwind-nofp" 60 1
is "$RC" 0 "a) record --no-snapshot -- unwind-nofp: exit 0"
SEL='select(.syscall != null and (.syscall | test("nanosleep")))'
is "$(jcount "$OUT" "$SEL")" 1 "a) one nanosleep outlier" || dump_outliers "$OUT"
O=$(jq -c -s "[.[] | $SEL] | .[0] // {}" "$OUT")
is "$(jq -r .signalled <<<"$O")" true "a) the library was signalled"
is "$(jq -r .user_stack.source <<<"$O")" unwind "a) user_stack.source is unwind, with no LTTng session" ||
	diag "$O"
like "$(jq -r '[.user_stack.frames[].symbol // "?"] | join(" ")' <<<"$O")" \
	'inner_fn descend middle_fn outer_fn main' \
	"a) the unwound frames walk the code without frame pointers up to main"
is "$(jq -r '[.flags[] | select(startswith("no-unwound-stack") or startswith("no-user-stack"))] | length' <<<"$O")" \
	0 "a) no flag says the stack is missing"

# b) Starts with a snapshot session, the registration wait left to lttng-ust's default.
ALL=$TMPD/b.all
: >"$ALL"
for n in 1 2 3 4 5; do
	timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --json -o "$TMPD/b$n" -t 2ms -- \
		"$WL/sleeper" 30 1 >"$TMPD/b$n.out" 2>"$TMPD/b$n.err"
	RC=$?
	is "$RC" 0 "b) start $n: record -t 2ms -- sleeper 30: exit 0" || diag_file "$TMPD/b$n.err" "  stderr: "
	cat "$TMPD/b$n.out" >>"$ALL"
	NAP=$(jq -c -s '[.[] | select(.syscall != null and (.syscall | test("nanosleep")) and .duration_ns > 25000000)] | .[0] // {}' "$TMPD/b$n.out")
	is "$(jq -r .user_stack.source <<<"$NAP")" unwind "b) start $n: the first nap has its unwound stack" ||
		diag "$NAP"
done
is "$(jcount "$ALL" 'select(.syscall == "futex")')" 0 \
	"b) no futex wait at all in 5 starts of a single-threaded sleeper (lttng-ust's registration was one)" ||
	jq -c 'select(.syscall == "futex") | {duration_ns, cause, waker: .waker.comm}' "$ALL" | while read -r l; do diag "$l"; done
is "$(jcount "$ALL" 'select(.waker != null and (.waker.comm | endswith("-ust")))')" 0 \
	"b) no outlier woken by an lttng-ust thread"

# c) The library loads no tracer: a preloaded process, while it runs, maps no lttng-ust and has
# no thread of lttng-ust's.
LD_PRELOAD=$BUILD/liblatsnap.so "$WL/sleeper" 300 2 >/dev/null 2>&1 &
P=$!
track_bg "$P"
sleep 0.2
ok 'grep -q liblatsnap /proc/$P/maps' "c) the sleeper (pid $P) has liblatsnap.so mapped"
is "$(grep -c liblttng /proc/$P/maps)" 0 "c) and no lttng-ust library"
is "$(cat /proc/$P/task/*/comm | grep -c -- '-ust$')" 0 "c) and no lttng-ust thread"
is "$(ls /proc/$P/task | wc -l)" 1 "c) it is single-threaded, as without the library"
wait "$P"

done_testing
