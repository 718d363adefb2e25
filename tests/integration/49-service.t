#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `latsnap record` as a service (issue 22):
#  a) sd_notify: READY=1 comes once tracking is live (after "tracking", before the first outlier
#     of a sleeper), STOPPING=1 at the end; a reload sends RELOADING=1 with MONOTONIC_USEC, then
#     READY=1 again.
#  b) SIGHUP reload: threshold 200ms -> 50ms over 120 ms naps: the naps that ended before the
#     reload are no outliers, later ones are; the BPF programs and links are the same ones (ids
#     from latsnap's fds); nothing skipped or lost; a bad config on reload is logged and the run
#     goes on with the threshold it had.
#  c) --max-age 2s over a nap of 700 ms every 700 ms: old snapshots go, the first and the worst
#     of each cause stay; bad values are usage errors.
#  d) latsnap status: pid, threshold, snapshot count while it runs (text and --json); "not
#     running" (exit 3) after, or when the pid in the file is gone; no file: exit 1.
#  e) SIGHUP reloads the targets: comm napperA -> napperB and a pid added (napperC): after the
#     reload napperB's and napperC's naps are outliers, napperA's no longer; before it, only
#     napperA's were. The same BPF programs and links; the reloaded line says the change, no
#     "needs a restart". A cgroup in a run started without --cgroup needs a restart.
#  f) the limits bound the directory, earlier runs included: a run leaves snapshots of naps of
#     120 ms; a second run on the same directory with --max-snapshots 3 (and --max-size their
#     bytes) and one nap of 400 ms adopts them and leaves at most 3, the first run's first one
#     and the 400 ms one among them; an incomplete one of an earlier run goes first. A symlink
#     named like an id (to a directory outside), a file that is no snapshot and an id-named
#     directory holding a foreign file stay untouched, and nothing outside goes; an old
#     snapshot with a corrupt summary.json is said once and record still exits 0.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require jq timeout python3 pgrep
require_latsnap
require lttng lttng-sessiond babeltrace2
require_workloads sleeper
[ -r "$BUILD/liblatsnap.so" ] || skip_all "$BUILD/liblatsnap.so not built (run make)"
no_ust_wait

plan 65

mono_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }

