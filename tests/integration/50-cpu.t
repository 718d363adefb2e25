#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# CPU starvation: `cpucontend 300` pins a SCHED_FIFO spinner on each CPU for
# 300 ms. Thread "victim" wakes from a 20 ms nanosleep while every CPU is
# hogged, so its nanosleep is mostly runqueue time; thread "cruncher" spins
# in user space and is preempted: a "sleep" outlier (outside any syscall),
# mostly runqueue time, whose user stack shows crunch(): walked by frame pointers at its
# switch-out without the preload library, unwound by the library (signalled at its switch-in)
# with it, in the JSON and in a snapshot's summary.
set -u
. "$(dirname "$0")/lib.sh"

require_record cpucontend

# crunched OUT LOG ERR ARGS...: record_json ARGS... with WL_LOG=LOG; once more if the cruncher's
# sleep is not among the outliers, saying so: the kernel's fair server may let it run in the
# middle of the spinners' turn, and then it was never starved (the workload's own log says). A
# switch-in no sched_switch event tells of (this VM's kernel traces no switch out of its agent's
# threads) no longer loses the interval: it ends at the cruncher's next hook, flagged.
crunched() {
	local out=$1 log=$2 err=$3 try
	shift 3
	for try in 1 2 3; do
		rm -f "$log"
		WL_LOG=$log WL_VERBOSE=1 record_json "$out" "$err" "$@"
		awk '$1 == "tid" && $2 == "cruncher" { t = $3 } END { exit !t }' "$log" 2>/dev/null &&
			grep -q "\"tid\":$(awk '$1 == "tid" && $2 == "cruncher" { print $3 }' "$log")," "$out" && return 0
		# The workload's own measure says whether the starvation happened at all (the
		# kernel's fair server may hand SCHED_OTHER threads the CPU in the middle of it).
		diag "try $try: no outlier for the cruncher; latsnap said: $(grep '^latsnap: [0-9]* outliers' "$err");" \
			"the workload said: $(grep -E '^cpucontend: (cruncher|victim)' "$err" | paste -sd';')"
	done
}

OUT=$TMPD/out ERR=$TMPD/err LOG=$TMPD/wl.log
crunched "$OUT" "$LOG" "$ERR" -- -t 50ms -s 50ms -- "$WL/cpucontend" 300
is "$RC" 0 "record -t 50ms -s 50ms -- cpucontend 300: exit 0"
ok 'ndjson_ok "$OUT"' "stdout is NDJSON"
dump_outliers "$OUT"
grep '^cpucontend: ' "$ERR" | while IFS= read -r l; do diag "workload: $l"; done

VICTIM=$(awk '$1 == "tid" && $2 == "victim" { print $3 }' "$LOG")
CRUNCHER=$(awk '$1 == "tid" && $2 == "cruncher" { print $3 }' "$LOG")
read -r _ _ V0 V1 < <(grep '^victim ' "$LOG")
read -r _ _ G0 G1 < <(grep '^cruncher_gap ' "$LOG")
ok '[ -n "$VICTIM" ] && [ -n "$CRUNCHER" ] && [ -n "${V1:-}" ] && [ -n "${G1:-}" ]' "cpucontend ran (victim $VICTIM, cruncher $CRUNCHER)"
# The workload's own measurement: did the starvation happen at all?
between "$(((${V1:-0} - ${V0:-0}) / 1000000))" 200 600 "workload: the victim's 20 ms nanosleep took 200-600 ms (starved)"
between "$(((${G1:-0} - ${G0:-0}) / 1000000))" 200 600 "workload: the cruncher was off CPU 200-600 ms"

# victim: a nanosleep outlier dominated by runqueue time.
SEL="select(.tid == ${VICTIM:-0} and .kind == \"syscall\" and (.syscall | test(\"^(clock_)?nanosleep$\")))"
is "$(jcount "$OUT" "$SEL")" 1 "victim: one nanosleep outlier"
O=$TMPD/v.json
jq -s -c "[.[] | $SEL] | .[0] // {}" "$OUT" >"$O" 2>/dev/null || echo '{}' >"$O"
J() { jq -r "$1" "$O" 2>/dev/null; }
is "$(J .comm)" victim "victim: comm is victim"
between "$(J .duration_ns)" 200000000 600000000 "victim: duration within [200 ms, 600 ms]"
is "$(J '.runqueue_ns > 0.5 * .duration_ns')" true "victim: runqueue_ns > 50% of duration_ns"
is "$(J .cause)" "waiting for CPU" "victim: the cause is waiting for CPU, whatever the stack"
between "$(J .blocked_ns)" 10000000 40000000 "victim: blocked_ns ~ the 20 ms sleep (10-40 ms)"
between "$(J '(.on_cpu_ns + .blocked_ns + .runqueue_ns - .duration_ns) | fabs')" 0 2000 \
	"victim: on_cpu + blocked + runqueue == duration within 2 us"
if [ -n "${V0:-}" ]; then
	is "$(J ".start_ns >= ($V0 - 50000) and .end_ns <= ($V1 + 50000)")" true \
		"victim: the outlier lies within the workload's own measurement"
