#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The target never waits on latsnap's behalf, and what latsnap cannot avoid is not passed off as
# the application's (issue 17, item 2):
#  a) no snapshot session at all (--no-snapshot, so lttng-ust has nothing to register for): the
#     unwound stack of unwind-nofp (built without frame pointers) still reaches the outlier,
#     through the kernel, with the functions only an unwinder finds;
#  b) with a session daemon and a snapshot session, and LTTNG_UST_REGISTER_TIMEOUT unset (as a
#     user has it): at -t 2ms, across several starts, no outlier woken by lttng-ust's own thread
#     ("COMM-ust") is passed off as the application's: each is latsnap_own, with a "latsnap:"
#     cause and the latsnap-own flag; and the first nap, tens of ms after start, has its unwound
#     stack (the reason lttng-ust used to make the process wait);
#  c) report keeps latsnap_own outliers out of the application's totals and lists them apart.
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
	RC=
	timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --json -o "$TMPD/b$n" -t 2ms -- \
		"$WL/sleeper" 30 1 >"$TMPD/b$n.out" 2>"$TMPD/b$n.err"
	RC=$?
	is "$RC" 0 "b) start $n: record -t 2ms -- sleeper 30: exit 0" || diag_file "$TMPD/b$n.err" "  stderr: "
	cat "$TMPD/b$n.out" >>"$ALL"
	NAP=$(jq -c -s '[.[] | select(.syscall != null and (.syscall | test("nanosleep")) and .duration_ns > 25000000)] | .[0] // {}' "$TMPD/b$n.out")
	is "$(jq -r .user_stack.source <<<"$NAP")" unwind "b) start $n: the first nap has its unwound stack" ||
		diag "$NAP"
done
OWN=$(jcount "$ALL" 'select(.waker != null and (.waker.comm | endswith("-ust")) and .waker.pid == .pid)')
MISLED=$(jq -c -s '[.[] | select(.waker != null and (.waker.comm | endswith("-ust")) and .waker.pid == .pid)
	| select(.latsnap_own != true or (.cause | startswith("latsnap:") | not)
		or (any(.flags[]; startswith("latsnap-own:")) | not))]' "$ALL")
is "$MISLED" "[]" "b) every wait lttng-ust's thread ended is latsnap_own, with a latsnap: cause and flag"
diag "b) $OWN outlier(s) woken by lttng-ust's thread in 5 starts; $(jcount "$ALL") in all"
is "$(jcount "$ALL" 'select(.latsnap_own == true and (.waker == null or (.waker.comm | endswith("-ust") | not)))')" 0 \
	"b) nothing else is called latsnap's own"

# c) report, on a snapshot where one outlier is marked latsnap's own.
C=$TMPD/c
mkdir -p "$C"
SRC=
for n in 1 2 3 4 5; do
	for d in "$TMPD/b$n"/*/; do
		[ -f "$d/summary.json" ] && SRC=$d && break 2
	done
done
ok '[ -n "$SRC" ]' "c) a snapshot to report on"
ID=$(basename "${SRC:-x}")
cp -a "${SRC:-/nonexistent}" "$C/$ID" 2>/dev/null
NOUT=$(jq '.outliers | length' "$C/$ID/summary.json" 2>/dev/null || echo 0)
jq '.outliers[0].latsnap_own = true | .outliers[0].cause = "latsnap: lttng-ust registration or lock (the tracer'"'"'s own thread)"' \
	"$C/$ID/summary.json" >"$TMPD/c.json" 2>/dev/null && mv "$TMPD/c.json" "$C/$ID/summary.json"
run_latsnap "$TMPD/c.rep" "$TMPD/c.err" report --json "$C"
is "$RC" 0 "c) report --json: exit 0" || diag_file "$TMPD/c.err" "  stderr: "
is "$(jq -r .latsnap_own.count "$TMPD/c.rep" 2>/dev/null)" 1 "c) latsnap_own counts the marked outlier"
is "$(jq -r .system.count "$TMPD/c.rep" 2>/dev/null)" "$((NOUT - 1))" \
	"c) the application's totals hold the other $((NOUT - 1))"
is "$(jq -r '[.system.groups[].key | select(startswith("latsnap:"))] | length' "$TMPD/c.rep" 2>/dev/null)" 0 \
	"c) no latsnap: cause among the application's"
run_latsnap "$TMPD/c.txt" "$TMPD/c.err" report "$C"
like "$(cat "$TMPD/c.txt")" "latsnap's own \\(left out of the totals above\\): .* in 1 outlier" \
	"c) the text report lists latsnap's own apart"

done_testing
