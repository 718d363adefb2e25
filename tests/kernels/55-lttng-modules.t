#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The LTTng kernel tracer (lttng-modules), where it exists: `latsnap record` adds LTTng's kernel
# channel (sched, syscalls, block) to its snapshot session, and a snapshot holds LTTng's own kernel
# events, true in time, beside latsnap's; the cause and the wait chain are the BPF side's, as on a
# kernel without lttng-modules (recorder/recorder.c, the man page's KERNEL CONTEXT AND WAIT CHAIN).
#
# What a user checks, on `pipewait 600` (its read blocks until pipewriter writes, 600 ms later):
#  - record -v says which kernel tracer it used (the LTTng kernel channel and the BPF side);
#  - the snapshot's trace has LTTng's kernel stream (trace/kernel), and `babeltrace2 DIR/<id>/trace`
#    shows the reader thread's syscall_entry_read and syscall_exit_read at the outlier's start and
#    end (within 5 ms: the two tracers' hooks on the same syscall), and a sched_switch of it out
#    between them;
#  - summary.json, `latsnap show` and `latsnap report` name the read, its cause (a pipe), its
#    waker and wait chain (pipewriter, in nanosleep).
#
# Where it runs: in make check-kernels' 6.1 guest, which has the modules the harness built
# (scripts/kernels/lttng-modules.sh: a module tree it bind-mounts on /lib/modules/RELEASE for this
# file only, VM_LTTNG_MODULES), and on any machine whose running kernel has lttng-modules installed
# or loaded. Under 6.1 without them (the harness's build failed) it is a missing prerequisite (a
# failure under CI); on the other kernels the harness builds none: skipped, "this kernel (RELEASE)
# has no lttng-modules".
set -u
. "$(dirname "$0")/../integration/lib.sh"

require_record pipewait
require lttng babeltrace2

RELEASE=$(uname -r)
MODDIR=/lib/modules/$RELEASE
MOUNTED=
# The guest's module tree goes back as it was, and no lttng module stays loaded, whatever happens:
# the next test file of the guest runs without lttng-modules.
restore_modules() {
	local m
	[ -n "$MOUNTED" ] || return 0
	# The session daemon latsnap started unloads them as it exits; what it left goes here (the
	# probes first: modprobe -r takes a module's unused dependencies with it).
	for _ in 1 2 3 4 5 6; do
		for m in $(awk '$1 ~ /^lttng_/ && $3 == 0 { print $1 }' /proc/modules 2>/dev/null); do
			modprobe -r "$m" 2>/dev/null
		done
		grep -q '^lttng_' /proc/modules || break
	done
	umount "$MODDIR" 2>/dev/null && MOUNTED=
}
trap 'restore_modules; _tap_cleanup' EXIT

has_lttng_modules() {
	[ -d /sys/module/lttng_tracer ] || grep -qs '/lttng-tracer\.ko' "$MODDIR/modules.dep"
}

if [ -n "${VM_LTTNG_MODULES:-}" ] && [ -n "${VM_RESULTS:-}" ] && [ -d "$VM_RESULTS" ] &&
	! has_lttng_modules; then
	mount --bind "$VM_LTTNG_MODULES" "$MODDIR" || bail_out "mount --bind $VM_LTTNG_MODULES $MODDIR"
	MOUNTED=1
fi
if ! has_lttng_modules; then
	if [ "${VM_SERIES:-}" = 6.1 ]; then
		skip_all "lttng-modules for $RELEASE: make check-kernels built none (build/kernels/logs/lttng-modules-6.1.log)"
	fi
	skip_kernel "has no lttng-modules (make check-kernels builds them for 6.1 only)"
fi
# latsnap starts its own session daemon, which loads the modules; one already running must have
# the kernel domain, or latsnap would use it without.
if pgrep -x lttng-sessiond >/dev/null && ! lttng list -k >/dev/null 2>&1; then
	skip_all "an lttng-sessiond without the kernel tracer runs (pid $(pgrep -x lttng-sessiond | paste -sd' '))"
fi
diag "kernel $RELEASE, lttng-modules: $(modinfo -F version lttng-tracer 2>/dev/null) ($(modinfo -n lttng-tracer 2>/dev/null))"

J() { jq -r "$2" <<<"${1:-{\}}" 2>/dev/null; }

# --- record, with the LTTng kernel channel --------------------------------------------------------
T0=$(date +%s%N)
record_snap r -v -t 200ms -o "$TMPD/snaps" -- "$WL/pipewait" 600
diag "record took $((($(date +%s%N) - T0) / 1000000)) ms"
is "$RC" 0 "record -v -t 200ms -o DIR -- pipewait 600: exit 0"
like "$(grep 'kernel tracer' "$TMPD/r.err")" 'kernel tracer: LTTng kernel channel .* and the BPF side' \
	"-v says it used the LTTng kernel channel (and the BPF side)" ||
	{ grep -v 'libbpf:' "$TMPD/r.err" >"$TMPD/r.err2"; diag_file "$TMPD/r.err2" "  stderr: "; }
