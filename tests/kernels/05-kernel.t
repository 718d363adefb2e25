#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every feature of latsnap on the running kernel, one case each, with margins wide enough for a
# kernel booted under QEMU without KVM (make check-kernels: CPU work 5-10x slower, process
# creation ~100x): thresholds of 200 ms, waits of 600 ms and more, outliers picked by what they
# are rather than counted among all (a slow exec is an outlier there too).
#
#  a) record: a 600 ms nanosleep of `sleeper` is a clock_nanosleep outlier of 0.6-2 s, its kernel
#     stack in the hrtimer sleep, its user stack unwound by the preload library up to main(), and
#     not flagged kernel-no-switch-signal (the signal at the end of a syscall needs nothing new).
#  b) record --no-preload: the same outlier, its user stack walked by frame pointers to main().
#  c) a sleep outlier (off CPU outside any syscall): cpucontend's cruncher, preempted by SCHED_FIFO
#     spinners, is unwound by the preload library, signalled as it is switched back in: through
#     sched_exit_tp (6.15) or fexit on schedule() before it; flagged kernel-no-switch-signal where
#     the kernel has neither.
#  d) snapshots: pipewait's read is in a snapshot, whose trace babeltrace2 reads (the kernel's
#     sched_switch events latsnap streams from its BPF rings among them), woken by pipewriter.
#  e) --hang: an ABBA deadlock is reported while it lasts, named a deadlock, each thread's holder
#     the other.
#  f) --request: reqserver's 300 ms request is a request outlier with crunch() in its profile;
#     where the kernel has no BPF cookies (before 5.15), record refuses --request and says why.
#  g) top: sleeper's naps show as "Requested sleep" in `top --batch`.
#  h) the idle policy: epoll_wait waiting for work is no outlier, unless --include-idle.
#  i) errors: without privileges, "needs root"; never for a privileged user.
#  j) the service: SIGHUP reloads the thresholds in the running programs (their .data), without
#     a reload of the programs.
# Each case ends with a "# kernel-feature: NAME: yes|no (why)" line, which make check-kernels
# gathers into its kernel x feature table. Not in make check: on the host every case is a test
# of tests/integration/ already (20, 90, 50, 95, 45, 47, 98, 48, 10, 49); `prove tests/kernels/`
# runs it on the running kernel.
set -u
. "$(dirname "$0")/../integration/lib.sh"

require_record sleeper cpucontend pipewait deadlock reqserver epollidle
require babeltrace2
no_ust_wait

RELEASE=$(uname -r)
diag "kernel $RELEASE"
feature() {
	diag "kernel-feature: $1: $2"
}

# pick OUT FILTER: the first outlier of OUT that FILTER selects, as one JSON object ({} if none).
pick() {
	jq -s -c "[.[] | $2] | .[0] // {}" "$1" 2>/dev/null || echo '{}'
}
# J OBJ FILTER: jq -r FILTER of the JSON object OBJ.
J() { jq -r "$2" <<<"${1:-{\}}" 2>/dev/null; }
NAP='(.syscall // "" | test("^(clock_)?nanosleep$"))'
frames() { J "$1" '[.user_stack.frames[]?.symbol // "?"] | join(" ")'; }
kframes() { J "$1" '[.kernel_stacks[]?.frames[]?.symbol // "?"] | join(" ")'; }

# --- a) record, the preload library's unwound stack at a syscall's end ------------------------
record_json "$TMPD/a.out" "$TMPD/a.err" -t 200ms -- "$WL/sleeper" 600
is "$RC" 0 "a) record -t 200ms -- sleeper 600: exit 0"
O=$(pick "$TMPD/a.out" "select(.kind == \"syscall\" and $NAP)")
ok '[ "$O" != "{}" ]' "a) the nanosleep is an outlier" || diag_file "$TMPD/a.err" "  stderr: "
between "$(J "$O" .duration_ns)" 590000000 2000000000 "a) its duration is the 600 ms nap (0.59-2 s)"
is "$(J "$O" '.blocked_ns > 0.8 * .duration_ns')" true "a) blocked time dominates"
like "$(kframes "$O")" 'hrtimer_nanosleep|do_nanosleep|common_nsleep' \
	"a) its kernel stack is in the hrtimer sleep"