# listen SOCK LOG ERRFILE OUTFILE: a service manager's notification socket, in the background.
# Each datagram is one LOG line: "MONOTONIC_NS TRACKING_SEEN OUTLIERS_SO_FAR MESSAGE" (newlines
# of the message as "|"), with whether ERRFILE already says "tracking" and how many outlier
# lines OUTFILE holds as it arrives.
listen() {
	python3 - "$@" <<'EOF' &
import os, socket, sys, time
path, log, err, out = sys.argv[1:5]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
with open(log, "a", buffering=1) as f:
    f.write("listening\n")
    while True:
        msg = s.recv(4096).decode(errors="replace")
        now = time.monotonic_ns()
        try:
            tracking = int("tracking" in open(err).read())
        except OSError:
            tracking = 0
        try:
            outliers = sum(1 for l in open(out) if l.strip())
        except OSError:
            outliers = 0
        f.write("%d %d %d %s\n" % (now, tracking, outliers, msg.replace("\n", "|")))
EOF
	LISTENER=$!
	track_bg "$LISTENER"
	for _ in $(seq 50); do
		grep -q listening "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# ids PID: the BPF prog and link ids among PID's open files, sorted, on one line.
ids() {
	grep -h -E '^(prog_id|link_id):' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u | tr -s ' \t\n' ' '
}

# wait_for FILE PATTERN SECONDS: until FILE has a line matching PATTERN.
wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q -e "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

complete_dirs() {
	local d
	for d in $(find "$1" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | LC_ALL=C sort); do
		[ -f "$1/$d/summary.json" ] && echo "$d"
	done
}

# ---- a, b, d: one run, threshold 200ms, reloaded to 50ms, then a bad config ----
require_lttng
CONF=$TMPD/latsnap.conf
OUT=$TMPD/out-b
SOCK=$TMPD/notify.sock
NLOG=$TMPD/notify.log
echo 'threshold = 200ms' >"$CONF"
listen "$SOCK" "$NLOG" "$TMPD/b.err" "$TMPD/b.out" ||
	bail_out "the notification listener did not start"
NOTIFY_SOCKET=$SOCK WL_LOG=$TMPD/b.log timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record -v \
	-c "$CONF" -o "$OUT" --json --no-flood-guard -- "$WL/sleeper" 120 30 100 >"$TMPD/b.out" 2>"$TMPD/b.err" &
RUNNER=$!
track_bg "$RUNNER"
wait_for "$NLOG" 'READY=1' 30
ok $? "a: READY=1 arrives"
REC=$(pgrep -P "$RUNNER" -x latsnap | head -n 1)
[ -n "$REC" ] || bail_out "latsnap record is not running: $(tail -n 3 "$TMPD/b.err")"
READY=$(grep -m 1 'READY=1' "$NLOG")
is "$(echo "$READY" | cut -d' ' -f2)" 1 "a: READY=1 after latsnap said it is tracking"
is "$(echo "$READY" | cut -d' ' -f3)" 0 "a: READY=1 before any outlier was printed"
like "$READY" 'STATUS=tracking .*sleeper, threshold 200ms' "a: STATUS= says what and the threshold"

# d: status while it runs.
wait_for "$OUT/status.json" '"pid"' 15
run_latsnap "$TMPD/st.out" "$TMPD/st.err" status -o "$OUT"
is "$RC" 0 "d: status exits 0 while record runs"
like "$(cat "$TMPD/st.out")" "pid $REC: running" "d: status names record's pid, running"
like "$(cat "$TMPD/st.out")" "threshold 200.000 ms" "d: status gives the threshold"
like "$(cat "$TMPD/st.out")" "snapshots [0-9]+ written" "d: status gives the snapshot count"

sleep 1.5
IDS_BEFORE=$(ids "$REC")
T_HUP=$(mono_ns)
echo 'threshold = 50ms' >"$CONF"
kill -HUP "$REC"
wait_for "$TMPD/b.err" 'reloaded' 10
ok $? "b: the reload is logged"
like "$(grep 'reloaded' "$TMPD/b.err")" \
	"^latsnap: record: reloaded $CONF: threshold 200ms -> 50ms" "b: one line says what changed"
IDS_AFTER=$(ids "$REC")
ok '[ -n "$IDS_BEFORE" ] && [ "$IDS_BEFORE" = "$IDS_AFTER" ]' \
	"b: the same BPF programs and links before and after ($IDS_BEFORE)"
sleep 1.5
# status.json follows each snapshot within a turn or two of the loop (slower under ASan, where
# it ran two behind), and snapshots go on being written meanwhile: its count lies between a few
# less than record had said just before and what it said just after.
written_before=$(grep -c '^latsnap: snapshot ' "$TMPD/b.err")
run_latsnap "$TMPD/stj.out" "$TMPD/stj.err" status -o "$OUT" --json
written_now=$(grep -c '^latsnap: snapshot ' "$TMPD/b.err")
is "$RC" 0 "d: status --json exits 0 while record runs"
is "$(jq -r '[.pid, .threshold_ns, .running, (.snapshots | type)] | join(" ")' \
	"$TMPD/stj.out" 2>&1)" "$REC 50000000 true number" \
	"d: --json is JSON with pid, the new threshold, running, snapshots"
between "$(jq -r '.snapshots' "$TMPD/stj.out")" $((written_before - 3)) "$written_now" \
	"d: its snapshot count is record's ($written_before..$written_now)"

T_BAD=$(mono_ns)
echo 'threshold = garbage' >"$CONF"
kill -HUP "$REC"
wait_for "$TMPD/b.err" 'reload of .* failed' 10
ok $? "b: a bad config on reload is logged"
like "$(grep -m 1 'garbage' "$TMPD/b.err")" "$CONF:1: bad threshold 'garbage'" \
	"b: with the file and line at fault"
wait "$RUNNER"
RC=$?
is "$RC" 0 "b: record ran on after the bad reload and exited 0"

# b: which naps are outliers.
ndjson_ok "$TMPD/b.out"
ok $? "b: stdout is NDJSON"
naps_before=$(awk -v t="$T_HUP" '$1 == "nap" && $4 < t' "$TMPD/b.log" | wc -l)
naps_after_bad=$(awk -v t="$T_BAD" '$1 == "nap" && $3 > t' "$TMPD/b.log" | wc -l)
early=$(jq -s --argjson t "$T_HUP" '[.[] | select(.end_ns < $t)] | length' "$TMPD/b.out")
# The naps, not the 100 ms gaps between them.
late=$(jq -s --argjson t "$T_HUP" \
	'[.[] | select(.end_ns > $t and .duration_ns >= 110000000)] | length' "$TMPD/b.out")
late_bad=$(jq -s --argjson t "$T_BAD" \
	'[.[] | select(.start_ns > $t and .duration_ns >= 110000000)] | length' "$TMPD/b.out")
ok '[ "$naps_before" -ge 3 ]' "b: naps ended before the reload ($naps_before)"
is "$early" 0 "b: none of them (120 ms under 200 ms) is an outlier"
ok '[ "$late" -ge 5 ]' "b: 120 ms naps after the reload are outliers ($late)"
ok '[ "$naps_after_bad" -ge 2 ] && [ "$late_bad" -ge 2 ]' \
	"b: after the bad reload the threshold is still 50 ms ($late_bad outliers of $naps_after_bad naps)"
TOT=$(sed -n 's/^latsnap: \([0-9]*\) outliers, [0-9]* snapshots, \([0-9]*\) skipped, \([0-9]*\) lost.*/\1 \2 \3/p' \
	"$TMPD/b.err")
is "$(echo "$TOT" | cut -d' ' -f2-)" "0 0" "b: totals: 0 skipped, 0 lost"
in_summaries=$(for d in $(complete_dirs "$OUT"); do
	jq '.outliers | length' "$OUT/$d/summary.json"
done | awk '{ n += $1 } END { print n + 0 }')
is "$in_summaries" "$(echo "$TOT" | cut -d' ' -f1)" "b: every outlier is in a snapshot ($in_summaries)"

# a: the rest of the notifications.
RELOAD=$(grep -m 1 'RELOADING=1' "$NLOG")
like "$RELOAD" 'RELOADING=1[|]MONOTONIC_USEC=[0-9]+' \
	"a: a reload sends RELOADING=1 with MONOTONIC_USEC"
ok '[ "$(grep -c READY=1 "$NLOG")" -ge 3 ]' "a: and READY=1 after each reload"
like "$(tail -n 1 "$NLOG")" 'STOPPING=1' "a: STOPPING=1 is the last message"

# d: after the run.
run_latsnap "$TMPD/st2.out" "$TMPD/st2.err" status -o "$OUT"
is "$RC" 3 "d: status exits 3 once record has ended"
like "$(cat "$TMPD/st2.out")" "pid $REC: not running" "d: and says not running"
# Above the largest pid_max: no process has it.
mkdir -p "$TMPD/stale"
jq '.running = true | .pid = 4194304' "$OUT/status.json" >"$TMPD/stale/status.json"
run_latsnap "$TMPD/st3.out" "$TMPD/st3.err" status -o "$TMPD/stale"
is "$RC" 3 "d: a status file whose pid is gone: not running, exit 3"
mkdir -p "$TMPD/empty"
run_latsnap "$TMPD/st4.out" "$TMPD/st4.err" status -o "$TMPD/empty"
is "$RC" 1 "d: no status file: exit 1"
like "$(cat "$TMPD/st4.err")" "^latsnap: status: .*status.json: no status file" \
	"d: with a clear message"

# The service's own runs repeat one wait site on purpose: each nap is to be snapshotted, so the
# flood guard (46-flood.t) is off (--no-flood-guard) where a test counts snapshots.
# ---- c: --max-age ----
OUTC=$TMPD/out-c
WL_LOG=$TMPD/c.log timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record -v -t 50ms --max-age 2s --no-flood-guard \
	-o "$OUTC" --json -- "$WL/sleeper" 700 9 >"$TMPD/c.out" 2>"$TMPD/c.err"
is "$?" 0 "c: record --max-age 2s ran"
written=$(grep -c '^latsnap: snapshot ' "$TMPD/c.err")
kept=$(complete_dirs "$OUTC" | wc -l)
left=$(find "$OUTC" -mindepth 1 -maxdepth 1 -type d | wc -l)
ok '[ "$written" -ge 7 ] && [ "$kept" -lt "$written" ] && [ "$kept" = "$left" ]' \
	"c: old snapshots removed, whole ($kept of $written left)"
first=$(sed -n 's|^latsnap: snapshot .*/\([^/]*\): .*|\1|p' "$TMPD/c.err" | head -n 1)
ok '[ -n "$first" ] && [ -f "$OUTC/$first/summary.json" ]' "c: the first snapshot ($first) stays"
missing=$(jq -s -r --slurpfile kept <(for d in $(complete_dirs "$OUTC"); do
		jq -c '.outliers[]' "$OUTC/$d/summary.json"; done | jq -s .) \
	'group_by(.cause)[] | (max_by(.duration_ns)) as $w
	 | select([$kept[0][] | select(.tid == $w.tid and .start_ns == $w.start_ns)] | length == 0)
	 | "\($w.cause) \($w.duration_ns)"' "$TMPD/c.out")
ok '[ -s "$TMPD/c.out" ] && [ -z "$missing" ]' "c: the worst outlier of each cause stays${missing:+ (missing: $missing)}"
like "$(grep -c 'older than --max-age' "$TMPD/c.err")" '^[1-9]' "c: removals are said (-v)"

bad=0
for v in 0 abc -1s 5x 2m; do
	run_latsnap "$TMPD/bad.out" "$TMPD/bad.err" record --no-snapshot --max-age "$v" -- true
	[ "$RC" = 2 ] && grep -q "bad --max-age '$v'" "$TMPD/bad.err" || { bad=1; diag "--max-age $v: exit $RC: $(cat "$TMPD/bad.err")"; }
done
is "$bad" 0 "c: bad --max-age values (0 abc -1s 5x 2m) exit 2, naming the option"
echo 'max-age = soon' >"$TMPD/bad.conf"
run_latsnap "$TMPD/bad.out" "$TMPD/bad.err" record --no-snapshot -c "$TMPD/bad.conf" -- true
is "$RC" 2 "c: a bad max-age in the config file exits 2"

# ---- e: the targets reloaded ----
for n in napperA napperB napperC; do
	cp "$WL/sleeper" "$TMPD/$n"
	WL_LOG=$TMPD/e-$n.log "$TMPD/$n" 120 120 100 >/dev/null 2>&1 &
	track_bg $!
done
PID_C=$!
CONFE=$TMPD/e.conf
printf 'threshold = 50ms\ncomm = napperA\n' >"$CONFE"
timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record -v -c "$CONFE" --no-snapshot --json \
	>"$TMPD/e.out" 2>"$TMPD/e.err" &
RUNNER=$!
track_bg "$RUNNER"
wait_for "$TMPD/e.err" 'tracking' 30 ||
	bail_out "e: latsnap record did not start: $(tail -n 3 "$TMPD/e.err")"
REC=$(pgrep -P "$RUNNER" -x latsnap | head -n 1)
sleep 2
IDS_BEFORE=$(ids "$REC")
T_HUP=$(mono_ns)
printf 'threshold = 50ms\ncomm = napperB\npid = %s\n' "$PID_C" >"$CONFE"
kill -HUP "$REC"
wait_for "$TMPD/e.err" 'reloaded' 10
ok $? "e: the reload is logged"
# Applied before the line is printed: a wait that starts from now is judged by the new targets.
T_NEW=$(mono_ns)
WANT="targets: no pid -> pid $PID_C; comm -napperA \\+napperB"
like "$(grep 'reloaded' "$TMPD/e.err")" "^latsnap: record: reloaded $CONFE: $WANT\$" \
	"e: the reloaded line names the targets' change"
is "$(grep -c 'needs a restart' "$TMPD/e.err")" 0 "e: pid and comm need no restart"
IDS_AFTER=$(ids "$REC")
ok '[ -n "$IDS_BEFORE" ] && [ "$IDS_BEFORE" = "$IDS_AFTER" ]' \
	"e: the same BPF programs and links before and after ($IDS_BEFORE)"
sleep 2.5
# The root of the cgroup2 hierarchy: every process, napperA's too, were it applied.
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$CG2" ]; then
	printf 'threshold = 50ms\ncomm = napperB\npid = %s\ncgroup = %s\n' "$PID_C" "$CG2" >"$CONFE"
	kill -HUP "$REC"
	wait_for "$TMPD/e.err" 'needs a restart' 10
	like "$(grep 'needs a restart' "$TMPD/e.err")" \
		"^latsnap: record: $CONFE: cgroup \\(none at the start\\) changed: needs a rest" \
		"e: a cgroup added to a run started without one needs a restart"
	wait_for "$TMPD/e.err" 'reloaded .*no change' 10
	ok $? "e: and changes nothing"
	sleep 1
else
	skip_tests 2 "no cgroup2 hierarchy mounted"
fi
kill -TERM "$REC"
wait "$RUNNER"
is "$?" 0 "e: record exits 0 on SIGTERM"
# by NAME BEFORE|AFTER: the naps (not the 100 ms gaps) of NAME that ended before the SIGHUP, or
# started after the reload was applied, that are outliers.
by() {
	jq -s --arg c "$1" --arg w "$2" --argjson h "$T_HUP" --argjson n "$T_NEW" \
		'[.[] | select(.comm == $c and .duration_ns >= 110000000 and
		  (if $w == "before" then .end_ns < $h else .start_ns > $n end))] | length' \
		"$TMPD/e.out"
}
A=$(by napperA before) B=$(by napperB before) C=$(by napperC before)
ok '[ "$A" -ge 3 ] && [ "$B" = 0 ] && [ "$C" = 0 ]' \
	"e: before the reload only napperA's naps are outliers (A $A, B $B, C $C)"
