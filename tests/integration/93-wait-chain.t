#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The kernel context stream and the wait chain. A tcpclient under latsnap asks a tcpserver that
# latsnap does not track (it becomes streamed when the client wakes it with a request): the
# client's reads wait ~100 ms each for srvhog, which computes (on CPU) or sleeps (nanosleep).
# chain3: A waits on B, which waits on C, which sleeps: the chain reaches C.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require jq
require babeltrace2
require_latsnap
require_lttng
require_workloads tcpserver tcpclient chain3

# outliers TAG: every OUTLIER of TAG's summaries, one per line.
outliers() { cat "$TMPD/$1.d"/*/summary.json 2>/dev/null | jq -c '.outliers[]'; }

# read_traces TAG: the traces of TAG's complete snapshots, into $TMPD/TAG.bt; BT_RC 0 when there
# is at least one and babeltrace2 read each (no snapshot, or an unreadable trace, is no evidence
# of what a context level leaves out), 1 when there is none, 2 when one was unreadable.
read_traces() {
	local s
	BT_RC=1
	: >"$TMPD/$1.bt"
	for s in "$TMPD/$1.d"/*/; do
		[ -s "$s/summary.json" ] || continue
		[ "$BT_RC" = 1 ] && BT_RC=0
		babeltrace2 "$s/trace" >>"$TMPD/$1.bt" 2>>"$TMPD/$1.bt.err" || BT_RC=2
	done
}

# serve TAG MS SLEEP: a tcpserver in the background, not under latsnap; sets SRV_PID, PORT.
serve() {
	WL_LOG=$TMPD/$1.srv.log "$WL/tcpserver" "$2" "$3" 2>/dev/null &
	SRV_PID=$!
	track_bg "$SRV_PID"
	PORT=
	for _ in $(seq 100); do
		PORT=$(awk '$1 == "port" { print $2 }' "$TMPD/$1.srv.log" 2>/dev/null)
		[ -n "$PORT" ] && break
		sleep 0.02
	done
}

# Each of the client's three reads (one wait site) is to be in a snapshot, with its chain: the
# flood guard is off here (--no-flood-guard; it is 46-flood.t's).
# --- compute: srvhog runs on a CPU for the whole wait ----------------------------------------
serve tc 100 0
ok '[ -n "$PORT" ]' "tcpserver 100 (compute) listens (port ${PORT:-none})"
record_snap tc -t 50ms --no-flood-guard -o "$TMPD/tc.d" -- "$WL/tcpclient" "${PORT:-1}" 3
is "$RC" 0 "record -- tcpclient PORT 3: exit 0"
outliers tc | jq -c 'select(.syscall == "read")' >"$TMPD/tc.reads"
is "$(grep -c '' "$TMPD/tc.reads")" 3 "three read outliers of the client in the summaries"
is "$(jq -r '.wait_chain[0].comm' "$TMPD/tc.reads" | sort -u | paste -sd' ')" srvhog \
	"each one's wait chain starts with srvhog" || diag_file "$TMPD/tc.reads" "  read: " 3
is "$(jq -r '.wait_chain[0].pid' "$TMPD/tc.reads" | sort -u | paste -sd' ')" "$SRV_PID" \
	"... the server's pid ($SRV_PID), a process latsnap does not track"
while read -r line; do
	dur=$(jq '.duration_ns' <<<"$line")
	cpu=$(jq '.wait_chain[0].on_cpu_ns' <<<"$line")
	isnt "$cpu" 0 "... it ran on a CPU"
	busy=$(jq '.wait_chain[0].on_cpu_ns + .wait_chain[0].runqueue_ns' <<<"$line")
	between "$busy" 85000000 110000000 \
		"read of $((dur / 1000)) us: srvhog was on a CPU or runnable $((busy / 1000)) us of it (about 100 ms)"
	# (how much of it was runqueue depends on what else runs on this machine)
	between "$(jq '.wait_chain[0].blocked_ns' <<<"$line")" 0 10000000 "... blocked at most 10 ms of it (it ran $((cpu / 1000)) us)"
done <"$TMPD/tc.reads"
# The first snapshot may hold only an lttng-ust registration wait of the client's start-up.
S=$(dirname "$(grep -l '"syscall": *"read"' "$TMPD/tc.d"/*/summary.json 2>/dev/null | head -n 1)")
ok 'grep -q "wait chain" "$S/summary.txt" && grep -q "srvhog \[pid $SRV_PID" "$S/summary.txt"' \
	"summary.txt shows the wait chain, naming srvhog" || diag_file "$S/summary.txt" "  summary.txt: " 80
