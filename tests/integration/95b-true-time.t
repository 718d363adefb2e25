#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Issue 32, part 1: every event of a snapshot's trace at the time it happened, on LTTng's clock,
# so that babeltrace2 lines an application's own lttng-ust events up with latsnap's kernel
# context. A real lttng-sessiond, the real BPF side, babeltrace2 2.0.4 as the user runs it.
#  a) apptp (its own tracepoint between two 30 ms naps) under record -t 20ms: every
#     latsnap_kernel:* event's CTF timestamp (babeltrace2 --clock-cycles) is its ts_ns within
#     1 us; the naps' syscall events lie within the workload's own CLOCK_MONOTONIC times of them;
#     latsnap:outlier is at its end_ns, latsnap:user_stack at end_ns + unwind_ns. babeltrace2
#     reads trace/ with no option and says nothing on stderr; latsnap's own trace is CTF 1.8 on
#     LTTng's clock class (name, uuid, offset).
#  b) babeltrace2's output has the app's latsnap_test:between after the first nap's syscall and
#     before the second's, and its own clock reading lies between the two.
#  c) show, report, export --perfetto read the new snapshot (its timeline from the kernel
#     context, its unwound stack) and one written in the earlier layout (tests/fixtures/old-layout:
#     everything in LTTng's trace, at the time latsnap wrote it); the wait chain from the new
#     layout is 93-wait-chain.t's.
set -u
. "$(dirname "$0")/lib.sh"

require_record apptp
require_lttng
require perl

OUT=$TMPD/out
OLD=$ROOT/tests/fixtures/old-layout

for try in 1 2 3; do
	record_snap a -t 20ms --ust-events 'latsnap_test:*' -o "$OUT" -- "$WL/apptp" 30 2
	grep -q 'No session daemon is available' "$TMPD/a.err" || break
	rm -rf "$OUT"
	require_lttng
done
is "$RC" 0 "a) record -t 20ms -- apptp 30 2: exit 0"
ID=$(find "$OUT" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | LC_ALL=C sort | head -n 1)
TRACE=$OUT/${ID:-none}/trace
ok '[ -r "$TRACE/latsnap/metadata" ]' "a) latsnap's own events are a trace of their own in trace/latsnap/"
TID=$(awk '$1 == "pid" { print $2; exit }' "$TMPD/a.log")

babeltrace2 "$TRACE" >"$TMPD/bt.txt" 2>"$TMPD/bt.err"
is "$?" 0 "a) babeltrace2 trace/ (no option): exit 0"
ok '[ ! -s "$TMPD/bt.err" ]' "a) babeltrace2 trace/: nothing on stderr (the clock classes are compatible)"
[ -s "$TMPD/bt.err" ] && diag_file "$TMPD/bt.err" "  bt: "
babeltrace2 --clock-cycles "$TRACE" >"$TMPD/cycles.txt" 2>/dev/null

