#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/load-loop.sh TEST [RUNS=20] [NICE=-15]: issue 33's loop. Runs `CI=true prove -v TEST`
# RUNS times while `stress-ng --cpu 0` spins on every CPU at nice NICE, one line per run
# ("run N PASS|FAIL SECONDS", the run's output in $LOOP_LOGS/NAME-N.log), then "passed P of N".
# Exits 1 if any run failed. Needs root (the tests do) and stress-ng (scripts/install-bench-deps.sh).
set -u
cd "$(dirname "$0")/.."

[ $# -ge 1 ] || { echo "usage: scripts/load-loop.sh TEST [RUNS] [NICE]" >&2; exit 2; }
TEST=$1
RUNS=${2:-20}
NICE=${3:--15}
LOOP_LOGS=${LOOP_LOGS:-${TMPDIR:-/tmp}/latsnap-loop}
command -v stress-ng >/dev/null || { echo "load-loop: stress-ng not installed" >&2; exit 1; }
mkdir -p "$LOOP_LOGS"

nice -n "$NICE" stress-ng --cpu 0 --quiet &
HOG=$!
trap 'kill "$HOG" 2>/dev/null; wait "$HOG" 2>/dev/null' EXIT
sleep 2

passed=0
for ((i = 1; i <= RUNS; i++)); do
	start=$(date +%s)
	log=$LOOP_LOGS/$(basename "$TEST" .t)-$i.log
	if CI=true prove -v "$TEST" >"$log" 2>&1; then
		result=PASS
		passed=$((passed + 1))
	else
		result=FAIL
	fi
	echo "run $i $result $(($(date +%s) - start)) s"
done
echo "passed $passed of $RUNS"
[ "$passed" = "$RUNS" ]