kill "$SRV_PID" 2>/dev/null

# --- sleep: srvhog sleeps in nanosleep for the wait -----------------------------------------
serve ts 100 1
record_snap ts -t 50ms --no-flood-guard -o "$TMPD/ts.d" -- "$WL/tcpclient" "${PORT:-1}" 3
is "$RC" 0 "record -- tcpclient PORT 3 (server sleeping): exit 0"
outliers ts | jq -c 'select(.syscall == "read")' >"$TMPD/ts.reads"
is "$(grep -c '' "$TMPD/ts.reads")" 3 "three read outliers"
L=$(head -n 1 "$TMPD/ts.reads")
is "$(jq -r '.wait_chain[0].comm' <<<"$L")" srvhog "the chain names srvhog"
between "$(jq '.wait_chain[0].blocked_ns' <<<"$L")" 95000000 120000000 "srvhog was blocked about 100 ms of it"
like "$(jq -r '.wait_chain[0].syscall' <<<"$L")" '^(clock_)?nanosleep$' "in nanosleep"
like " $(jq -r '[.wait_chain[0].frames[].symbol] | join(" ")' <<<"$L") " ' (hrtimer_nanosleep|do_nanosleep) ' \
	"its kernel stack shows where: hrtimer_nanosleep" || diag "$L"
is "$(jq '.wait_chain | length' <<<"$L")" 1 "the chain ends there: a timer woke srvhog"
# The later requests find srvhog streamed already: its syscalls then start in the per-CPU cache
# (the fast path of a thread of interest), and each read's chain still names the syscall.
is "$(jq -r '.wait_chain[0].syscall' "$TMPD/ts.reads" | sed 's/^clock_//' | paste -sd' ')" \
	"nanosleep nanosleep nanosleep" "every read's chain has srvhog in nanosleep" ||
	diag_file "$TMPD/ts.reads" "  read: " 3
kill "$SRV_PID" 2>/dev/null

# --- three processes: A waits on B, B on C, C sleeps ------------------------------------------
record_snap c3 -t 50ms -o "$TMPD/c3.d" -- "$WL/chain3" 100
is "$RC" 0 "record -- chain3 100: exit 0"
A=$(wl_log_get "$TMPD/c3.log" a)
B=$(wl_log_get "$TMPD/c3.log" b)
C=$(wl_log_get "$TMPD/c3.log" c)
# A's read of B's answer (not its reads of the children's "ready" before it asks)
T0=$(awk '$1 == "read" { print $3; exit }' "$TMPD/c3.log")
outliers c3 | jq -c "select(.tid == ${A:-0} and .syscall == \"read\" and .end_ns > ${T0:-0})" >"$TMPD/c3.a"
is "$(grep -c '' "$TMPD/c3.a")" 1 "chainA's read is an outlier"
is "$(jq -r '[.wait_chain[] | "\(.depth):\(.comm):\(.tid)"] | join(" ")' "$TMPD/c3.a")" \
	"1:chainB:$B 2:chainC:$C" "its chain: chainB (depth 1), then chainC (depth 2)" || diag_file "$TMPD/c3.a" "  A: "
is "$(jq -r '.wait_chain[0].syscall' "$TMPD/c3.a")" read "chainB was blocked in read"
like " $(jq -r '[.wait_chain[0].frames[].symbol] | join(" ")' "$TMPD/c3.a") " ' (anon_)?pipe_read ' "on a pipe (pipe_read)"
like "$(jq -r '.wait_chain[1].syscall' "$TMPD/c3.a")" '^(clock_)?nanosleep$' "chainC was in nanosleep"
between "$(jq '.wait_chain[1].blocked_ns' "$TMPD/c3.a")" 95000000 120000000 "for about 100 ms"
is "$(jq '.wait_chain[1].from_ns >= .wait_chain[0].from_ns and .wait_chain[1].to_ns <= .wait_chain[0].to_ns' "$TMPD/c3.a")" \
	true "C's window lies inside B's wait"
