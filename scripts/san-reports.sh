#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# san-reports.sh DIR: the verdict of make check-asan over the sanitizer reports in DIR.
# A report fails the run, except a crash inside libbabeltrace2 (its innermost frame there) in
# latsnap-trace-reader, the process that trace/ctf.c starts to read a trace:
# tests/integration/82-corrupt-trace.t feeds it damaged traces on purpose, and that process
# exists so that such a crash of the third-party reader costs `show` only its timeline. Those are listed, not counted.
set -u
dir=$1
failed=0
contained=0
for f in "$dir"/*; do
	[ -e "$f" ] || continue
	if grep -m1 ' #0 ' "$f" | grep -Eq 'libbabeltrace2\.so|/babeltrace2/plugins/' &&
		grep -q ' in ctf_reader_main .*trace/ctf-reader\.c' "$f"; then
		contained=$((contained + 1))
		continue
	fi
	echo "check-asan: sanitizer report $f:" >&2
	cat "$f" >&2
	failed=$((failed + 1))
done
if [ "$contained" -gt 0 ]; then
	echo "check-asan: $contained crash(es) of libbabeltrace2 on damaged traces, contained in latsnap-trace-reader (not latsnap's code)"
fi
if [ "$failed" -gt 0 ]; then
	echo "check-asan: $failed sanitizer report(s)" >&2
	exit 1
fi
echo "check-asan: no sanitizer report on latsnap's code"
