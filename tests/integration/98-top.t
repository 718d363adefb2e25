#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# latsnap top: the live LatencyTOP view. Three workloads whose waits are known run meanwhile:
# sleeper (100 ms naps), pipeloop (reads a pipe fed every 50 ms) and lockloop (thread waiter
# blocks 50 ms on a mutex each round). Batch text and JSON are checked against them; then the
# idle policy against workpool (workers waiting for jobs, a reader for input: counted apart; the
# jobs' mutex waits: latency), with and without --include-idle; then the
# stalled list (--hang) against pipewait, whose read never ends within the test; then the
# screen under a real terminal (tmux): causes per process, the stalled list, the keys, and the
# terminal restored.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require jq tmux
require_latsnap
require_workloads sleeper pipeloop lockloop pipewait workpool

OUT=$TMPD/out ERR=$TMPD/err

# --- usage errors ---
for args in "--bogus" "-i xyz" "-i 10ms" "--batch 0" "--json" "--sample-ratio 0" "extra" \
	"--hang 0" "--hang 0ms" "--hang 5x" "--hang -1s" "--hang"; do
	# shellcheck disable=SC2086
	run_latsnap "$OUT" "$ERR" top $args
	is "$RC" 2 "top $args: usage error, exit 2"
	like "$(head -n 1 "$ERR")" '^latsnap: top: ' "top $args: one 'latsnap: top: ...' line"
done
run_latsnap "$OUT" "$ERR" top --rules "$TMPD/none.rules" --batch 1
is "$RC" 2 "top --rules MISSING: exit 2"
like "$(cat "$ERR")" "none.rules" "top --rules MISSING: names the file"
run_latsnap "$OUT" "$ERR" top --help
is "$RC" 0 "top --help: exit 0"
like "$(cat "$OUT")" '--batch N' "top --help lists --batch"
like "$(cat "$OUT")" '--hang DUR' "top --help lists --hang"
like "$(cat "$OUT")" '--include-idle' "top --help lists --include-idle"

# --- the workloads ---
WL_LOG=$TMPD/sleeper.log "$WL/sleeper" 100 100000 >/dev/null 2>&1 &
SLEEPER=$!
track_bg $SLEEPER
WL_LOG=$TMPD/pipe.log "$WL/pipeloop" 50 100000 >/dev/null 2>&1 &
PIPE=$!
track_bg $PIPE
WL_LOG=$TMPD/lock.log "$WL/lockloop" 50 100000 >/dev/null 2>&1 &
LOCK=$!
track_bg $LOCK
sleep 0.5
FEEDER=$(wl_log_get "$TMPD/pipe.log" writer)
track_bg "$FEEDER"
INODE=$(wl_log_get "$TMPD/pipe.log" pipe)
MUTEX=$(wl_log_get "$TMPD/lock.log" mutex)
WAITER=$(awk '$1 == "tid" && $2 == "waiter" { print $3 }' "$TMPD/lock.log")
PIDS=(-p "$SLEEPER" -p "$PIPE" -p "$LOCK")

# --- batch JSON: two refreshes of 2 s ---
# pipeloop reads its pipe again and again at one place: a consumer, waiting for work by the idle
# policy. Its reads are what this part checks top's aggregation with: the policy off.
run_latsnap "$OUT" "$ERR" top -i 1s --batch 1 --json "${PIDS[@]}"
is "$(jq -r ".processes[] | select(.pid == $PIPE) | .causes[] | select(.cause == \"Reading from a pipe\") | .count" "$OUT" 2>/dev/null)" "" \
	"the idle policy: pipeloop's pipe reads (a consumer's, at one place) are not in the tables"
