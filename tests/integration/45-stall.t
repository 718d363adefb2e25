#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stalls caught while they last (record --hang): threads that never wake are reported while they
# still wait, with the evidence, and without being disturbed.
#  a) deadlock (ABBA on two pthread mutexes), with and without frame pointers: both threads are
#     reported within --hang + 1 s of the deadlock, still blocked, in a snapshot taken then; the
#     cause names the deadlock, each one's holder is the other, the user frames are the
#     workload's; the threads are still in the same wait afterwards (not woken, no EINTR); at the
#     end of the run (--duration) both are reported again, unfinished.
#  b) pipestall: a reader blocked for good on a pipe whose writer (another process) sleeps: the
#     holder is the writer.
#  c) lockstall: a thread stuck behind a lock held by a thread that computes: the holder is the
#     computing thread, running, in crunch().
#  c2) a wait past --hang that then ends: reported twice (still-blocked, then as usual).
#  d) SIGINT ends the run: what still waits is reported unfinished, not dropped.
#  e) review: report's Stalls section, show, flame count a wait once.
#  f) --hang: bad values are usage errors; the config key; off.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require jq
require babeltrace2
require_latsnap
require_lttng
require_workloads deadlock deadlock-nofp pipestall lockstall sleeper mutexwait

# start_stall TAG ARGS... -- COMMAND: record --json in the background; sets L (its pid).
start_stall() {
	local tag=$1
	shift
	WL_LOG=$TMPD/$tag.log timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --json "$@" \
		>"$TMPD/$tag.out" 2>"$TMPD/$tag.err" &
	L=$!
	track_bg "$L"
}

# wait_log TAG KEY ROLE [TRIES]: the tid the workload logged as "KEY ROLE TID", waiting for it.
wait_log() {
	local i v
	for ((i = 0; i < ${4:-200}; i++)); do
		v=$(awk -v k="$2" -v r="$3" '$1 == k && $2 == r { print $3; exit }' "$TMPD/$1.log" 2>/dev/null)
		[ -n "$v" ] && { echo "$v"; return 0; }
		sleep 0.05
	done
	return 1
}

# blocked_in PID TID NR: the thread is asleep (S or D) in syscall NR.
blocked_in() {
	local st sc
	st=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/task/$2/stat" 2>/dev/null)
	sc=$(awk '{ print $1 }' "/proc/$1/task/$2/syscall" 2>/dev/null)
	[[ $st == [SD] ]] && [ "$sc" = "$3" ]
}

# switches PID TID: its voluntary and involuntary context switches so far.
switches() {
	awk '/^(non)?voluntary_ctxt_switches/ { s = s $2 "/" } END { print s }' \
		"/proc/$1/task/$2/status" 2>/dev/null
}