is "$(by napperA after)" 0 "e: after it, napperA's are not"
ok '[ "$(by napperB after)" -ge 3 ]' "e: napperB's are ($(by napperB after))"
pids_c=$(jq -r -s '[.[] | select(.comm == "napperC") | .pid] | unique | map(tostring) |
	join(" ")' "$TMPD/e.out")
ok '[ "$(by napperC after)" -ge 3 ] && [ "$pids_c" = "$PID_C" ]' \
	"e: and the pid added, napperC's ($(by napperC after), pid $pids_c)"
# ---- f: retention over the directory, earlier runs' snapshots included ----
OUTE=$TMPD/out-e
record_snap e1 -v -t 100ms --post 20ms --no-flood-guard -o "$OUTE" -- "$WL/sleeper" 120 4 300
is "$RC" 0 "f: a first run on $OUTE exited 0"
run1=$(complete_dirs "$OUTE")
n1=$(echo "$run1" | grep -c .)
first1=$(echo "$run1" | head -n 1)
# Fewer than 3 would leave the second run room enough not to remove any.
ok '[ "$n1" -ge 3 ]' "f: it wrote snapshots enough to go over 3 ($n1)"

# What is not plainly a snapshot of latsnap's, planted among them; and one it cannot read.
OUTSIDE=$TMPD/outside-e
# Followed, the link would lead to a snapshot-like directory with an unreadable summary.
mkdir -p "$OUTSIDE"
echo precious >"$OUTSIDE/keep.txt"
echo precious >"$OUTSIDE/summary.json"
ln -s "$OUTSIDE" "$OUTE/20000101T000000.000Z-0001"
echo 'notes of mine' >"$OUTE/notes.txt"
mkdir "$OUTE/20000101T000000.000Z-0002"
echo mine >"$OUTE/20000101T000000.000Z-0002/data"
touch -d '2 hours ago' "$OUTE/20000101T000000.000Z-0002"
CORRUPT=20000101T000000.000Z-0003
mkdir "$OUTE/$CORRUPT"
printf '{ "version": 1, "outliers": [ {' >"$OUTE/$CORRUPT/summary.json"
# An incomplete one of an earlier run (no summary.json), two hours old: counted in bytes.
INCOMPLETE=20000101T000000.000Z-0004
mkdir -p "$OUTE/$INCOMPLETE/trace"
head -c 4096 /dev/zero >"$OUTE/$INCOMPLETE/trace/metadata"
touch -d '2 hours ago' "$OUTE/$INCOMPLETE"
# The first run's bytes: with the corrupt and incomplete ones, they are over the size limit.
size1=$(for d in $run1; do find "$OUTE/$d" -type f -printf '%s\n'; done |
	awk '{ n += $1 } END { print n + 0 }')
before_outside=$(cd "$OUTSIDE" && find . | LC_ALL=C sort | xargs -d '\n' md5sum 2>/dev/null |
	md5sum)

record_snap e2 -v -t 100ms --post 20ms --no-flood-guard --max-snapshots 3 --max-size "$size1" -o "$OUTE" -- \
	"$WL/sleeper" 400 1
is "$RC" 0 "f: a second run with --max-snapshots 3 and a corrupt summary among them exited 0"
like "$(grep 'adopted into retention' "$TMPD/e2.err")" \
	"record: $((n1 + 1)) snapshots of earlier runs in $OUTE, [0-9.]+ [KMG]?B, adopted" \
	"f: it adopted the first run's $n1 and the corrupt one (-v)"
is "$(grep -c "$CORRUPT/summary.json" "$TMPD/e2.err")" 1 "f: the corrupt summary is said once"
left=$(complete_dirs "$OUTE")
nleft=$(echo "$left" | grep -c .)
ok '[ "$nleft" -ge 2 ] && [ "$nleft" -le 3 ]' "f: at most 3 snapshots remain ($nleft)"
ok '[ -n "$first1" ] && echo "$left" | grep -qx "$first1"' \
	"f: the first run's first snapshot ($first1), the first of its cause, remains"
new=$(sed -n 's|^latsnap: snapshot .*/\([^/]*\): .*|\1|p' "$TMPD/e2.err" | tail -n 1)
worst=$(jq '[.outliers[].duration_ns] | max' "$OUTE/$new/summary.json" 2>/dev/null)
ok '[ -n "$new" ] && echo "$left" | grep -qx "$new" && [ "${worst:-0}" -ge 400000000 ]' \
	"f: the 400 ms one ($new, ${worst:-no} ns), the worst of its cause, remains"
like "$(grep -c 'removing snapshot .* to make room' "$TMPD/e2.err")" '^[1-9]' \
	"f: earlier runs' snapshots were removed to make room"
ok '[ ! -e "$OUTE/$CORRUPT" ]' "f: the corrupt one, holding no cause, went first"
ok '[ ! -e "$OUTE/$INCOMPLETE" ] &&
	grep -q "1 incomplete snapshot of earlier runs" "$TMPD/e2.err"' \
	"f: the incomplete one of an earlier run, counted in --max-size, went too"
ok '[ -L "$OUTE/20000101T000000.000Z-0001" ] &&
	[ "$(readlink "$OUTE/20000101T000000.000Z-0001")" = "$OUTSIDE" ]' \
	"f: the symlink named like an id is untouched"
is "$(cd "$OUTSIDE" && find . | LC_ALL=C sort | xargs -d '\n' md5sum 2>/dev/null | md5sum)" \
	"$before_outside" "f: nothing outside the directory was removed or changed"
is "$(cat "$OUTE/notes.txt")" 'notes of mine' "f: a file that is no snapshot stays"
is "$(cat "$OUTE/20000101T000000.000Z-0002/data" 2>&1)" mine \
	"f: an id-named directory without summary holding a foreign file stays"

done_testing