between "$(jq -r '.idle.waits' "$OUT" 2>/dev/null)" 10 1e9 "the idle policy: they are counted on the idle line"
run_latsnap "$OUT" "$ERR" top -i 2s --batch 2 --json --include-idle "${PIDS[@]}"
is "$RC" 0 "top --batch 2 --json: exit 0"
is "$(grep -c '' "$OUT")" 2 "two refreshes, one line each"
ok 'ndjson_ok "$OUT"' "each line is one JSON object"
[ "$RC" = 0 ] || diag_file "$ERR" "stderr: "
J=$TMPD/last.json
tail -n 1 "$OUT" >"$J"
Q() { jq -r "$1" "$J" 2>/dev/null; }
between "$(Q .interval_ns)" 1900000000 2600000000 "interval_ns is about 2 s"
between "$(Q .waits)" 1 1e12 "waits were counted"
is "$(Q '[.processes[].pid] | sort | map(tostring) | join(" ")')" \
	"$(printf '%s\n' "$SLEEPER" "$PIPE" "$LOCK" | sort -n | tr '\n' ' ' | sed 's/ $//')" \
	"--pid lists exactly the three workloads"
P() { Q ".processes[] | select(.pid == $1) | $2"; }
C() { P "$1" ".causes[] | select(.cause == \"$2\") | $3"; }
NAP="Requested sleep (nanosleep)"
between "$(C "$SLEEPER" "$NAP" .count)" 12 22 "sleeper: ~20 naps in 2 s"
between "$(C "$SLEEPER" "$NAP" .avg_ns)" 95000000 130000000 "sleeper: naps average ~100 ms"
between "$(C "$SLEEPER" "$NAP" .percent)" 80 100 "sleeper: naps are most of its wait time"
is "$(P "$SLEEPER" .comm)" sleeper "sleeper: comm"
RD="Reading from a pipe"
between "$(C "$PIPE" "$RD" .count)" 25 42 "pipeloop: ~40 pipe reads in 2 s"
between "$(C "$PIPE" "$RD" .avg_ns)" 45000000 80000000 "pipeloop: pipe reads average ~50 ms"
between "$(P "$PIPE" ".objects[] | select(.object == \"pipe:[$INODE]\") | .count")" 25 42 \
	"pipeloop: the reads wait on its pipe's inode (view 3's object)"
LOCKC=$(P "$LOCK" ".threads[] | select(.tid == $WAITER) | .causes[0].cause")
like "$LOCKC" 'lock contention' "lockloop: thread waiter's first cause is lock contention ($LOCKC)"
OBJ="futex $MUTEX (pid $LOCK)"
between "$(P "$LOCK" ".objects[] | select(.object == \"$OBJ\") | .count")" 25 42 \
	"lockloop: ~40 waits on the mutex's futex address"
between "$(P "$LOCK" ".objects[] | select(.object == \"$OBJ\") | .avg_ns")" 45000000 80000000 \
	"lockloop: mutex waits average ~50 ms"
is "$(P "$LOCK" .nr_threads)" 2 "lockloop: two threads waited (holder, waiter)"
for cause in "$NAP" "$RD"; do
	is "$(Q "[.system[].cause] | index(\"$cause\") != null")" true "system-wide causes include '$cause'"
done
between "$(Q '[.system[].percent] | add')" 99 101 "system-wide percentages add up to 100"

# --- batch text ---
run_latsnap "$OUT" "$ERR" top -i 1s --batch 1 "${PIDS[@]}"
is "$RC" 0 "top --batch 1: exit 0"
like "$(head -n 1 "$OUT")" '^latsnap top [0-9.]+' "text: title line with the version"
ok 'grep -q "^System wide latencies" "$OUT"' "text: System wide latencies"
ok 'grep -Eq "^Process sleeper \($SLEEPER\)  Total: [0-9.]+ msec in 1 threads" "$OUT"' \
	"text: sleeper's process line"
ok "sed -n '/^Process sleeper/,/^\$/p' \"\$OUT\" | grep -Eq '^Requested sleep \\(nanosleep\\) +[0-9]+ +(9[0-9]|1[0-2][0-9])\\.[0-9] msec'" \
	"text: sleeper's nanosleep row averages ~100 ms"

# --- --rules FILE and --sample-ratio ---
printf '100 syscall:*nanosleep = Custom nap rule\n' >"$TMPD/my.rules"
run_latsnap "$OUT" "$ERR" top -i 1s --batch 1 --json --sample-ratio 1 --rules "$TMPD/my.rules" \
	-p "$SLEEPER"
