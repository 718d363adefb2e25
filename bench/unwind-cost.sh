#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The preload library's unwind per signal, as it reports it (latsnap:user_stack unwind_ns), for a
# shallow and a deep stack of a program without frame pointers: NAPS outliers at each depth, under
# a real LTTng session. Prints frames, median, p90 and max in microseconds.
set -euo pipefail
cd "$(dirname "$0")/.."

LATSNAP=build/latsnap
WORKLOAD=build/workloads/unwind-nofp
NAPS=${NAPS:-200}
TMP=$(mktemp -d)
started=

cleanup() {
	lttng destroy latsnap-bench-$$ >/dev/null 2>&1 || true
	[ -n "$started" ] && kill "$started" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

if ! pgrep -x lttng-sessiond >/dev/null; then
	lttng-sessiond --daemonize --no-kernel
	started=$(pgrep -n -x lttng-sessiond)
fi

# DEPTH extra recursive frames on top of the workload's fixed chain.
run() {
	local depth=$1 dir=$TMP/trace-$1
	lttng create latsnap-bench-$$ --output="$dir" >/dev/null
	lttng enable-event -u 'latsnap:user_stack' >/dev/null
	lttng start >/dev/null
	"$LATSNAP" record --no-snapshot -t 2ms -- "$WORKLOAD" 5 "$NAPS" "$depth" >/dev/null 2>&1
	lttng stop >/dev/null
	lttng destroy >/dev/null
	babeltrace2 "$dir" | perl -ne 'print "$1 $2\n" if /depth = (\d+),.*unwind_ns = (\d+)/' |
		sort -k2 -n | awk -v d="$depth" '
		{ f[NR] = $1; v[NR] = $2 }
		END {
			if (NR == 0) { print "no events at depth " d; exit 1 }
			printf "%4d frames  %6d signals  median %7.1f us  p90 %7.1f us  max %7.1f us\n",
				f[1], NR, v[int((NR + 1) / 2)] / 1e3, v[int(NR * 0.9 + 0.5)] / 1e3, v[NR] / 1e3
		}'
}

echo "libunwind from the signal frame, $NAPS outliers per row (5 ms sleeps, -t 2ms)"
run 0
run 50