is "$(J "$O" .user_stack.source)" unwind "a) its user stack was unwound by the preload library"
like "$(frames "$O")" '(^| )main( |$)' "a) ... up to main() ($(frames "$O"))"
is "$(J "$O" '[.flags[] | select(startswith("kernel-no-switch-signal"))] | length')" 0 \
	"a) not flagged kernel-no-switch-signal"
if [ "$(J "$O" .user_stack.source)" = unwind ]; then
	feature "record, syscall outliers, unwound user stacks" yes
else
	feature "record, syscall outliers, unwound user stacks" "no ($(J "$O" -c .flags))"
fi

# --- b) --no-preload ---------------------------------------------------------------------------
record_json "$TMPD/b.out" "$TMPD/b.err" -v -t 200ms --no-preload -- "$WL/sleeper" 600
is "$RC" 0 "b) record --no-preload -- sleeper 600: exit 0"
O=$(pick "$TMPD/b.out" "select(.kind == \"syscall\" and $NAP)")
if ! ok '[ "$O" != "{}" ]' "b) the nanosleep is an outlier"; then
	diag_file "$TMPD/b.err" "  stderr: "
	diag "  outliers: $(jq -c '{kind, comm, syscall, duration_ns, flags}' "$TMPD/b.out" 2>&1 | paste -sd' ')"
fi
is "$(J "$O" .user_stack.source)" frame-pointer "b) its user stack is a frame-pointer walk"
like "$(frames "$O")" '(^| )main( |$)' "b) ... which reaches main() ($(frames "$O"))"
feature "record --no-preload" "$([ "$(J "$O" .user_stack.source)" = frame-pointer ] && echo yes || echo no)"

# --- c) a sleep outlier, unwound at its switch-in ----------------------------------------------
# A switch the kernel's BPF recursion guard hides ends no interval (50-cpu.t): up to three tries.
for try in 1 2 3; do
	rm -f "$TMPD/c.log"
	WL_LOG=$TMPD/c.log record_json "$TMPD/c.out" "$TMPD/c.err" -t 200ms -s 200ms -- \
		"$WL/cpucontend" 900
	CR=$(awk '$1 == "tid" && $2 == "cruncher" { print $3 }' "$TMPD/c.log" 2>/dev/null)
	O=$(pick "$TMPD/c.out" "select(.tid == ${CR:-0} and .kind == \"sleep\")")
	[ "$O" != "{}" ] && break
	diag "try $try: no sleep outlier of the cruncher; $(grep -E '^cpucontend: cruncher' "$TMPD/c.err" | paste -sd';')"
done
is "$RC" 0 "c) record -t 200ms -s 200ms -- cpucontend 900: exit 0"
ok '[ "$O" != "{}" ]' "c) the preempted cruncher has a sleep outlier"
SWITCH_END=$(grep -o 'kernel-no-switch-signal' "$TMPD/c.err" | head -n 1)
if [ -n "$SWITCH_END" ]; then
	# The kernel cannot signal it: said once at start, and on the outlier.
	ok 'grep -q "lacks the sched_exit_tp tracepoint .* and fexit on schedule()" "$TMPD/c.err"' \
		"c) record said at start that this kernel cannot signal a thread back from a sleep"
	is "$(J "$O" '[.flags[] | select(startswith("kernel-no-switch-signal"))] | length')" 1 \
		"c) the outlier is flagged kernel-no-switch-signal"
	feature "sleep outliers, unwound user stacks" "no (neither sched_exit_tp nor fexit on schedule())"
elif [ "$(J "$O" '[.flags[]? | select(startswith("signal-refused"))] | length')" = 1 ]; then
	is "$(J "$O" .user_stack.source)" frame-pointer "c) signal refused at the switch-in: the frame kept"
	feature "sleep outliers, unwound user stacks" "yes (this run: signal refused, $(J "$O" -c .flags))"
else
	is "$(J "$O" .user_stack.source)" unwind \
		"c) its user stack was unwound by the preload library, signalled at its switch-in"
	feature "sleep outliers, unwound user stacks" \
		"$([ "$(J "$O" .user_stack.source)" = unwind ] && echo yes || echo no)"