fi
diag "victim: $(J '"dur=\(.duration_ns/1e6) on_cpu=\(.on_cpu_ns/1e6) blocked=\(.blocked_ns/1e6) rq=\(.runqueue_ns/1e6) cause=\(.cause)"')"

# cruncher: an off-CPU interval outside any syscall, dominated by runqueue.
SEL="select(.tid == ${CRUNCHER:-0} and .kind == \"sleep\")"
is "$(jcount "$OUT" "$SEL")" 1 "cruncher: one sleep outlier"
jq -s -c "[.[] | $SEL] | .[0] // {}" "$OUT" >"$O" 2>/dev/null || echo '{}' >"$O"
is "$(J .comm)" cruncher "cruncher: comm is cruncher"
is "$(J '.kind == "sleep" and .syscall == null and .syscall_nr == null')" true "cruncher: kind sleep, syscall and syscall_nr null"
between "$(J .duration_ns)" 200000000 600000000 "cruncher: duration within [200 ms, 600 ms]"
is "$(J '.runqueue_ns > 0.8 * .duration_ns')" true "cruncher: runqueue_ns dominates (> 80%)"
between "$(J '(.on_cpu_ns + .blocked_ns + .runqueue_ns - .duration_ns) | fabs')" 0 2000 \
	"cruncher: on_cpu + blocked + runqueue == duration within 2 us"
if [ -n "${G0:-}" ]; then
	is "$(J ".start_ns >= ($G0 - 50000) and .end_ns <= ($G1 + 50000)")" true \
		"cruncher: the outlier lies within the gap the workload measured"
fi
diag "cruncher: $(J '"dur=\(.duration_ns/1e6) on_cpu=\(.on_cpu_ns/1e6) blocked=\(.blocked_ns/1e6) rq=\(.runqueue_ns/1e6) cause=\(.cause) flags=\(.flags)"')"

# The real-time spinners never leave the CPU: no outlier for them.
is "$(jcount "$OUT" 'select(.comm | test("^spinner"))')" 0 "no outlier for the spinners"

# user_stack_check FILE TAG SOURCE: the cruncher's sleep outlier in FILE (one JSON object per
# outlier) has a user stack from SOURCE whose frames name crunch(), where it was preempted, and no
# "no-user-stack" flag. Its stack is walked at its switch-out, while it is current: at its
# switch-in, where a sleep ends, the kernel walks no other task's user stack.
user_stack_check() {
	local file=$1 tag=$2 source=$3 tid c o=$TMPD/us.json
	tid=$(awk '$1 == "tid" && $2 == "cruncher" { print $3 }' "$TMPD/$tag.log" 2>/dev/null)
	c="select(.tid == ${tid:-0} and .kind == \"sleep\")"
	is "$(jcount "$file" "$c")" 1 "$tag: one sleep outlier of the cruncher"
	jq -s -c "[.[] | $c] | .[0] // {}" "$file" >"$o" 2>/dev/null || echo '{}' >"$o"
	if [ "$source" = unwind ] && [ "$(jq -r '[.flags[]? | select(startswith("split-uncertain"))] | length' "$o")" != 0 ]; then
		# Its switch-in went unseen: the interval ended at its next hook, where a signal would
		# unwind where it is then. The frame kept at its switch-out, said so.
		is "$(jq -r '.user_stack.source + " " + (.signalled | tostring)' "$o")" "frame-pointer false" \
			"$tag: its switch-in unseen: the frame-pointer frame, not signalled"
	elif [ "$source" = unwind ] && [ "$(jq -r '[.flags[]? | select(startswith("signal-refused"))] | length' "$o")" != 0 ]; then
		# Switched in from a kernel thread or the idle task: the kernel sends no signal from
		# there, and the stack is the frame kept at the switch-out, said so.
		is "$(jq -r '.user_stack.source + " " + (.signalled | tostring)' "$o")" "frame-pointer false" \
			"$tag: signal refused at the switch-in: the frame-pointer frame, not signalled"
	else
		is "$(jq -r '.user_stack.source' "$o")" "$source" "$tag: the cruncher's user stack comes from $source"
	fi
	is "$(jq -r '[.user_stack.frames[]?.symbol // "" | select(test("^crunch($|[.])"))] | length > 0' "$o")" \
		true "$tag: its user frames name crunch()"
	is "$(jq -r '[.flags[]? | select(startswith("no-user-stack"))] | length' "$o")" 0 \
		"$tag: no no-user-stack flag"
	diag "$tag: cruncher user stack ($(jq -r '.user_stack.source' "$o")): $(jq -r '[.user_stack.frames[]?.symbol] | join(" < ")' "$o") flags=$(jq -c .flags "$o")"
}

# With the preload library, --no-snapshot: signalled at its switch-in, before it runs user code
# again, the library unwinds from where it was preempted, and the stack reaches the outlier
# through the kernel.
cp "$LOG" "$TMPD/fp-preload.log"
user_stack_check "$OUT" fp-preload unwind

