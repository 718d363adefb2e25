#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The flood guard (issue 46) and each tenant's share at the source (issue 51).
# a) `flood 1000 8 60` under -t 5ms: one thread naps 8 ms a thousand times at one wait site, and
#    half way the main thread waits 60 ms on a pipe. At most the budget's snapshots (6), the
#    storm's repeats counted as held back (totals line, summaries' held_back), every nap either
#    reported or counted as dropped at the source, and the pipe read in a snapshot.
# b) a storm beside a victim, `record -t 50ms` with no targets (every process that loads the
#    preload library), as the package runs it: uid 65534's three `flood 60 110 0 400` (1,200
#    threads napping 110 ms) and root's `sleeper 100 40`, all preloaded. The victim's naps
#    reported (at least 36 of 40), the storm's outliers dropped at the source counted and named
#    by pid and by user (three processes over their user's share), and its snapshots few.
set -u
. "$(dirname "$0")/lib.sh"

require_record flood sleeper
require setpriv
[ -f "$BUILD/liblatsnap.so" ] || skip_all "$BUILD/liblatsnap.so not built (run make)"
no_ust_wait

# snapdirs DIR: the complete snapshots in DIR.
snapdirs() { ls -d "$1"/*/summary.json 2>/dev/null | wc -l; }

# --- a) a burst of identical outliers, and a different one in the middle -------------------
record_snap a -t 5ms -o "$TMPD/a" -- "$WL/flood" 1000 8 60
is "$RC" 0 "a) record -t 5ms -- flood 1000 8 60: exit 0"
PID=$(wl_log_get "$TMPD/a.log" pid)
NAPPER=$(wl_log_get "$TMPD/a.log" napper)
read -r ODD _ < <(awk '$1 == "odd" { print $2 }' "$TMPD/a.log")
ok '[ -n "$PID" ] && [ -n "$NAPPER" ] && [ -n "${ODD:-}" ]' "a) flood ran (pid $PID, napper $NAPPER, odd wait in ${ODD:-?})"
SNAPS=$(snapdirs "$TMPD/a")
between "$SNAPS" 1 6 "a) at most the budget's 6 snapshots for a thousand identical outliers ($SNAPS)"
TOTALS=$(grep 'outliers, .* snapshots' "$TMPD/a.err" | tail -n 1)
diag "a) totals: $TOTALS"
REPEATS=$(sed -n 's/.*held back [0-9]* (\([0-9]*\) repeats.*/\1/p' <<<"$TOTALS")
ok '[ "${REPEATS:-0}" -ge 100 ]' "a) the totals line counts the storm's repeats as held back (${REPEATS:-none})"
SKIPPED=$(sed -n 's/.* snapshots, \([0-9]*\) skipped.*/\1/p' <<<"$TOTALS")
ALL=$(sed -n 's/^latsnap: \([0-9]*\) outliers.*/\1/p' <<<"$TOTALS")
IN_SUMMARIES=$(cat "$TMPD"/a/*/summary.json 2>/dev/null | jq -s '[.[].outliers | length] | add // 0')
is "$((IN_SUMMARIES + ${SKIPPED:-0}))" "${ALL:-x}" \
	"a) every outlier is in a summary ($IN_SUMMARIES) or counted as skipped (${SKIPPED:-?}, the held back among them)"
ok '[ "${SKIPPED:-0}" -ge "${REPEATS:-1}" ]' "a) what was held back is in skipped (${SKIPPED:-?} >= ${REPEATS:-?})"
NAPS=$(jcount "$TMPD/a.out" "select(.tid == ${NAPPER:-0} and .syscall == \"clock_nanosleep\")")
DROPPED=$(sed -n "s/.*dropped at the source: pid ${PID:-0}, \([0-9]*\) outliers.*/\1/p" "$TMPD/a.err")
# The process's drops count its main thread's few waits too.
between "$((NAPS + ${DROPPED:-0}))" 950 1010 "a) each nap reported ($NAPS) or counted as dropped at the source (${DROPPED:-0})"
HELD=$(cat "$TMPD"/a/*/summary.json 2>/dev/null |
	jq -s "[.[].held_back[]? | select(.pid == ${PID:-0}) | .repeats] | add // 0")
ok '[ "${HELD:-0}" -gt 0 ]' "a) the summaries' held_back lists the storm's process with its repeats ($HELD)"
IN_SNAP=$(cat "$TMPD"/a/*/summary.json 2>/dev/null |
	jq -s "[.[].outliers[] | select(.tid == ${ODD:-0} and .syscall == \"read\")] | length")
is "$IN_SNAP" 1 "a) the pipe read in the middle of the storm is in a snapshot"
is "$(jcount "$TMPD/a.out" "select(.tid == ${ODD:-0} and .syscall == \"read\")")" 1 \
	"a) and reported on stdout"
[ -s "$TMPD/a/status.json" ] &&
	is "$(jq '.held_repeats > 0 and has("dropped_at_source")' "$TMPD/a/status.json")" true \
		"a) status.json counts what the guard held back"

# --- b) one user's storm beside another's program ---------------------------------------------
NOBODY=65534
chmod 711 "$TMPD"
: >"$TMPD/storm.log" && chown $NOBODY:$NOBODY "$TMPD/storm.log"
OUT=$TMPD/b.out ERR=$TMPD/b.err
timeout -k 5 120 "$LATSNAP" record --json -t 50ms -o "$TMPD/b" >"$OUT" 2>"$ERR" &
BG=$!
track_bg $BG
for ((i = 0; i < 300; i++)); do
	grep -qs 'tracking every process that loads' "$ERR" && break
	sleep 0.05
done
ok 'grep -qs "tracking every process that loads" "$ERR"' "b) record (no targets) is ready" ||
	diag_file "$ERR" "  stderr: "
STORMS=
for k in 1 2 3; do
	WL_LOG=$TMPD/storm.log LD_PRELOAD=$BUILD/liblatsnap.so \
		setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$WL/flood" 60 110 0 400 &
	STORMS="$STORMS $!"
	track_bg $!
done
STORM=${STORMS# }
STORM=${STORM%% *}
sleep 0.5
WL_LOG=$TMPD/victim.log LD_PRELOAD=$BUILD/liblatsnap.so "$WL/sleeper" 100 40
wait $STORMS
kill -INT $BG
wait $BG
RC=$?
is "$RC" 0 "b) record ends on SIGINT: exit 0"
VICTIM=$(wl_log_get "$TMPD/victim.log" pid)
NAPS=$(jcount "$OUT" "select(.pid == ${VICTIM:-0} and (.syscall | test(\"nanosleep\")))")
between "$NAPS" 36 40 "b) the victim's naps reported beside the storm: $NAPS of 40"
TOTALS=$(grep 'outliers, .* snapshots' "$ERR" | tail -n 1)
diag "b) totals: $TOTALS"
ok "grep -q 'dropped at the source: pid $STORM, [1-9]' '$ERR'" \
	"b) the storm's drops are counted and named by pid" || diag_file "$ERR" "  stderr: "
ok "grep -q 'dropped at the source: user $NOBODY, [1-9]' '$ERR'" \
	"b) and by user"
PIDS=$(tr ' ' ',' <<<"${STORMS# }")
STORM_SNAPS=$(cat "$TMPD"/b/*/summary.json 2>/dev/null |
	jq -s "[.[] | select(any(.outliers[]; .pid as \$p | [$PIDS] | index(\$p)))] | length")
between "$STORM_SNAPS" 0 6 "b) the storm's snapshots: $STORM_SNAPS (at most twice a user's budget)"
BYTES=$(du -sb "$TMPD/b" | cut -f1)
diag "b) $(snapdirs "$TMPD/b") snapshots, $BYTES bytes in all"
VICTIM_SNAPS=$(cat "$TMPD"/b/*/summary.json 2>/dev/null |
	jq -s "[.[] | select(any(.outliers[]; .pid == ${VICTIM:-0}))] | length")
ok '[ "$VICTIM_SNAPS" -ge 1 ]' "b) the victim has a snapshot of its own ($VICTIM_SNAPS)"
DROPS=$(cat "$TMPD"/b/*/summary.json 2>/dev/null |
	jq -s "[.[].dropped_at_source[]? | select(.pid == $STORM)] | length")
ok '[ "$DROPS" -ge 1 ]' "b) a summary names the storm's process in dropped_at_source"


done_testing