fi
like "$(frames "$O")" '(^| )crunch([.]|$| )' "c) ... where it was preempted: crunch() ($(frames "$O"))"
diag "c) the cruncher's outlier: $(J "$O" -c '{source: .user_stack.source, signalled, flags}')"

# --- d) snapshots, the kernel context, the waker --------------------------------------------------
WL_LOG=$TMPD/d.log timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --json -t 200ms \
	-o "$TMPD/d.snaps" -- "$WL/pipewait" 600 >"$TMPD/d.out" 2>"$TMPD/d.err"
RC=$?
is "$RC" 0 "d) record -o DIR -t 200ms -- pipewait 600: exit 0" || diag_file "$TMPD/d.err" "  stderr: "
# The read once it ended: where the guest is slow to start pipewriter (the arm64 one: 6 s), the
# read is reported still blocked first, in a snapshot of its own, with no waker yet.
READ='.outliers[]? | select(.syscall == "read" and .state == "ended")'
S=$(for f in "$TMPD"/d.snaps/*/summary.json; do
	[ -n "$(jq -c "$READ" "$f" 2>/dev/null)" ] && echo "$f"
done | head -n 1)
ok '[ -n "$S" ]' "d) a snapshot's summary.json has the read"
O=$(jq -c "$READ" "${S:-/dev/null}" 2>/dev/null | head -n 1)
is "$(J "$O" .waker.comm)" pipewriter "d) the read was woken by pipewriter"
babeltrace2 "$(dirname "${S:-/nonexistent}")/trace" >"$TMPD/d.bt" 2>"$TMPD/d.bterr"
is "$?" 0 "d) babeltrace2 reads the snapshot's trace" ||
	{ diag "snapshot: $S"; diag_file "$TMPD/d.bterr" "  babeltrace2: "; ls -lR "$(dirname "${S:-/x}")" | diag_file /dev/stdin "  "; }
ok 'grep -q "latsnap_kernel:sched_switch" "$TMPD/d.bt"' \
	"d) the trace has the kernel's context switches, from latsnap's BPF rings" ||
	diag "the trace's events: $(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[a-z_]+:[a-z_]+:$/) print $i }' "$TMPD/d.bt" | sort | uniq -c | tr -s ' \n' ' ')"
feature "snapshots, kernel context, waker" \
	"$([ "$(J "$O" .waker.comm)" = pipewriter ] && grep -q latsnap_kernel:sched_switch "$TMPD/d.bt" && echo yes || echo no)"

# --- e) --hang: a deadlock while it lasts --------------------------------------------------------
WL_LOG=$TMPD/e.log timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --json --no-snapshot \
	-t 200ms --hang 1s -- "$WL/deadlock" 6 >"$TMPD/e.out" 2>"$TMPD/e.err"
RC=$?
is "$RC" 0 "e) record --hang 1s -- deadlock 6: exit 0" || diag_file "$TMPD/e.err" "  stderr: "
O=$(pick "$TMPD/e.out" 'select(any(.flags[]; startswith("still-blocked")) and (.cause | test("^Deadlock")))')
ok '[ "$O" != "{}" ]' "e) a thread is reported still blocked, its cause a deadlock ($(J "$O" .cause))" ||
	{ dump_outliers "$TMPD/e.out"; diag_file "$TMPD/e.err" "  stderr: "; }
like "$(J "$O" .holder.tid)" '^[0-9]+$' "e) ... held up by the other thread ($(J "$O" .holder.tid))" ||
	jq -c '{comm, tid, cause, holder, flags}' "$TMPD/e.out" | diag_file /dev/stdin "  outlier: "
feature "--hang (stalls, deadlocks, holders)" "$([ "$O" != "{}" ] && echo yes || echo no)"

# --- f) --request ----------------------------------------------------------------------------------
record_json "$TMPD/f.out" "$TMPD/f.err" -t 200ms \
	--request "uprobe:$WL/reqserver:handle_request" -- "$WL/reqserver" 5:0 300:0 5:0
if kernel_has_cookies; then
	is "$RC" 0 "f) record --request uprobe:...:handle_request -- reqserver: exit 0"
	O=$(pick "$TMPD/f.out" 'select(.kind == "request")')
	ok '[ "$O" != "{}" ]' "f) the 300 ms request is a request outlier"
	like "$(J "$O" '[.cpu_profile[]?.frames[]?.symbol] | join(" ")')" 'crunch' \
		"f) ... whose CPU profile has crunch()"
	feature "--request" "$([ "$O" != "{}" ] && echo yes || echo no)"
else
	is "$RC" 1 "f) no BPF cookies (Linux 5.15): record --request fails"
	ok 'grep -q "lacks BPF cookies" "$TMPD/f.err"' "f) ... and says the kernel lacks BPF cookies" ||
		diag_file "$TMPD/f.err" "  stderr: "
	feature "--request" "no (no BPF cookies: Linux 5.15)"
fi

# --- g) top ------------------------------------------------------------------------------------
"$WL/sleeper" 400 30 >/dev/null 2>&1 &
SL=$!
track_bg "$SL"
run_latsnap "$TMPD/g.out" "$TMPD/g.err" top --batch 2 -i 3s
kill "$SL" 2>/dev/null
is "$RC" 0 "g) top --batch 2: exit 0" || diag_file "$TMPD/g.err" "  stderr: "
ok 'grep -q "Requested sleep" "$TMPD/g.out"' "g) top shows sleeper's naps as Requested sleep" ||
	diag_file "$TMPD/g.out" "  top: "
feature top "$(grep -q "Requested sleep" "$TMPD/g.out" && echo yes || echo no)"

# --- h) the idle policy ----------------------------------------------------------------------------
record_json "$TMPD/h.out" "$TMPD/h.err" -t 200ms -- "$WL/epollidle" 400 2
is "$RC" 0 "h) record -t 200ms -- epollidle 400 2: exit 0"
is "$(jcount "$TMPD/h.out" 'select(.syscall // "" | test("^epoll_"))')" 0 \
	"h) epoll_wait waiting for work is no outlier"
record_json "$TMPD/h2.out" "$TMPD/h2.err" -v -t 200ms --include-idle -- "$WL/epollidle" 400 2
is "$(jcount "$TMPD/h2.out" 'select(.syscall // "" | test("^epoll_"))')" 2 \
	"h) ... but both are, with --include-idle" || diag_file "$TMPD/h2.err" "  stderr: " 40
feature "idle policy" "$([ "$(jcount "$TMPD/h2.out" 'select(.syscall // "" | test("^epoll_"))')" = 2 ] && echo yes || echo no)"

# --- j) the service: SIGHUP reloads the thresholds in the running programs ---------------------
echo 'threshold = 2s' >"$TMPD/j.conf"
WL_LOG=$TMPD/j.log timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --json --no-snapshot \
	-c "$TMPD/j.conf" -- "$WL/sleeper" 500 14 >"$TMPD/j.out" 2>"$TMPD/j.err" &
RUNNER=$!
track_bg "$RUNNER"
for _ in $(seq 600); do
	[ -s "$TMPD/j.log" ] && break
	sleep 0.05
done
REC=$(pgrep -P "$RUNNER" -x latsnap | head -n 1)
REC=${REC:-$RUNNER}
sleep 1
echo 'threshold = 200ms' >"$TMPD/j.conf"
kill -HUP "$REC"
wait "$RUNNER"
is "$?" 0 "j) record -c CONF -- sleeper 500 14, reloaded with SIGHUP: exit 0"
like "$(grep 'reloaded' "$TMPD/j.err")" 'threshold 2s -> 200ms' "j) the reload is logged" ||
	diag_file "$TMPD/j.err" "  stderr: "
N=$(jcount "$TMPD/j.out" "select($NAP and .duration_ns >= 490000000)")
ok '[ "$N" -ge 2 ]' "j) 500 ms naps are outliers after the reload (threshold 2 s before): $N"
feature "service (SIGHUP reload)" "$([ "$N" -ge 2 ] && echo yes || echo no)"

# --- i) errors ----------------------------------------------------------------------------------
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$LATSNAP" record --no-snapshot -- true >"$TMPD/i.out" 2>"$TMPD/i.err"
is "$?" 1 "i) record without privileges: exit 1"
like "$(cat "$TMPD/i.err")" 'needs root' "i) ... says latsnap needs root"
for f in a b c d e g h j; do
	if grep -q 'needs root' "$TMPD/$f.err" 2>/dev/null; then
		fail "i) case $f, run as root, said 'needs root'"
	fi
done
done_testing