ok '! grep -q "no LTTng kernel tracer" "$TMPD/r.err"' "-v does not say it had no kernel tracer"
READER=$(wl_log_get "$TMPD/r.log" reader)
WRITER=$(wl_log_get "$TMPD/r.log" writer)
ok '[ -n "$READER" ] && [ -n "$WRITER" ]' "pipewait ran (reader $READER, writer $WRITER)"

S=$(grep -l '"read"' "$TMPD"/snaps/*/summary.json 2>/dev/null | head -n 1)
ok '[ -n "$S" ]' "a snapshot's summary.json has the read" ||
	{ ls -lR "$TMPD/snaps" >"$TMPD/ls" 2>&1; diag_file "$TMPD/ls" "  "; }
SNAP=$(dirname "${S:-/nonexistent/x}")
O=$(jq -c ".outliers[] | select(.syscall == \"read\" and .tid == ${READER:-0})" "${S:-/dev/null}" 2>/dev/null | head -n 1)
ok '[ -n "$O" ]' "the read outlier is the reader's (tid $READER)"
between "$(J "$O" .duration_ns)" 590000000 2000000000 "its duration is the 600 ms wait (0.59-2 s)"
is "$(J "$O" .cause)" "Reading from a pipe" "its cause: reading from a pipe"
is "$(J "$O" .waker.comm)" pipewriter "its waker: pipewriter"
is "$(J "$O" '.wait_chain[0].comm')" pipewriter "its wait chain: pipewriter first" ||
	diag "wait_chain: $(J "$O" -c .wait_chain)"
like "$(J "$O" '.wait_chain[0].syscall')" '^(clock_)?nanosleep$' "... which was in nanosleep"
START=$(J "$O" .start_ns)
END=$(J "$O" .end_ns)

# --- the trace: LTTng's kernel events, true in time ---------------------------------------------
ok '[ -d "$SNAP/trace/kernel" ]' "the snapshot's trace has LTTng's kernel stream (trace/kernel)" ||
	{ ls -lR "$SNAP/trace" >"$TMPD/ls" 2>&1; diag_file "$TMPD/ls" "  " 30; }
T0=$(date +%s%N)
babeltrace2 "$SNAP/trace" >"$TMPD/bt" 2>"$TMPD/bt.err"
is "$?" 0 "babeltrace2 DIR/<id>/trace reads it" || diag_file "$TMPD/bt.err" "  babeltrace2: "
# The raw clock values: LTTng's kernel clock counts CLOCK_MONOTONIC nanoseconds, as BPF does.
babeltrace2 --clock-cycles "$SNAP/trace" >"$TMPD/btc" 2>/dev/null
diag "babeltrace2, twice: $((($(date +%s%N) - T0) / 1000000)) ms for $(wc -l <"$TMPD/bt") events"
# top N: the N most frequent lines of stdin, "LINE COUNT ..." on one line.
top() { sort | uniq -c | sort -rn | head -n "$1" | awk '{ printf "%s %s ", $2, $1 }'; }
diag "the trace's events: $(awk '{ for (i = 1; i <= NF; i++)
		if ($i ~ /^[a-z_]+(:[a-z_]+)?:$/) { print $i; break } }' "$TMPD/bt" | top 12)"
diag "... by process: $(sed -n 's/.*procname = "\([^"]*\)".*/\1/p' "$TMPD/bt" | top 8)"
# kev NAME: "CYCLES" of each of the reader's NAME events (LTTng's kernel ones: no provider).
kev() {
	awk -v name="$1:" -v tid="${READER:-0}" '$0 ~ "vtid = " tid "[,} ]" {
			for (i = 1; i <= NF; i++) if ($i == name) { c = $1; gsub(/[^0-9]/, "", c); print c; break }
		}' "$TMPD/btc"
}
# nearest CYCLES...: the one nearest to $2 of the values on stdin, and its distance.
nearest() {
	awk -v t="$1" 'BEGIN { best = -1 } { d = $1 - t; if (d < 0) d = -d; if (best < 0 || d < best) { best = d; v = $1 } }
		END { if (best >= 0) print v, best }'
}
read -r ENTRY DENTRY < <(kev syscall_entry_read | nearest "${START:-0}")
read -r EXIT DEXIT < <(kev syscall_exit_read | nearest "${END:-0}")
# latsnap's own syscalls are left out of the kernel channel (a filter on its vpid and the trace
# reader's procname); its threads' switches are not. latsnap is the parent of pipewait's fork
# (whose child, "latsnap" until its execve, is the workload's start, and recorded).
LSPID=$(sed -n "s/.* sched_process_fork: .*parent_pid = \([0-9]*\),.*child_pid = ${READER:-0}[,} ].*/\1/p" \
	"$TMPD/bt" | head -n 1)