# Without it: the same walk (the cruncher keeps frame pointers; its innermost frame is the
# interrupted ip, which needs none).
OUT2=$TMPD/out2
crunched "$OUT2" "$TMPD/fp-nopreload.log" "$TMPD/err2" -- -t 50ms -s 50ms --no-preload \
	-- "$WL/cpucontend" 300
is "$RC" 0 "record --no-preload -- cpucontend 300: exit 0"
user_stack_check "$OUT2" fp-nopreload frame-pointer

# A process the library cannot enter (a static binary) while the end of a switch is hooked for
# the others: the cruncher's walk waits for the end of its switch back in, and only because its
# interval was long; there it runs in the cruncher's own context, where its user stack is as it
# was: crunch() and its caller cruncher_main(), by frame pointers.
STATIC=$TMPD/cpucontend-static
cc -std=gnu11 -O2 -g -fno-omit-frame-pointer -D_GNU_SOURCE -pthread -static -o "$STATIC" \
	"$ROOT/tests/workloads/cpucontend.c" 2>"$TMPD/cc.err"
ok '[ -x "$STATIC" ]' "cpucontend built static" || diag_file "$TMPD/cc.err" "  cc: "
# When its switch back in goes unseen (the kernel's recursion guard skips a program; this VM's
# kernel traces no switch out of its own agent's threads: 2 runs of 10 under stress-ng), there is
# no end of that switch to walk at: the outlier keeps the one frame, and must say so. The walk is
# then tried again (3 runs at most).
OUT3=$TMPD/out3
for try in 1 2 3; do
	crunched "$OUT3" "$TMPD/fp-static.log" "$TMPD/err3" -- -v -t 50ms -s 50ms -- "$STATIC" 300
	CT=$(awk '$1 == "tid" && $2 == "cruncher" { print $3 }' "$TMPD/fp-static.log" 2>/dev/null)
	C="select(.tid == ${CT:-0} and .kind == \"sleep\" and any(.flags[]?; startswith(\"split-uncertain\")))"
	[ "$(jcount "$OUT3" "$C")" = 0 ] && break
	is "$(jcount "$OUT3" "$C | select(any(.flags[]?; startswith(\"user-stack-truncated: only the frame where it left the CPU\")) and (.user_stack.frames | length) == 1)")" 1 \
		"fp-static, try $try: its switch back in went unseen: one frame, flagged user-stack-truncated" ||
		dump_outliers "$OUT3"
done
is "$RC" 0 "record -v -- cpucontend-static 300: exit 0"
user_stack_check "$OUT3" fp-static frame-pointer
is "$(jq -s -r --argjson t "${CT:-0}" '[.[] | select(.tid == $t and .kind == "sleep") | .user_stack.frames[]?.symbol // "" | select(. == "cruncher_main")] | length > 0' "$OUT3")" \
	true "fp-static: the walk reached crunch()'s caller, cruncher_main()"
DEFERRED=$(sed -n 's/.*at the end of the switch back in, for a long interval: \([0-9]*\).*/\1/p' "$TMPD/err3")
ok '[ "${DEFERRED:-0}" -ge 1 ]' "fp-static: walked at the end of its switch back in (record -v: ${DEFERRED:-none})" ||
	diag "$(grep 'user stacks walked' "$TMPD/err3")"

# With snapshots: the same unwound stack in summary.json.
if ! command -v lttng-sessiond >/dev/null || ! command -v babeltrace2 >/dev/null; then
	skip_tests 5 "snapshot: LTTng not installed"
else
	require_lttng
	# Up to three runs, as crunched(): the kernel's fair server may let the cruncher run in
	# the middle of the spinners' turn, and then it was never starved (its own log says).
	for try in 1 2 3; do
		SNAPS=$TMPD/snaps.$try
		rm -f "$TMPD/unwind.log"
		WL_LOG=$TMPD/unwind.log WL_VERBOSE=1 timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record \
			-t 50ms -s 50ms -o "$SNAPS" -- "$WL/cpucontend" 300 >/dev/null 2>"$TMPD/err3"
		RC3=$?
		jq -c '.outliers[]' "$SNAPS"/*/summary.json >"$TMPD/out3" 2>/dev/null
		tid=$(awk '$1 == "tid" && $2 == "cruncher" { print $3 }' "$TMPD/unwind.log" 2>/dev/null)
		[ "$RC3" = 0 ] && [ -n "$tid" ] && grep -q "\"tid\":$tid," "$TMPD/out3" && break
		diag "try $try: no outlier for the cruncher in the snapshots; latsnap said: $(grep '^latsnap: [0-9]* outliers' "$TMPD/err3");" \
			"the workload said: $(grep -E '^cpucontend: (cruncher|victim)' "$TMPD/err3" | paste -sd';')"
	done
	is "$RC3" 0 "record -o DIR -- cpucontend 300 (snapshots): exit 0"
	user_stack_check "$TMPD/out3" unwind unwind
fi

done_testing
