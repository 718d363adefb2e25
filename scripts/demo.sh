#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make demo: run latsnap record on the bundled demo program, leave snapshots, and show what they
# found and where they are.
set -eu
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "latsnap: demo: needs root (BPF)" >&2
	exit 1
fi
mkdir -p latsnap-out
out=latsnap-out/demo-$(date +%Y%m%d-%H%M%S)
echo "== latsnap record -t 20ms -o $out -- build/latsnap-demo" >&2
build/latsnap record -t 20ms -o "$out" -- build/latsnap-demo >/dev/null
echo >&2
echo "== snapshots in $out:" >&2
for summary in "$out"/*/summary.json; do
	[ -f "$summary" ] || continue
	dir=$(dirname "$summary")
	echo "$dir" >&2
	jq -r '.outliers[] | "  \(.comm) [\(.tid)] \(.syscall // "off-CPU"): \(.duration_ns / 1e6 | floor) ms, \(.cause); user stack (\(.user_stack.source)): \([.user_stack.frames[]?.symbol // "?"] | .[0:6] | join(" < "))"' \
		"$summary" >&2
done
echo >&2
echo "Read one: cat $out/<id>/summary.txt; the trace: babeltrace2 $out/<id>/trace" >&2