is "$RC" 0 "top --rules FILE --sample-ratio 1: exit 0"
tail -n 1 "$OUT" >"$J"
between "$(C "$SLEEPER" "Custom nap rule" .count)" 5 12 "--rules FILE names sleeper's naps"
is "$(Q .sampled_out)" 0 "--sample-ratio 1: nothing sampled out"

# --- the idle policy: workpool ---
# workpool 2 4 250 120 (~1.8 s): two wp_worker threads wait on a condition variable for jobs and
# wp_reader reads a pipe for input (waits for work: idle); each of the 4 jobs is a ~120 ms mutex
# wait of a worker (latency, lock contention). Its main thread's wait in pthread_join() at the
# end is an event too, but of a main thread: latency. top_workpool TAG ARGS: one refresh of 5 s of
# `top ARGS` with workpool run inside it (once top is attached), its output in
# $TMPD/TAG.out; sets RC (top's) and WP (workpool's pid).
top_workpool() {
	local tag=$1 job i
	shift
	timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" top -v --batch 1 -i 5s "$@" >"$TMPD/$tag.out" \
		2>"$TMPD/$tag.err" &
	job=$!
	# Attached once -v says its first stall scan ran (a loaded machine can take seconds).
	for i in $(seq 1 200); do
		grep -q 'stall scan at load' "$TMPD/$tag.err" && break
		sleep 0.1
	done
	WL_LOG=$TMPD/$tag.log timeout 20 "$WL/workpool" 2 4 250 120 >/dev/null 2>&1
	wait $job
	RC=$?
	WP=$(wl_log_get "$TMPD/$tag.log" pid)
	[ "$RC" = 0 ] || diag_file "$TMPD/$tag.err" "stderr: "
}
# W FILE FILTER: the rows (cause, count, total_ns) of workpool's threads named by comm FILTER
# (a jq regex), one per line as "comm|cause|count|total_ns".
W() {
	jq -r ".processes[] | select(.pid == $WP) | .threads[] | select(.comm | test(\"$2\")) |
		.comm as \$c | .causes[] | \"\(\$c)|\(.cause)|\(.count)|\(.total_ns)\"" "$1" \
		2>/dev/null
}
top_workpool idle --json
is "$RC" 0 "idle policy: top --json with workpool: exit 0"
J=$TMPD/idle.out
ok '[ -n "$WP" ] && jq -e ".processes[] | select(.pid == $WP)" "$J" >/dev/null' \
	"idle policy: workpool is among the processes"
W "$J" '^wp_' | sed 's/^/rows: /' | while read -r l; do diag "$l"; done
# S FILE COMM CAUSE FIELD: FIELD (3 count, 4 total_ns) added up over the rows of workpool's
# threads named COMM whose cause matches CAUSE (an awk regex).
S() { W "$1" "$2" | awk -F'|' -v re="$3" -v f="$4" '$2 ~ re { s += $f } END { print s + 0 }'; }
# The 4 jobs' mutex waits, ~120 ms each: lock contention of the workers.
between "$(S "$J" '^wp_worker$' 'lock contention' 4)" 300000000 1500000000 \
	"idle policy: wp_worker's mutex waits (~4 x 120 ms) are lock contention"
is "$(W "$J" '^wp_(worker|reader)$' | grep -Eic 'condition variable|pipe')" 0 \
	"idle policy: no condition-variable or pipe row of wp_worker or wp_reader (waits for work)"
