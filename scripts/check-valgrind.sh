#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make check-valgrind: latsnap record (--no-snapshot, then with snapshots), report and show over
# the snapshot it wrote, each under valgrind memcheck; any error or definite leak fails.
# Needs root (real BPF, a real LTTng session), like the integration tests.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${LATSNAP_BUILD:-$ROOT/build}
VG=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
	--show-leak-kinds=definite --suppressions="$ROOT/scripts/valgrind.supp")
TMPD=$(mktemp -d /tmp/latsnap-valgrind.XXXXXX)
trap 'rm -rf "$TMPD"' EXIT
failed=0

# run NAME ARGS...: one latsnap command under valgrind, its stderr kept if it fails.
run() {
	local name=$1 rc
	shift
	timeout -k 10 600 "${VG[@]}" "$BUILD/latsnap" "$@" >"$TMPD/$name.out" 2>"$TMPD/$name.err"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "ok - valgrind: latsnap $name"
	else
		echo "not ok - valgrind: latsnap $name (exit $rc)"
		grep -v 'unhandled eBPF command' "$TMPD/$name.err" | sed 's/^/#   /'
		failed=$((failed + 1))
	fi
}

run record-no-snapshot record --no-snapshot -t 20ms -- "$BUILD/workloads/sleeper" 60
run record record -o "$TMPD/out" -t 20ms -- "$BUILD/workloads/sleeper" 60
snap=$(find "$TMPD/out" -name summary.json -printf "%h\n" 2>/dev/null | head -n 1)
if [ -z "$snap" ] || [ ! -f "$snap/summary.json" ]; then
	echo "not ok - valgrind: record wrote no snapshot under $TMPD/out"
	sed "s/^/#   /" "$TMPD/record.err"
	failed=$((failed + 1))
else
	run report report "$TMPD/out"
	run show show "$snap"
	run show-json show --json "$snap"
fi
echo "$((5 - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