# first_snapshot DIR SELECT TRIES: waits for a complete snapshot whose outliers SELECT matches;
# prints its directory.
first_snapshot() {
	local i f
	for ((i = 0; i < $3; i++)); do
		for f in "$1"/*/summary.json; do
			[ -s "$f" ] || continue
			if jq -e "[.outliers[] | $2] | length > 0" "$f" >/dev/null 2>&1; then
				dirname "$f"
				return 0
			fi
		done
		sleep 0.05
	done
	return 1
}

# --- a) ABBA deadlock --------------------------------------------------------------------------
deadlock_case() {
	local tag=$1 bin=$2 what=$3 A B PID t0 t1 S SA SB
	start_stall "$tag" -t 50ms --hang 1s -d 7s -o "$TMPD/$tag.d" -- "$WL/$bin" 20
	A=$(wait_log "$tag" stuck a) B=$(wait_log "$tag" stuck b)
	PID=$(wl_log_get "$TMPD/$tag.log" pid)
	for _ in $(seq 100); do
		blocked_in "$PID" "$A" 202 && blocked_in "$PID" "$B" 202 && break
		sleep 0.02
	done
	t0=$(date +%s%N)
	ok 'blocked_in "$PID" "$A" 202 && blocked_in "$PID" "$B" 202' \
		"$what: threads a ($A) and b ($B) are deadlocked, each asleep in futex"
	SA=$(switches "$PID" "$A") SB=$(switches "$PID" "$B")
	S=$(first_snapshot "$TMPD/$tag.d" 'select(any(.flags[]; startswith("still-blocked")))' 60)
	t1=$(date +%s%N)
	ok '[ -n "$S" ]' "$what: a snapshot of the stall appears while it lasts" ||
		diag_file "$TMPD/$tag.err" "  stderr: "
	between "$(((t1 - t0) / 1000000))" 0 2000 "$what: ... within --hang + 1 s of the deadlock ($(((t1 - t0) / 1000000)) ms)"
	ok 'blocked_in "$PID" "$A" 202 && blocked_in "$PID" "$B" 202' \
		"$what: both threads are still in the same futex wait afterwards"
	is "$(switches "$PID" "$A") $(switches "$PID" "$B")" "$SA $SB" \
		"$what: ... never woken meanwhile (no context switch: no signal, no EINTR, no ptrace stop)"
	jq -c '.outliers[] | select(any(.flags[]; startswith("still-blocked")))' "$S/summary.json" \
		>"$TMPD/$tag.sb" 2>/dev/null
	for who in a b; do
		local tid other fn O
		tid=$([ $who = a ] && echo "$A" || echo "$B")
		other=$([ $who = a ] && echo "$B" || echo "$A")
		fn=$([ $who = a ] && echo lock_a_then_b || echo lock_b_then_a)
		O=$(jq -c "select(.tid == $tid)" "$TMPD/$tag.sb" | head -n 1)
		J() { jq -r "$1" <<<"${O:-{\}}" 2>/dev/null; }
		ok '[ -n "$O" ]' "$what: thread $who is reported still-blocked in that snapshot" || continue
		is "$(J .syscall)" futex "$what: $who: in futex"
		# A cycle is reported whole once one of its threads has waited --hang: the other
		# blocked a moment later (CI: 999.57 ms), the longer wait is checked below.
		between "$(J .duration_ns)" 900000000 2500000000 "$what: $who: waited $(J .duration_ns) ns so far (~ --hang)"
		like "$(J .cause)" '^Deadlock: .*a\['"$A"'\].*b\['"$B"'\]|^Deadlock: .*b\['"$B"'\].*a\['"$A"'\]' \
			"$what: $who: the cause names the deadlock and both threads ($(J .cause))"
		is "$(J .state)" still-blocked "$what: $who: state still-blocked"
		is "$(J '[.deadlock.threads[]?.tid] | sort | map(tostring) | join(" ")')" \
			"$(printf '%s\n' "$A" "$B" | sort -n | tr '\n' ' ' | sed 's/ $//')" \
			"$what: $who: deadlock: its cycle's threads, a and b"
		is "$(J .holder.tid)" "$other" "$what: $who: held up by the other thread ($other)"
		like "$(J .holder.what)" 'mutex' "$what: $who: ... which holds a mutex ($(J .holder.what))"
		like "$(J '[.kernel_stacks[0].frames[]?.symbol] | join(" ")')" 'futex_wait|futex_q_wait' \
			"$what: $who: its kernel stack is in a futex wait"
		like "$(J '[.user_stack.frames[]?.symbol // "?"] | join(" ")')" "$fn" \
			"$what: $who: its user stack, unwound from outside, has $fn ($(J .user_stack.source))" ||
			diag "  user: $(J '[.user_stack.frames[]? | "\(.symbol)@\(.module)"] | join(" < ")')"
		like "$(J '[.holder.frames[]?.symbol // "?"] | join(" ")')" 'lock_(a_then_b|b_then_a)' \
			"$what: $who: the holder's user stack is the other locker's"
	done
	local longer
	longer=$(jq -s "map(select(.tid == $A or .tid == $B) | .duration_ns) | max // 0" "$TMPD/$tag.sb")
	between "$longer" 1000000000 2500000000 \
		"$what: the cycle is reported once one of a's and b's waits passed --hang (the longer: $longer ns)"
	PID_MAIN=$(jq -c "select(.tid == $PID)" "$TMPD/$tag.sb" | head -n 1)
	is "$(jq -r .holder.tid <<<"${PID_MAIN:-{\}}")" "$A" "$what: the main thread, joining a, is held up by a"
	ok 'grep -q "Deadlock" "$S/summary.txt"' "$what: summary.txt names the deadlock"
	ok 'babeltrace2 "$S/trace" >/dev/null 2>&1' "$what: the snapshot's trace reads"
	wait "$L"
	is "$?" 143 "$what: after --duration the deadlocked program is ended (SIGTERM): 128+15"
	for who in A B; do
		local tid=${!who}
		is "$(jq -c "select(.tid == $tid and any(.flags[]; startswith(\"unfinished\")))" "$TMPD/$tag.out" | grep -c '')" 1 \
			"$what: $who: reported once more at the end of the run, unfinished"
		is "$(jq -c "select(.tid == $tid and any(.flags[]; startswith(\"still-blocked\")))" "$TMPD/$tag.out" | grep -c '')" 1 \
			"$what: $who: reported still-blocked once, not at every check"
	done
}
deadlock_case dl deadlock "deadlock"
deadlock_case dn deadlock-nofp "deadlock (no frame pointers)"

# --- b) a reader blocked for good on a pipe ------------------------------------------------------
start_stall ps -t 50ms --hang 1s -d 4s -o "$TMPD/ps.d" -- "$WL/pipestall" 20
R=$(wait_log ps stuck reader)
WPID=$(awk '$1 == "pid" && $2 == "writer" { print $3; exit }' "$TMPD/ps.log")
S=$(first_snapshot "$TMPD/ps.d" "select(.tid == ${R:-0} and any(.flags[]; startswith(\"still-blocked\")))" 60)
ok '[ -n "$S" ]' "pipe: the blocked reader's stall has a snapshot"
O=$(jq -c ".outliers[] | select(.tid == ${R:-0})" "$S/summary.json" 2>/dev/null | head -n 1)
J() { jq -r "$1" <<<"${O:-{\}}" 2>/dev/null; }
is "$(J .syscall)" read "pipe: in read"
like "$(J .cause)" 'pipe' "pipe: the cause is a pipe read ($(J .cause))"
is "$(J .holder.pid)" "$WPID" "pipe: held up by the writer process ($WPID)"
like "$(J .holder.what)" 'pipe' "pipe: ... at the other end of the pipe ($(J .holder.what))"
like "$(J '[.holder.frames[]?.symbol // "?"] | join(" ")')" 'writer_sleeps' "pipe: the writer's user stack: writer_sleeps"
like "$(J '[.user_stack.frames[]?.symbol // "?"] | join(" ")')" 'read_forever' "pipe: the reader's user stack: read_forever"
wait "$L"

# --- c) stuck behind a lock held by a thread that computes ---------------------------------------
start_stall ls -t 50ms --hang 1s -d 4s -o "$TMPD/ls.d" -- "$WL/lockstall" 20
W=$(wait_log ls stuck waiter) H=$(wait_log ls tid holder)
S=$(first_snapshot "$TMPD/ls.d" "select(.tid == ${W:-0} and any(.flags[]; startswith(\"still-blocked\")))" 60)
ok '[ -n "$S" ]' "lock: the waiter's stall has a snapshot"
O=$(jq -c ".outliers[] | select(.tid == ${W:-0})" "$S/summary.json" 2>/dev/null | head -n 1)
is "$(J .syscall)" futex "lock: the waiter is in futex"
is "$(J .holder.tid)" "$H" "lock: held up by thread holder ($H)"
like "$(J .holder.state)" 'running|runnable' "lock: ... which is running ($(J .holder.state))"
like "$(J '[.holder.frames[]?.symbol // "?"] | join(" ")')" 'crunch' "lock: the holder's user stack: crunch" ||
	diag "  holder: $(J '[.holder.frames[]? | "\(.symbol)@\(.module)"] | join(" < ")')"
unlike_deadlock=$(J '.cause | test("Deadlock")')
is "$unlike_deadlock" false "lock: not a deadlock ($(J .cause))"
is "$(J '.deadlock')" null "lock: deadlock: null"
wait "$L"

# --- c2) a wait that passes --hang, then ends: reported twice, the second time as usual -------
start_stall me -t 50ms --hang 500ms --no-snapshot -- "$WL/mutexwait" 1500
wait "$L"
is "$?" 0 "ends: record -- mutexwait 1500: exit 0"
W=$(awk '$1 == "tid" && $2 == "waiter" { print $3; exit }' "$TMPD/me.log")
jq -c "select(.tid == ${W:-0} and .syscall == \"futex\")" "$TMPD/me.out" >"$TMPD/me.w" 2>/dev/null
is "$(grep -c '' "$TMPD/me.w")" 2 "ends: the waiter's 1.5 s futex wait is reported twice" ||
	diag_file "$TMPD/me.out" "  out: " 20
is "$(jq -r '[.flags[] | select(startswith("still-blocked"))] | length' "$TMPD/me.w" | paste -sd' ')" "1 0" \
	"ends: first still-blocked, at --hang, then as it ended (no flag)"
is "$(jq -r .start_ns "$TMPD/me.w" | sort -u | grep -c '')" 1 "ends: both the same wait (one start_ns)"
between "$(jq -s '.[0].duration_ns' "$TMPD/me.w")" 500000000 900000000 "ends: the first so far: $(jq -s '.[0].duration_ns / 1e6' "$TMPD/me.w") ms"
between "$(jq -s '.[1].duration_ns' "$TMPD/me.w")" 1400000000 1700000000 "ends: the second whole: $(jq -s '.[1].duration_ns / 1e6' "$TMPD/me.w") ms"
is "$(jq -s -r '.[0].holder.comm' "$TMPD/me.w")" holder "ends: while it lasted, held by thread holder"

# --- d) SIGINT: what still waits is reported unfinished --------------------------------------------
# (Not under timeout(1), which would report the SIGINT as its own status.)
WL_LOG=$TMPD/si.log "$LATSNAP" record --json -t 50ms --hang 10s --no-snapshot -- "$WL/pipestall" 20 \
	>"$TMPD/si.out" 2>"$TMPD/si.err" &
L=$!
track_bg "$L"
R=$(wait_log si stuck reader)
sleep 0.5
kill -INT "$L"
wait "$L"
is "$?" 0 "SIGINT: latsnap exits 0"
is "$(jq -c "select(.tid == ${R:-0} and any(.flags[]; startswith(\"unfinished\")))" "$TMPD/si.out" | grep -c '')" 1 \
	"SIGINT: the reader, blocked 0.5 s (> threshold, < --hang), is reported unfinished"
is "$(jq -c "select(any(.flags[]; startswith(\"still-blocked\")))" "$TMPD/si.out" | grep -c '')" 0 \
	"SIGINT: nothing reached --hang 10s: nothing still-blocked"
pkill -f "$WL/pipestall" 2>/dev/null

# --- e) review ---------------------------------------------------------------------------------
run_latsnap "$TMPD/rep" "$TMPD/rep.err" report "$TMPD/dl.d"
is "$RC" 0 "report over the deadlock's snapshots: exit 0"
ok 'grep -q "^Stalls" "$TMPD/rep" && grep -qi "deadlock" "$TMPD/rep"' "report: a Stalls section names the deadlock" ||
	diag_file "$TMPD/rep" "  report: "
run_latsnap "$TMPD/repj" "$TMPD/repj.err" report --json "$TMPD/dl.d"
is "$(jq '.stalls | length' "$TMPD/repj" 2>/dev/null)" 3 \
	"report --json: three stalled waits (a, b and main joining a; each reported twice, counted once)"
is "$(jq '[.stalls[] | select(.deadlock)] | length' "$TMPD/repj" 2>/dev/null)" 2 "report --json: two of them in the deadlock"
S=$(first_snapshot "$TMPD/dl.d" 'select(any(.flags[]; startswith("still-blocked")))' 1)
run_latsnap "$TMPD/show" "$TMPD/show.err" show "$S"
ok 'grep -q "STILL BLOCKED" "$TMPD/show" && grep -q "held by" "$TMPD/show"' "show: STILL BLOCKED and the holder" ||
	diag_file "$TMPD/show" "  show: " 40
run_latsnap "$TMPD/flame" "$TMPD/flame.err" flame "$TMPD/dl.d"
is "$(grep -c 'lock_a_then_b' "$TMPD/flame")" 1 "flame: thread a's wait is one stack, counted once"

# --- f) --hang: values ----------------------------------------------------------------------------
for bad in 0 bogus -1s; do
	run_latsnap "$TMPD/o" "$TMPD/e" record --no-snapshot --hang "$bad" -- true
	is "$RC" 2 "--hang $bad: usage error"
	ok 'grep -q "hang" "$TMPD/e"' "--hang $bad: the message names the option"
done
printf 'hang = 2s\nthreshold = 20ms\n' >"$TMPD/conf"
run_latsnap "$TMPD/o" "$TMPD/e" record -v --no-snapshot -c "$TMPD/conf" -d 1s -- "$WL/sleeper" 10 1 10
is "$RC" 0 "config key hang: accepted"
printf 'hang = soon\n' >"$TMPD/conf"
run_latsnap "$TMPD/o" "$TMPD/e" record --no-snapshot -c "$TMPD/conf" -- true
is "$RC" 2 "config hang = soon: usage error"
ok 'grep -q "conf:1:" "$TMPD/e"' "... naming FILE:LINE"
start_stall off -t 50ms --hang off -d 2500ms --no-snapshot -- "$WL/pipestall" 20
wait "$L"
is "$(jq -c 'select(any(.flags[]; startswith("still-blocked") or startswith("unfinished")))' "$TMPD/off.out" | grep -c '')" 0 \
	"--hang off: no stall reported"
pkill -f "$WL/pipestall" 2>/dev/null

done_testing