is "$(jq -r "[.processes[] | select(.pid == $WP) | .objects[].object |
	select(startswith(\"pipe:\"))] | length" "$J")" 0 \
	"idle policy: nor its pipe among its objects (view 3)"
between "$(jq -r '.idle.waits' "$J")" 1 1e12 \
	"idle policy: the idle waits are counted (JSON \"idle\")"
between "$(jq -r '.idle.threads' "$J")" 3 1e9 "idle policy: of 3 threads or more (workpool's 3)"
# The same in text: the idle line below the title.
top_workpool idle-text
is "$RC" 0 "idle policy, text: exit 0"
IDLE_LINE='^idle: [1-9][0-9]* waits of [1-9][0-9]* threads, [0-9]+\.[0-9] s'
IDLE_LINE+='(; [0-9]+ threads waiting now)? \(waiting for work, not latency\)$'
ok "sed -n 2p '$TMPD/idle-text.out' | grep -Eq '$IDLE_LINE'" \
	"idle policy, text: the idle line counts some waits"
sed -n 2p "$TMPD/idle-text.out" | sed 's/^/line 2: /' | while read -r l; do diag "$l"; done
# Its main thread's waits in pthread_join() are not for work: its table may show them.
WPTABLE="sed -n '/^Process workpool ($WP)/,/^\$/p' '$TMPD/idle-text.out'"
ok "$WPTABLE | grep -q 'lock contention'" "idle policy, text: workpool's lock contention row"
if ! eval "$WPTABLE" | grep -q 'lock contention'; then
	diag "workpool $WP:$(grep -c '' "$TMPD/idle-text.log") log lines; its part of the output:"
	grep -A6 "workpool\|wp_" "$TMPD/idle-text.out" | sed 's/^/# /'
	diag_file "$TMPD/idle-text.err" "stderr: "
fi
# --include-idle: the waits for work are latency again.
top_workpool include --json --include-idle
is "$RC" 0 "--include-idle: exit 0"
J=$TMPD/include.out
between "$(S "$J" '^wp_worker$' 'condition variable' 3)" 2 1e9 \
	"--include-idle: wp_worker's condition-variable waits appear"
between "$(S "$J" '^wp_reader$' 'Reading from a pipe' 3)" 2 1e9 \
	"--include-idle: wp_reader's pipe reads appear"
between "$(S "$J" '^wp_worker$' 'lock contention' 4)" 300000000 1500000000 \
	"--include-idle: the mutex waits are still lock contention"
is "$(jq -c .idle "$J")" null "--include-idle: JSON \"idle\" is null"
run_latsnap "$OUT" "$ERR" top --batch 1 -i 200ms --include-idle -p "$SLEEPER"
ok '[ "$RC" = 0 ] && ! grep -q "^idle: " "$OUT"' "--include-idle, text: no idle line"

# --- stalls (--hang): a thread blocked for good, listed while it still waits ---
# top runs 6 refreshes of 500 ms, each line stamped as it comes; pipewait starts once the first
# is out (so the hooks see its read begin), its writer sleeping 10 min before writing: the reader
# blocks in read() for good as far as this test goes. A refresh less than 0.9 s after its start
# must not list it; one 1.6 s or more after must, as waiting (so far) at least 1 s and no longer
# than it has run; the 0.5 s between leave room for the refresh's own delay.
STAMPED=$TMPD/stamped
(
	timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" top --batch 6 -i 500ms --json --hang 1s 2>"$ERR" |
		while IFS= read -r line; do printf '%s %s\n' "$(date +%s%N)" "$line"; done >"$STAMPED"
) &
TOPJOB=$!
for i in $(seq 1 200); do
	[ -s "$STAMPED" ] && break
	sleep 0.1
done
T0=$(date +%s%N)
WL_LOG=$TMPD/pw.log "$WL/pipewait" 600000 >/dev/null 2>&1 &
PW=$!
track_bg $PW
wait $TOPJOB
sleep 0.2
PWTID=$(wl_log_get "$TMPD/pw.log" reader)
PWRITER=$(wl_log_get "$TMPD/pw.log" writer)
track_bg "$PWRITER"
is "$(grep -c '' "$STAMPED")" 6 "--hang 1s --batch 6: six refreshes"
[ "$(grep -c '' "$STAMPED")" = 6 ] || diag_file "$ERR" "stderr: "
is "$PWTID" "$PW" "pipewait: its reader is its main thread"
early=0 early_listed=0 late=0 late_missing=0 listed=0 bad_waited=0
while read -r stamp json; do
	age=$((stamp - T0))
	[ "$age" -gt 0 ] || continue
	waited=$(jq -r ".stalled[] | select(.tid == $PWTID) | .waited_ns" <<<"$json")
	if [ "$age" -lt 900000000 ]; then
		early=$((early + 1))
		[ -z "$waited" ] || early_listed=$((early_listed + 1))
	elif [ "$age" -ge 1600000000 ]; then
		late=$((late + 1))
		[ -n "$waited" ] || late_missing=$((late_missing + 1))
	fi
	if [ -n "$waited" ]; then
		listed=$((listed + 1))
		# At least --hang; not longer than pipewait has run; its delay at most 0.5 s.
		if [ "$waited" -lt 1000000000 ] || [ "$waited" -gt "$age" ] ||
			[ "$waited" -lt $((age - 500000000)) ]; then
			bad_waited=$((bad_waited + 1))
			diag "refresh $age ns after pipewait's start: waited_ns $waited"
		fi
		LAST_JSON=$json
	fi
done <"$STAMPED"
between "$early" 1 3 "stalls: refreshes within 0.9 s of pipewait's start ($early)"
is "$early_listed" 0 "stalls: none of them lists it (waiting less than --hang 1s)"
between "$late" 1 4 "stalls: refreshes 1.6 s or more after its start ($late)"
is "$late_missing" 0 "stalls: each of them lists it"
is "$bad_waited" 0 "stalls: waited_ns is at least 1 s, and how long it has run so far"
if [ "$listed" -gt 0 ]; then
	S() { jq -c ".stalled[] | select(.tid == $PWTID) | $1" <<<"$LAST_JSON"; }
	is "$(S .pid)" "$PW" "stalls: pid"
	is "$(S .tid)" "$PWTID" "stalls: tid"
	is "$(S .comm)" '"pipewait"' "stalls: comm"
	is "$(S .pcomm)" '"pipewait"' "stalls: pcomm"
	is "$(S .syscall)" '"read"' "stalls: syscall read"
	is "$(S .cause)" '"Reading from a pipe"' "stalls: the cause, from its kernel stack"
	like "$(S .object)" '^"pipe:\[[0-9]+\]"$' "stalls: the object, its pipe"
	is "$(S .flags)" '["still-blocked"]' "stalls: flags still-blocked (its start seen by top)"
	is "$(jq -r .hang_ns <<<"$LAST_JSON")" 1000000000 "stalls: hang_ns"
else
	fail "stalls: pipewait never listed"
	diag_file "$STAMPED" "stamped: " 6
fi
ok 'head -n 1 "$STAMPED" | cut -d" " -f2- | jq -e ".stalled | type == \"array\"" >/dev/null' \
	"stalls: \"stalled\" is in every refresh"

# Blocked before top started: the start is the scheduler's last switch out of the thread.
before=$(date +%s%N)
run_latsnap "$OUT" "$ERR" top --batch 1 -i 500ms --json -p "$PW"
is "$(jq -c "[.stalled[] | select(.tid == $PWTID)] | length" "$OUT" 2>/dev/null | tail -n 1)" 0 \
	"stalls, blocked before top: waiting where it was when top began, idle by the policy: not stalled"
between "$(jq -r '.idle.waiting_now' "$OUT" 2>/dev/null | tail -n 1)" 1 1e9 \
	"stalls, blocked before top: counted waiting now on the idle line"
run_latsnap "$OUT" "$ERR" top --batch 1 -i 500ms --json --include-idle -p "$PW"
after=$(date +%s%N)
is "$RC" 0 "stalls, blocked before top: exit 0"
tail -n 1 "$OUT" >"$J"
is "$(Q "[.stalled[] | select(.tid == $PWTID) | .flags] | .[0]" | jq -c .)" \
	'["still-blocked","before-top"]' "stalls, blocked before top: flags still-blocked, before-top"
between "$(Q ".stalled[] | select(.tid == $PWTID) | .waited_ns")" $((before - T0)) $((after - T0)) \
	"stalls, blocked before top: waited_ns counts from its start, not top's"
is "$(Q '[.stalled[].pid] | unique | map(tostring) | join(" ")')" "$PW" \
	"stalls: --pid lists that process's stalls only"

# Text: the section below the system-wide table, one line per stalled thread.
run_latsnap "$OUT" "$ERR" top --batch 1 -i 500ms --include-idle -p "$PW"
is "$RC" 0 "stalls, text: exit 0"
ok 'grep -q "^Stalled now (waiting longer than 1s)\$" "$OUT"' "stalls, text: the section's heading"
ok "grep -Eq '^pipewait\[$PW\] pipewait\[$PWTID\] +[0-9]+\.[0-9] s so far  read +Reading from a pipe  still-blocked on pipe:\[[0-9]+\]\$' \"\$OUT\"" \
	"stalls, text: pipewait's line (who, how long so far, syscall, cause, still-blocked, object)"
ok '[ "$(sed -n "/^System wide latencies/,/^Stalled now/p" "$OUT" | tail -n 2 | head -n 1)" = "" ]' \
	"stalls, text: below the system-wide table, after a blank line"
grep -q "^Stalled now" "$OUT" || diag_file "$OUT" "stdout: "

# --hang off: no scan, nothing listed.
run_latsnap "$OUT" "$ERR" top --batch 2 -i 500ms --json --hang off -p "$PW"
is "$RC" 0 "--hang off: exit 0"
is "$(jq -s -c '[.[].stalled]' "$OUT")" '[[],[]]' "--hang off: \"stalled\" is [] in each refresh"
is "$(jq -s -c '[.[].hang_ns]' "$OUT")" '[0,0]' "--hang off: hang_ns 0"
run_latsnap "$OUT" "$ERR" top --batch 1 -i 500ms --hang off -p "$PW"
ok '! grep -q "^Stalled now" "$OUT"' "--hang off, text: no stalled section"
run_latsnap "$OUT" "$ERR" top --batch 1 -i 500ms --hang 1h -p "$PW"
ok '! grep -q "^Stalled now" "$OUT"' "--hang 1h, text: none waits that long, no section"

# --- the screen, in tmux ---
S=latsnap-top-$$
PANE=$TMPD/pane
tmux kill-session -t "$S" 2>/dev/null
# --include-idle: the screen shows pipeloop's reads and pipewait's stall (both waits for work by
# the idle policy, checked above).
tmux new-session -d -s "$S" -x 150 -y 45 \
	"$LATSNAP top -i 1s --include-idle ${PIDS[*]} -p $PW; echo EXITED rc=\$?; sleep 60"
cap() { tmux capture-pane -p -t "$S" >"$PANE"; }
alt() { tmux display -p -t "$S" '#{alternate_on}'; }
selected() { sed -n 's/^Process [^ ]* (\([0-9]*\)).*/\1/p' "$PANE" | head -n 1; }
# wait_screen COND [SECONDS]: capture the pane until the shell condition COND holds on it (as
# ok's: eval'd), for at most SECONDS (default 10), instead of a fixed sleep after a key; 1 and
# the last screen as diag lines when it never does.
wait_screen() {
	local cond=$1 limit=${2:-10} end
	end=$(($(date +%s%N) + limit * 1000000000))
	while :; do
		cap
		eval "$cond" && return 0
		[ "$(date +%s%N)" -lt "$end" ] || break
		sleep 0.1
	done
	diag "after ${limit} s the screen still fails: $cond; the last screen:"
	diag_file "$PANE" "screen: " 45
	return 1
}
# The bar with its first process selected: nothing before it ("   [name(pid)]").
at_first='grep -Eq "^   \[[a-z]+\([0-9]+\)\]" "$PANE"'
wait_screen '[ -n "$(selected)" ]' 20
ok 'grep -q "^latsnap top " "$PANE"' "screen: title line"
ok 'grep -q "^System wide latencies (by cause)" "$PANE"' "screen: System wide latencies"
ok 'grep -q "< >: previous/next" "$PANE"' "screen: the hint line with the keys"
ok 'grep -q "^Stalled now (waiting longer than 1s)" "$PANE" && grep -Eq "^pipewait\[$PW\] pipewait\[$PWTID\] .* s so far  read " "$PANE"' \
	"screen: the stalled section lists pipewait's read"
is "$(alt)" 1 "screen: the terminal is in the alternate screen"
declare -A SEEN_CAUSE=()
FIRST=$(selected)
ok '[ -n "$FIRST" ]' "screen: a process line"
diag_file "$PANE" "screen: " 45
# From the first process of the bar, '>' selects another one.
tmux send-keys -t "$S" '<' '<' '<'
wait_screen "$at_first"
before=$(selected)
tmux send-keys -t "$S" '>'
wait_screen '[ -n "$(selected)" ] && [ "$(selected)" != "$before" ]'
after=$(selected)
ok '[ -n "$after" ] && [ "$after" != "$before" ]' "screen: '>' moves to the next process ($before -> $after)"
ok 'grep -Eq "\[[a-z]+\($after\)\]" "$PANE"' "screen: the process bar marks the new one"
# The order is by total wait, which can change at each refresh: go on until all three were seen.
for i in $(seq 1 15); do
	pid=$(selected)
	SEEN_CAUSE[$pid]=$(sed -n '/^Process /,/^$/p' "$PANE")
	[ -n "${SEEN_CAUSE[$SLEEPER]:-}" ] && [ -n "${SEEN_CAUSE[$PIPE]:-}" ] &&
		[ -n "${SEEN_CAUSE[$LOCK]:-}" ] && break
	# At the end of the bar, go back to its start.
	if grep -Eq "\[[a-z]+\($pid\)\] *$" "$PANE"; then
		tmux send-keys -t "$S" '<' '<' '<'
		wait_screen "$at_first"
		continue
	fi
	tmux send-keys -t "$S" '>'
	wait_screen '[ -n "$(selected)" ] && [ "$(selected)" != "$pid" ]'
done
SEEN_CAUSE[$(selected)]=$(sed -n '/^Process /,/^$/p' "$PANE")
like "${SEEN_CAUSE[$SLEEPER]:-}" 'Requested sleep \(nanosleep\)' "screen: sleeper shows its sleep cause"
like "${SEEN_CAUSE[$PIPE]:-}" 'Reading from a pipe' "screen: pipeloop shows its pipe cause"
like "${SEEN_CAUSE[$LOCK]:-}" 'lock contention' "screen: lockloop shows its lock cause"
tmux send-keys -t "$S" 't'
THREADS='grep -Eq "^Thread [^ ]+ \([0-9]+\) of pid [0-9]+  Total: .*\[thread view\]" "$PANE"'
wait_screen "$THREADS"
ok "$THREADS" "screen: 't' switches to the thread view"
tmux send-keys -t "$S" '3'
wait_screen 'grep -q "^System wide latencies (by synchronization object)" "$PANE"'
ok 'grep -q "^System wide latencies (by synchronization object)" "$PANE" && grep -q "^Object " "$PANE"' \
	"screen: '3' shows synchronization objects"
ok 'grep -Eq "futex 0x[0-9a-f]+ \(pid $LOCK\)|pipe:\[$INODE\]" "$PANE"' \
	"screen: a workload's futex or pipe is among them"
tmux send-keys -t "$S" '2'
wait_screen 'grep -q "^System wide latencies (special causes)" "$PANE"'
ok 'grep -q "^System wide latencies (special causes)" "$PANE" && ! sed -n "3,15p" "$PANE" | grep -q "Requested sleep"' \
	"screen: '2' shows special causes only"
tmux send-keys -t "$S" 'q'
wait_screen 'grep -q "EXITED rc=" "$PANE"'
ok 'grep -q "EXITED rc=0" "$PANE"' "screen: 'q' quits with status 0"
is "$(alt)" 0 "screen: 'q' restores the terminal (alternate screen left)"
tmux kill-session -t "$S" 2>/dev/null

# SIGINT restores the terminal too.
tmux new-session -d -s "$S" -x 120 -y 40 "$LATSNAP top -i 1s; echo EXITED rc=\$?; sleep 60"
# Its title drawn: the screen is set up, and so is the SIGINT handler, installed before.
wait_screen 'grep -q "^latsnap top " "$PANE"' 20
is "$(alt)" 1 "SIGINT: running in the alternate screen"
tmux send-keys -t "$S" C-c
wait_screen 'grep -q "EXITED rc=" "$PANE"'
ok 'grep -q "EXITED rc=0" "$PANE"' "SIGINT: exits with status 0"
is "$(alt)" 0 "SIGINT: the terminal is restored"
tmux kill-session -t "$S" 2>/dev/null

done_testing