# Every snapshot's trace: a start-up outlier (lttng-ust's registration) may make a first one
# that ends before the children exit.
bt_rc=0
: >"$TMPD/c3.bt"
for S in "$TMPD/c3.d"/*/; do
	babeltrace2 "$S/trace" >>"$TMPD/c3.bt" 2>>"$TMPD/c3.bt.err" || bt_rc=$?
done
is "$bt_rc" 0 "babeltrace2 reads the traces"
for ev in sched_switch sched_wakeup syscall process_fork process_exit; do
	ok 'grep -q " latsnap_kernel:$ev: " "$TMPD/c3.bt"' "the trace holds latsnap_kernel:$ev events"
done

# --- levels --------------------------------------------------------------------------------
record_snap cs -t 50ms --context sched -o "$TMPD/cs.d" -- "$WL/chain3" 100
is "$RC" 0 "--context sched: exit 0"
read_traces cs
is "$BT_RC" 0 "sched: complete snapshots, whose traces babeltrace2 reads" ||
	diag_file "$TMPD/cs.bt.err" "  babeltrace2: "
ok 'grep -q " latsnap_kernel:sched_switch: " "$TMPD/cs.bt" && ! grep -q " latsnap_kernel:syscall: " "$TMPD/cs.bt"' \
	"sched: switches, no syscalls"
ok 'grep -qE " latsnap_kernel:sched_(switch|wakeup): " "$TMPD/cs.bt" &&
	! grep -E " latsnap_kernel:sched_(switch|wakeup): " "$TMPD/cs.bt" | grep -qE "_(prev|waker)_stack_length = [1-9]"' \
	"sched: switch and wakeup events, none with a stack"
A=$(wl_log_get "$TMPD/cs.log" a)
T0=$(awk '$1 == "read" { print $3; exit }' "$TMPD/cs.log")
is "$(outliers cs | jq -r "select(.tid == ${A:-0} and .syscall == \"read\" and .end_ns > ${T0:-0}) | [.wait_chain[].comm] | join(\" \")")" \
	"chainB chainC" "sched: the chain still reaches chainC"

# Every CPU busy in user mode (a shell loop each, not traced): the timer that ends chainC's sleep
# interrupts one of them, and that loop was taken for C's waker (a stack-free wakeup counted
# only the idle task as no one): the chain ran on through it ("chainB chainC bash", 3 of 3).
SPIN=
for _ in $(seq "$(nproc)"); do
	( while :; do :; done ) &
	SPIN="$SPIN $!"
	track_bg $!
done
record_snap cb -t 50ms --context sched -o "$TMPD/cb.d" -- "$WL/chain3" 100
# shellcheck disable=SC2086 # the list of pids
kill $SPIN 2>/dev/null
is "$RC" 0 "--context sched, every CPU busy: exit 0"
A=$(wl_log_get "$TMPD/cb.log" a)
T0=$(awk '$1 == "read" { print $3; exit }' "$TMPD/cb.log")
is "$(outliers cb | jq -r "select(.tid == ${A:-0} and .syscall == \"read\" and .end_ns > ${T0:-0}) | [.wait_chain[].comm] | join(\" \")")" \
	"chainB chainC" "sched, every CPU busy: the chain ends at chainC, whose sleep a timer ended"

record_snap cn -t 50ms --context none -o "$TMPD/cn.d" -- "$WL/chain3" 100
is "$RC" 0 "--context none: exit 0"
read_traces cn
is "$BT_RC" 0 "none: complete snapshots, whose traces babeltrace2 reads" ||
	diag_file "$TMPD/cn.bt.err" "  babeltrace2: "
ok '[ "$BT_RC" = 0 ] && ! grep -q " latsnap_kernel:" "$TMPD/cn.bt"' "none: no latsnap_kernel events"
is "$(outliers cn | jq -s '[.[] | .wait_chain | length] | add')" 0 "none: every wait chain is empty"

RECORD_EXPECT_RC=2 record_json "$TMPD/bad.out" "$TMPD/bad.err" -- --context most -- /bin/true
is "$RC" 2 "--context most: exit 2"
is "$(cat "$TMPD/bad.err")" "latsnap: record: bad --context 'most': expected none, sched or full" "the error says what is expected"
RECORD_EXPECT_RC=2 record_json "$TMPD/bad.out" "$TMPD/bad.err" -- --context-floor 0 -- /bin/true
is "$RC" 2 "--context-floor 0: exit 2"

done_testing
