#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Issue 47: verdicts by what the thread did and what ended its wait, on programs of the labelled
# set's design half (tests/labelled/README.md) under `latsnap record -t 50ms` with snapshots.
# Each logs its own waits; asserted per wait, by its thread and times:
#  a) Python 3.11 threads: a new thread's threading.Lock.acquire while another thread holds it,
#     asleep (~260 ms): a futex outlier of that thread, latency (it was filed idle as "the first
#     wait of a new thread");
#  b) Node 20: the event loop in child_process.execSync of a child that sleeps 300 ms: an
#     epoll_wait outlier of the loop thread, latency (it was never reported: an idle-list wait,
#     quieted); its later 300 ms setTimeout with nothing to do is no outlier;
#  c) Python asyncio: `await asyncio.sleep(0.3)` in a handler is no outlier of the loop thread and
#     is listed idle (an epoll_wait run to its timer: the loop was free; it was reported as
#     latency), while time.sleep(0.2) in the loop is an outlier.
set -u
. "$(dirname "$0")/lib.sh"

require_record
require node lttng-sessiond
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "needs Debian's python3"
require_lttng
export LATSNAP_BUILD=$BUILD
LAB=$ROOT/tests/labelled

run_prog() {
	"$LAB/run.sh" "$1" "$TMPD/$1" >"$TMPD/$1.run" 2>&1
	is "$?" 0 "$1: latsnap record -- $1 exits 0" || diag_file "$TMPD/$1.run" "  run: "
}

# outliers PROG TID T0 T1: the outliers of thread TID overlapping [T0, T1], one line each:
# "SYSCALL MS".
outliers() {
	jq -r --argjson t "$2" --argjson a "$3" --argjson b "$4" \
		'select(.tid == $t and .start_ns < $b and .end_ns > $a) |
		"\(.syscall // .kind) \(.duration_ns / 1000000 | floor)"' "$TMPD/$1/out" 2>/dev/null |
		sort -u
}

# gt PROG LABEL WHAT: the waits logged with LABEL and WHAT, "TID START END" each.
gt() { awk -v l="$2" -v w="$3" '$1 == l && $5 == w { print $2, $3, $4 }' "$TMPD/$1/gt.log"; }

run_prog pylock
run_prog nodeexec
run_prog pyasync

# a) the lock waits (the holder sleeps 300 ms, the taker comes 40 ms after it took the lock).
n=0
while read -r tid t0 t1; do
	n=$((n + 1))
	ms=$(((t1 - t0) / 1000000))
	between "$ms" 65 1000 "a) pylock: lock wait $n lasted over the threshold ($ms ms)"
	got=$(outliers pylock "$tid" "$t0" "$t1")
	like "$got" "^futex [0-9]+" \
		"a) pylock: lock wait $n ($ms ms) of a new thread, its holder asleep: a futex outlier" ||
		diag_file "$TMPD/pylock/score.txt" "  "
	read -r _ oms <<<"$got"
	between "${oms:-0}" $((ms * 8 / 10)) $((ms + 20)) "a) pylock: lock wait $n: its duration (${oms:-none} ms)"
done < <(gt pylock latency lock)
is "$n" 2 "a) pylock: its 2 lock waits logged"

# b) execSync: the loop's waits for its child, then its timers.
n=0
while read -r tid t0 t1; do
	n=$((n + 1))
	got=$(outliers nodeexec "$tid" "$t0" "$t1")
	like "$got" "^epoll_p?wait [0-9]+" \
		"b) nodeexec: execSync $n: the event loop's epoll_wait is an outlier ($got)" ||
		diag_file "$TMPD/nodeexec/score.txt" "  "
	read -r _ oms <<<"$got"
	between "${oms:-0}" 250 600 "b) nodeexec: execSync $n: its duration (${oms:-none} ms)"
done < <(gt nodeexec latency child)
is "$n" 2 "b) nodeexec: its 2 execSync waits logged"
while read -r tid t0 t1; do
	is "$(outliers nodeexec "$tid" "$t0" "$t1")" "" "b) nodeexec: a setTimeout with nothing to do: no outlier"
done < <(gt nodeexec idle timer)

# c) asyncio: awaiting a timer is idle, time.sleep in the loop is latency.
n=0
while read -r tid t0 t1; do
	n=$((n + 1))
	is "$(outliers pyasync "$tid" "$t0" "$t1")" "" \
		"c) pyasync: await asyncio.sleep(0.3) $n: no outlier of the loop thread"
done < <(gt pyasync idle await_sleep)
is "$n" 2 "c) pyasync: its 2 awaits logged"
# The loop waits for its timer where it waited for the request (its epoll_wait): out of the
# request's unit there, an idle-list wait outside work, never reported; listed idle, if it ever
# is, as an event loop free until its timer.
LOOP=$(gt pyasync idle await_sleep | awk 'NR == 1 { print $1 }')
LISTED=$(grep -E "record: idle, not latency: python3\[${LOOP:-x}\] epoll_wait (2[5-9][0-9]|3[0-9][0-9])\." \
	"$TMPD/pyasync/err" | head -n 1)
ok "[ -z \"\$LISTED\" ] || [[ \"\$LISTED\" == *'event loop'* ]]" \
	"c) pyasync: the loop's 300 ms epoll_wait, if listed idle (record -v), is free until its timer (${LISTED:-not reported})"
n=0
while read -r tid t0 t1; do
	n=$((n + 1))
	like "$(outliers pyasync "$tid" "$t0" "$t1")" "[0-9]" "c) pyasync: time.sleep(0.2) $n in the loop: an outlier"
done < <(gt pyasync latency sleep)
is "$n" 4 "c) pyasync: its 4 sleeps logged"

done_testing