# "BAD N": latsnap_kernel:* events whose timestamp is off their ts_ns by more than 1 us, of N.
read -r bad n < <(perl -ne '
	next unless /^\[(\d+)\].* latsnap_kernel:\w+: .*\bts_ns = (\d+)/;
	$n++; $bad++ if abs($1 - $2) > 1000;
	END { printf "%d %d\n", $bad, $n }' "$TMPD/cycles.txt")
ok "[ ${n:-0} -gt 0 ]" "a) the snapshot holds latsnap_kernel:* events ($n)"
is "$bad" 0 "a) every latsnap_kernel:* event's CTF timestamp is its ts_ns within 1 us"

# The naps as the kernel saw them (start, end), as the workload timed them, and as the trace
# stamps them: "CYCLES START_NS TS_NS" per clock_nanosleep of the workload's thread.
perl -ne "print \"\$1 \$3 \$2\\n\" if /^\\[(\\d+)\\].* latsnap_kernel:syscall: .*\\bts_ns = (\\d+), tid = $TID,.* name = \"clock_nanosleep\", start_ns = (\\d+)/" \
	"$TMPD/cycles.txt" >"$TMPD/naps.trace"
awk '$1 == "nap" { print $3, $4 }' "$TMPD/a.log" >"$TMPD/naps.log"
is "$(wc -l <"$TMPD/naps.trace")" 2 "a) both naps are latsnap_kernel:syscall events"
inside=$(paste -d ' ' "$TMPD/naps.trace" "$TMPD/naps.log" | awk '
	# CYCLES START TS  LOG_START LOG_END
	$2 >= $4 && $3 <= $5 && $1 >= $4 && $1 <= $5 { n++ } END { print n + 0 }')
is "$inside" 2 "a) each nap's syscall event, and its timestamp, lies within the workload's own times of it"
[ "$inside" = 2 ] || { diag_file "$TMPD/naps.trace" "  trace: "; diag_file "$TMPD/naps.log" "  log: "; }

read -r bad n < <(perl -ne '
	if (/^\[(\d+)\].* latsnap:outlier: .*\bend_ns = (\d+)/) { $n++; $bad++ if $1 != $2 }
	if (/^\[(\d+)\].* latsnap:user_stack: .*\bunwind_ns = (\d+), .*\bend_ns = (\d+)/) {
		$n++; $bad++ if $1 != $2 + $3 }
	END { printf "%d %d\n", $bad, $n }' "$TMPD/cycles.txt")
ok "[ ${n:-0} -ge 4 ]" "a) the outliers and their unwound stacks are in the trace ($n events)"
is "$bad" 0 "a) latsnap:outlier at its end_ns, latsnap:user_stack at end_ns + unwind_ns"

babeltrace2 -o ctf-metadata "$TRACE/latsnap" >"$TMPD/own.meta" 2>/dev/null
UST_META=$(find "$TRACE/ust" -name metadata | head -n 1)
babeltrace2 -o ctf-metadata "$(dirname "${UST_META:-none}")" >"$TMPD/ust.meta" 2>/dev/null
like "$(tr -d ' \t\n' <"$TMPD/own.meta")" 'major=1;minor=8;' "a) latsnap's own trace is CTF 1.8"
own_clock=$(perl -0ne 'print "$1 $2" if /clock \{.*?name = "?(\w+)"?;.*?uuid = "([^"]+)"/s' "$TMPD/own.meta")
ust_clock=$(perl -0ne 'print "$1 $2" if /clock \{.*?name = "?(\w+)"?;.*?uuid = "([^"]+)"/s' "$TMPD/ust.meta")
is "$own_clock" "$ust_clock" "a) on LTTng's clock: same name and uuid ($ust_clock)"
own_off=$(perl -0ne 'if (/clock \{.*?\}/s) { my $c = $&; my ($s) = $c =~ /offset_s = (\d+)/; my ($o) = $c =~ /\boffset = (\d+)/; print(($s // 0) * 1000000000 + $o) }' "$TMPD/own.meta")
ust_off=$(perl -0ne 'if (/clock \{.*?\}/s) { my $c = $&; my ($s) = $c =~ /offset_s = (\d+)/; my ($o) = $c =~ /\boffset = (\d+)/; print(($s // 0) * 1000000000 + $o) }' "$TMPD/ust.meta")
is "$own_off" "$ust_off" "a) and the same offset from the origin"

# b) the application's own event between the two naps, in babeltrace2's own order.
order=$(perl -ne "
	print \"nap\\n\" if / latsnap_kernel:syscall: .*\\btid = $TID,.* name = \"clock_nanosleep\"/;
	print \"between\\n\" if / latsnap_test:between: /" "$TMPD/bt.txt" | paste -sd ' ')
is "$order" "nap between nap" "b) babeltrace2 shows the app's tracepoint between its two naps"
between_ns=$(perl -ne 'print "$1\n" if / latsnap_test:between: .*\bnow_ns = (\d+)/' "$TMPD/bt.txt" | head -n 1)
first_end=$(awk 'NR == 1 { print $3 }' "$TMPD/naps.trace")
second_start=$(awk 'NR == 2 { print $2 }' "$TMPD/naps.trace")
ok "[ ${between_ns:-0} -gt ${first_end:-1} ] && [ ${between_ns:-0} -lt ${second_start:-0} ]" \
	"b) its own clock reading lies between the first nap's end and the second's start"
diag "babeltrace2, the workload's thread:"
grep -E " latsnap_test:between: | latsnap_kernel:syscall: .*tid = $TID,.*clock_nanosleep" "$TMPD/bt.txt" |
	cut -c 1-160 | while IFS= read -r l; do diag "  $l"; done

# c) the readers, on the new layout and the old one.
run_latsnap "$TMPD/show.json" "$TMPD/show.err" show --json "$OUT/${ID:-none}"
is "$RC" 0 "c) show --json (new layout): exit 0"
is "$(jq '[.outliers[] | select(.user_stack.source == "unwind" and (.user_stack.frames | length) > 0)] | length' "$TMPD/show.json" 2>/dev/null)" 2 \
	"c) show (new layout): both naps have their unwound stack from the trace"
n=$(jq "[.outliers[0].timeline[]? | select(.name == \"latsnap_kernel:syscall\" and .tid == $TID)] | length" "$TMPD/show.json" 2>/dev/null)
ok "[ 0${n} -gt 0 ]" \
	"c) show (new layout): the outlier's timeline has the kernel context"
run_latsnap "$TMPD/report.txt" "$TMPD/report.err" report "$OUT"
is "$RC" 0 "c) report (new layout): exit 0"
like "$(cat "$TMPD/report.txt")" 'clock_nanosleep' "c) report (new layout) names the naps' syscall"
run_latsnap "$TMPD/export.out" "$TMPD/export.err" export --perfetto "$TMPD/new.json" "$OUT/${ID:-none}"
is "$RC" 0 "c) export --perfetto (new layout): exit 0"
n=$(jq "[.traceEvents[]? | select(.tid == $TID and .ph == \"X\")] | length" "$TMPD/new.json" 2>/dev/null)
ok "[ 0${n} -gt 0 ]" \
	"c) export (new layout): the workload's thread has its slices"

OLD_ID=$(find "$OLD" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | head -n 1)
ok '[ ! -e "$OLD/$OLD_ID/trace/latsnap" ]' "c) the fixture is of the earlier layout (no trace/latsnap/)"
run_latsnap "$TMPD/oshow.json" "$TMPD/oshow.err" show --json "$OLD/$OLD_ID"
is "$RC" 0 "c) show --json (earlier layout): exit 0"
is "$(jq '[.outliers[] | select(.user_stack.source == "unwind" and (.user_stack.frames | length) > 0)] | length' "$TMPD/oshow.json" 2>/dev/null)" \
	"$(jq '.outliers | length' "$OLD/$OLD_ID/summary.json")" \
	"c) show (earlier layout): every outlier has its unwound stack"
n=$(jq '[.outliers[0].timeline[]? | select(.name == "latsnap_kernel:syscall")] | length' "$TMPD/oshow.json" 2>/dev/null)
ok "[ 0${n} -gt 0 ]" \
	"c) show (earlier layout): the timeline has the kernel context (by its ts_ns)"
run_latsnap "$TMPD/oreport.txt" "$TMPD/oreport.err" report "$OLD"
is "$RC" 0 "c) report (earlier layout): exit 0"
run_latsnap "$TMPD/oexport.out" "$TMPD/oexport.err" export --perfetto "$TMPD/old.json" "$OLD/$OLD_ID"
is "$RC" 0 "c) export --perfetto (earlier layout): exit 0"
OLD_TID=$(jq '.outliers[0].tid' "$OLD/$OLD_ID/summary.json")
n=$(jq "[.traceEvents[]? | select(.tid == $OLD_TID and .ph == \"X\")] | length" "$TMPD/old.json" 2>/dev/null)
ok "[ 0${n} -gt 0 ]" \
	"c) export (earlier layout): the outlier's thread has its slices"

done_testing
