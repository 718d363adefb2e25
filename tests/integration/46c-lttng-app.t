#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# An application that links lttng-ust (apptp: its own tracepoint, then naps) under record with
# snapshots on, so that its lttng-ust listener threads talk to the session daemon latsnap uses.
# What the listener reads is LTTng's command, not the application's work: it must not make the
# process look like a server, whose main thread's sleeps would then be filed idle as
# "housekeeping" (95c e) saw it in half its runs: no outlier, no snapshot). Four runs, each: every
# 100 ms nap is an outlier, and no wait of apptp is called housekeeping.
set -u
. "$(dirname "$0")/lib.sh"

require_record apptp
require_lttng

for run in 1 2 3 4; do
	WL_LOG=$TMPD/$run.log timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --json -v -t 50ms \
		-o "$TMPD/snaps$run" -- "$WL/apptp" 100 8 0 >"$TMPD/$run.out" 2>"$TMPD/$run.err"
	is "$?" 0 "$run: record -t 50ms -o DIR -- apptp 100 8: exit 0"
	NAPS='select(.comm == "apptp" and .syscall == "clock_nanosleep" and .duration_ns >= 90000000)'
	is "$(jcount "$TMPD/$run.out" "$NAPS")" 8 "$run: its 8 naps of 100 ms are outliers" ||
		grep 'idle, not latency: apptp' "$TMPD/$run.err" | head -5 | while IFS= read -r l; do diag "  $l"; done
	is "$(grep -c "idle, not latency: apptp.*housekeeping" "$TMPD/$run.err")" 0 \
		"$run: none of apptp's waits is filed as a server's housekeeping"
done

done_testing
