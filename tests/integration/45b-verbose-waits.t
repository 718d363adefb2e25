#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# record -v says which report of a wait each of its lines is (issue 47). A wait past --hang is
# reported twice, while it lasts (state still-blocked) and when it ends (state ended), and the
# idle policy judges it both times: the two -v lines must not read alike. workpool 1 1 900 50
# (tests/workloads/workpool.c): its one worker waits ~900 ms on a condition variable for the only
# job, idle (its first wait). Under -t 50ms --hang 300ms: the worker's first -v idle line says
# "so far (still-blocked: still waiting)", the next one "(ended)", the first's duration the
# shorter; every idle line of the run names its report.
set -u
. "$(dirname "$0")/lib.sh"

require_record workpool
no_ust_wait

WL_LOG=$TMPD/wl.log record_json "$TMPD/out" "$TMPD/err" -- -v -t 50ms --hang 300ms -- \
	"$WL/workpool" 1 1 900 50
is "$RC" 0 "record -v -t 50ms --hang 300ms -- workpool 1 1 900 50: exit 0"
W=$(awk '$1 == "tid" && $2 == "wp_worker" { print $3; exit }' "$TMPD/wl.log" 2>/dev/null)
ok '[ -n "$W" ]' "workpool logged its worker's tid ($W)"
grep -F "record: idle, not latency: wp_worker[$W] " "$TMPD/err" >"$TMPD/worker" 2>/dev/null
diag_file "$TMPD/worker" "  -v: "
FIRST=$(sed -n 1p "$TMPD/worker")
SECOND=$(sed -n 2p "$TMPD/worker")
like "$FIRST" ' [0-9.]+ ms so far \(still-blocked: still waiting\): ' \
	"the worker's first idle line is its first wait's report while it lasts: still-blocked"
like "$SECOND" ' [0-9.]+ ms \(ended\): ' "the next is the same wait's report at its end: ended"
ms() { sed -nE 's/.* ([0-9.]+) ms .*/\1/p' <<<"$1"; }
ok "awk -v a='$(ms "$FIRST")' -v b='$(ms "$SECOND")' 'BEGIN { exit !(a + 0 > 0 && a < b) }'" \
	"the first says the time so far ($(ms "$FIRST") ms), the second the whole wait ($(ms "$SECOND") ms)"
N=$(grep -c 'record: idle, not latency: ' "$TMPD/err")
is "$(grep -cE 'record: idle, not latency: .* ms (so far \((still-blocked|unfinished): [^)]*\)|\(ended\)): ' \
	"$TMPD/err")" "$N" "every -v idle line ($N) names which report of its wait it is"

done_testing