ok '[ -n "$LSPID" ]' "the trace has latsnap's fork of pipewait (latsnap's pid ${LSPID:-?})"
OWN=" syscall_(entry|exit)_[a-z0-9_]+: .*vpid = ${LSPID:-0},"
is "$(grep -c -E "$OWN" "$TMPD/bt")" 0 "no syscall event of latsnap's own process in the kernel channel" ||
	{ grep -E "$OWN" "$TMPD/bt" | head -n 10 >"$TMPD/own"; diag_file "$TMPD/own" "  "; }
ok '[ "$(grep -c -E " sched_switch: .*vpid = ${LSPID:-0}," "$TMPD/bt")" -gt 0 ]' "... but its switches are"
ok '[ -n "${ENTRY:-}" ]' "the trace has syscall_entry_read of the reader (vtid $READER)"
between "${DENTRY:--1}" 0 5000000 "... at the outlier's start (${DENTRY:-?} ns from start_ns)"
ok '[ -n "${EXIT:-}" ]' "the trace has syscall_exit_read of the reader"
between "${DEXIT:--1}" 0 5000000 "... at the outlier's end (${DEXIT:-?} ns from end_ns)"
SW=$(awk -v tid="${READER:-0}" -v a="${ENTRY:-0}" -v b="${EXIT:-0}" '/ sched_switch: / && $0 ~ "prev_tid = " tid "," {
		c = $1; gsub(/[^0-9]/, "", c); if (c + 0 >= a + 0 && c + 0 <= b + 0) n++
	} END { print n + 0 }' "$TMPD/btc")
ok '[ "$SW" -ge 1 ]' "a sched_switch takes the reader off its CPU between the two ($SW)"
# What a user sees: babeltrace2's lines of LTTng's kernel events of the reader's thread, from its
# read's entry to its exit (the same events, in the same order, in both outputs).
paste -d'\t' "$TMPD/btc" "$TMPD/bt" | awk -F'\t' -v tid="${READER:-0}" -v a="${ENTRY:-0}" -v b="${EXIT:-0}" '
	{ c = $1; sub(/\].*/, "", c); gsub(/[^0-9]/, "", c) }
	c + 0 >= a + 0 && c + 0 <= b + 0 && $2 ~ / (syscall_(entry|exit)_read|sched_switch|sched_waking|sched_wakeup): / &&
		($2 ~ "vtid = " tid "[,} ]" || $2 ~ "[ _]tid = " tid "[,} ]") { print $2 }' | head -n 12 >"$TMPD/bt.reader"
diag_file "$TMPD/bt.reader" "  babeltrace2| "

# make check-kernels' kernel x feature table (check.sh gathers these lines).
if grep -q 'kernel tracer: LTTng kernel channel' "$TMPD/r.err" && [ -d "$SNAP/trace/kernel" ] &&
	[ -n "${ENTRY:-}" ] && [ "$(J "$O" '.wait_chain[0].comm')" = pipewriter ]; then
	diag "kernel-feature: LTTng kernel channel (lttng-modules $(modinfo -F version lttng-tracer 2>/dev/null)): yes"
else
	diag "kernel-feature: LTTng kernel channel (lttng-modules): no"
fi

# --- show and report read the snapshot ----------------------------------------------------------
run_latsnap "$TMPD/show" "$TMPD/show.err" show "$SNAP"
is "$RC" 0 "show DIR/<id>: exit 0" || diag_file "$TMPD/show.err" "  stderr: "
ok 'grep -q "read" "$TMPD/show" && grep -q "Reading from a pipe" "$TMPD/show"' \
	"show names the read and its cause" || diag_file "$TMPD/show" "  show: " 30
ok 'grep -q pipewriter "$TMPD/show"' "show names pipewriter (waker, wait chain)"
run_latsnap "$TMPD/report" "$TMPD/report.err" report --json "$TMPD/snaps"
is "$RC" 0 "report --json DIR: exit 0" || diag_file "$TMPD/report.err" "  stderr: "
ok 'grep -q "Reading from a pipe" "$TMPD/report"' "report names the cause" ||
	diag_file "$TMPD/report" "  report: " 30

# --- the guest's next test file runs without lttng-modules ---------------------------------------
if [ -n "$MOUNTED" ]; then
	restore_modules
	is "$(awk '$1 ~ /^lttng_/ { print $1 }' /proc/modules | paste -sd' ')" "" "no lttng module is left loaded"
	ok '[ -z "$MOUNTED" ] && ! has_lttng_modules' "the guest's module tree is the kernel's own again"
fi

done_testing
