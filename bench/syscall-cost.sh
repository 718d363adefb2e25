#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The added cost per syscall: a getppid loop untraced, while latsnap tracks another process
# (the loop is untracked but every hook runs), and tracked by latsnap; each with and without the
# preload library in the loop, whose cost without outliers must be nil. Medians of RUNS runs.
set -euo pipefail
cd "$(dirname "$0")/.."

LATSNAP=build/latsnap
LOOP=build/workloads/loop
N=${N:-5000000}
RUNS=${RUNS:-5}

per_call() {
	# loop -v says "... X ns/call" on stderr
	"$@" 2>&1 >/dev/null | sed -n 's/.* \([0-9.]*\) ns\/call.*/\1/p' | tail -n 1
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

measure() {
	local i
	for ((i = 0; i < RUNS; i++)); do
		per_call "$@"
	done | median
}

base=$(measure "$LOOP" "$N" -v)
preloaded=$(measure env LD_PRELOAD="$PWD/build/liblatsnap.so" "$LOOP" "$N" -v)

sleep 600 &
idle_pid=$!
"$LATSNAP" record --no-snapshot -p "$idle_pid" 2>/dev/null &
latsnap_pid=$!
sleep 2
untracked=$(measure "$LOOP" "$N" -v)
kill -INT "$latsnap_pid"
wait "$latsnap_pid" || true
kill "$idle_pid"
wait "$idle_pid" 2>/dev/null || true

tracked=$(measure "$LATSNAP" record --no-snapshot --no-preload -- "$LOOP" "$N" -v)
tracked_pre=$(measure "$LATSNAP" record --no-snapshot -- "$LOOP" "$N" -v)

awk -v b="$base" -v p="$preloaded" -v u="$untracked" -v t="$tracked" -v tp="$tracked_pre" \
	-v n="$N" -v r="$RUNS" 'BEGIN {
	printf "getppid, %d calls, median of %d runs\n", n, r
	printf "%-44s %8.1f ns/call\n", "untraced", b
	printf "%-44s %8.1f ns/call  (%+.1f)\n", "untraced, liblatsnap.so preloaded", p, p - b
	printf "%-44s %8.1f ns/call  (%+.1f)\n", "latsnap on, thread untracked", u, u - b
	printf "%-44s %8.1f ns/call  (%+.1f)\n", "latsnap on, thread tracked", t, t - b
	printf "%-44s %8.1f ns/call  (%+.1f)\n", "latsnap on, tracked, liblatsnap.so preloaded", tp, tp - b
}'
