#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A syscall slow because it computes in the kernel: `kerncpu 32 3` (three reads of 32 MB from
# /dev/urandom in kernel_work()) under -t 10ms. Such a syscall most often never leaves its CPU,
# so it starts and ends in the BPF side's per-CPU cache: it must still be one outlier per read,
# on CPU, timed as the workload itself timed it. Snapshots off and on (the context stream adds
# the exit's clock read and a syscall event). read is one of the syscalls whose entry reads the
# clock by default (issue 48: the others' starts are worked out at their switch-out); with
# --exact-start every entry does, and the reads are timed the same.
set -u
. "$(dirname "$0")/lib.sh"
no_ust_wait

require_record kerncpu

# check TAG OUT LOG FRAME: the three reads of kerncpu in OUT (one outlier per line), their user
# stacks naming FRAME (a frame-pointer walk from libc's read() skips its caller, kernel_work()).
check() {
	local tag=$1 out=$2 log=$3 frame=$4 pid sel n i t0 t1 o=$TMPD/$1.o
	pid=$(wl_log_get "$log" pid)
	sel="select(.pid == ${pid:-0} and .kind == \"syscall\" and .syscall == \"read\")"
	dump_outliers "$out"
	is "$(jcount "$out" "$sel")" 3 "$tag: one outlier per read (3)"
	# (Its execve is latsnap starting it, not its work: on a loaded machine, under ASan, it can
	# take longer than -t 10ms.)
	is "$(jq -r "select(.pid == ${pid:-0} and .syscall != \"execve\") | .syscall // .kind" "$out" |
		sort -u | paste -sd' ')" read "$tag: no other outlier of the workload's own work"
	n=0
	while read -r _ _ t0 t1 _; do
		i=$(jq -c "$sel | select(.start_ns >= $t0 - 100000 and .end_ns <= $t1 + 100000)" "$out" | head -n 1)
		[ -n "$i" ] && n=$((n + 1))
		printf '%s\n' "$i" >>"$o"
	done < <(grep '^read ' "$log")
	is "$n" 3 "$tag: each outlier lies within the read the workload timed (100 us either side)"
	is "$(jq -s "[.[] | $sel | select(.on_cpu_ns < 0.5 * .duration_ns)] | length" "$out")" 0 \
		"$tag: each mostly on CPU (on_cpu_ns >= half the duration)"
	is "$(jq -s "[.[] | $sel | select((.on_cpu_ns + .blocked_ns + .runqueue_ns - .duration_ns) | fabs > 2000)] | length" "$out")" 0 \
		"$tag: on_cpu + blocked + runqueue == duration within 2 us, each"
	is "$(jq -s "[.[] | $sel | select(.blocked_ns > 1000000)] | length" "$out")" 0 \
		"$tag: none blocked more than 1 ms (it waits for nothing)"
	is "$(jq -s "[.[] | $sel | select([.user_stack.frames[]?.symbol] | index(\"$frame\") | not)] | length" "$out")" 0 \
		"$tag: each user stack names $frame()"
	diag "$tag: $(jq -r "$sel | \"\(.duration_ns/1e6) ms on_cpu=\(.on_cpu_ns/1e6) rq=\(.runqueue_ns/1e6) switches=\(.switches)\"" "$out" | paste -sd';')"
}

WL_LOG=$TMPD/a.log record_json "$TMPD/a.out" "$TMPD/a.err" -- -t 10ms --no-preload -- "$WL/kerncpu" 32 3
is "$RC" 0 "--no-snapshot, --no-preload: record -t 10ms -- kerncpu 32 3: exit 0"
check no-snapshot "$TMPD/a.out" "$TMPD/a.log" main

# --exact-start: the clock at each entry, the start exact. Up to three runs, as below: a read
# that waited for the CPU more than it ran is the machine's doing.
for try in 1 2 3; do
	rm -f "$TMPD/x.log"
	WL_LOG=$TMPD/x.log record_json "$TMPD/x.out" "$TMPD/x.err" -- -t 10ms --no-preload \
		--exact-start -- "$WL/kerncpu" 32 3
	[ "$RC" = 0 ] || break
	BUSY=$(jq -s '[.[] | select(.kind == "sleep" or (.syscall == "read" and
		.runqueue_ns > .on_cpu_ns))] | length' "$TMPD/x.out" 2>/dev/null)
	[ "${BUSY:-0}" = 0 ] && break
	diag "--exact-start, try $try: the machine was busy ($BUSY outliers waited for the CPU); again"
done
is "$RC" 0 "--exact-start: record -t 10ms -- kerncpu 32 3: exit 0"
check exact-start "$TMPD/x.out" "$TMPD/x.log" main

if ! command -v lttng-sessiond >/dev/null || ! command -v babeltrace2 >/dev/null; then
	skip_tests 8 "snapshots: LTTng not installed"
else
	require_lttng
	# With the preload library: signalled at the read's exit, it unwinds through kernel_work().
	# Up to three runs: a read that waited for the CPU more than it ran (the machine busy, a
	# snapshot of the previous read being written on the other CPU) is not what this test is
	# about; latsnap said so right (runqueue time, a sleep outlier), and it is said here.
	for try in 1 2 3; do
		# The workload appends to its log: a retry's would follow the busy try's pid.
		rm -rf "$TMPD/snaps" "$TMPD/b.log"
		WL_LOG=$TMPD/b.log run_latsnap "$TMPD/b.out" "$TMPD/b.err" record --json -t 10ms \
			-o "$TMPD/snaps" -- "$WL/kerncpu" 32 3
		[ "$RC" = 0 ] || break
		BUSY=$(jq -s '[.[] | select(.kind == "sleep" or (.syscall == "read" and
			.runqueue_ns > .on_cpu_ns))] | length' "$TMPD/b.out" 2>/dev/null)
		[ "${BUSY:-0}" = 0 ] && break
		diag "snapshots, try $try: the machine was busy ($BUSY outliers waited for the CPU); again"
	done
	is "$RC" 0 "snapshots: record -t 10ms -o DIR -- kerncpu 32 3: exit 0"
	check snapshots "$TMPD/b.out" "$TMPD/b.log" kernel_work
fi

done_testing
