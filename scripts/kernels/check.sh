#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/kernels/check.sh: `make check-kernels [KERNELS="5.10 6.1 6.12"]` (docs/check-kernels.md);
# an arm64 series (KERNELS=arm64-6.1) runs the same tests in an arm64 guest with build-arm64/.
# For each kernel series: fetches it (install.sh), boots it under QEMU with this machine's
# userspace (vm-run.sh) and runs there the integration tests of scripts/kernels/tests.list
# under prove, after a few facts about the kernel (guest-check.sh). Logs go to
# build/kernels/logs/SERIES.log (the tests' output), SERIES.times (each test's time) and
# SERIES.console.log (the guest's console).
# Prints a summary line per kernel; exits 1 if any kernel failed.
#
# Environment: KERNELS (series, default "5.10 6.1 6.12"); KERNEL_TESTS (test files, instead of
# tests.list's); VM_TIMEOUT (seconds per kernel, default 3600), LATSNAP_TIMEOUT (one latsnap run
# in a test, default 300 in the guest), and vm-run.sh's other VM_* settings.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 1
LOGDIR=${KERNELS_DIR:-$ROOT/build/kernels}/logs
mkdir -p "$LOGDIR"

KERNELS=${KERNELS:-5.10 6.1 6.12}
# An arm64 guest runs tests.list but the lines marked "# not on arm64: WHY".
if [ -n "${KERNEL_TESTS:-}" ]; then
	read -r -a TESTS <<<"$KERNEL_TESTS"
	ARM64_TESTS=("${TESTS[@]}")
else
	mapfile -t TESTS < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$HERE/tests.list")
	mapfile -t ARM64_TESTS < <(sed -e '/# not on arm64/d' -e 's/#.*//' -e 's/[[:space:]]*$//' \
		-e '/^$/d' "$HERE/tests.list")
fi
[ "${#TESTS[@]}" -gt 0 ] || { echo "latsnap: check-kernels: no tests to run" >&2; exit 1; }
for t in "${TESTS[@]}"; do
	[ -f "$t" ] || { echo "latsnap: check-kernels: no test $t (scripts/kernels/tests.list)" >&2; exit 1; }
done

# shellcheck disable=SC2086 # the series are words
"$HERE/install.sh" $KERNELS || exit 1

export VM_TIMEOUT=${VM_TIMEOUT:-3600}
export LATSNAP_TIMEOUT=${LATSNAP_TIMEOUT:-300}
SUMMARY=()
failed=0
for s in $KERNELS; do
	log=$LOGDIR/$s.log
	case $s in
	arm64-*) RUN_TESTS=("${ARM64_TESTS[@]}") ;;
	*) RUN_TESTS=("${TESTS[@]}") ;;
	esac
	echo "latsnap: check-kernels: $s: ${#RUN_TESTS[@]} test files, log $log" >&2
	t0=$(date +%s)
	"$HERE/vm-run.sh" "$s" -- scripts/kernels/guest-check.sh "${RUN_TESTS[@]}" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	t1=$(date +%s)
	release=$(cat "${KERNELS_DIR:-$ROOT/build/kernels}/$s/release" 2>/dev/null || echo "?")
	# prove's last line: "Result: PASS" or "Result: FAIL"; its Files=/Tests= line.
	counts=$(grep -E '^Files=[0-9]+, Tests=[0-9]+' "$log" | tail -n 1 | cut -d, -f1,2)
	case $rc in
	0) verdict=PASS ;;
	124) verdict="FAIL (timed out after $VM_TIMEOUT s)" ;;
	125) verdict="FAIL (the guest failed)" ;;
	*) verdict="FAIL (prove exit $rc)" ;;
	esac
	[ "$rc" = 0 ] || failed=1
	# Each test's time (prove --timer's start stamps, and the last one at the end): SERIES.times.
	awk '/^\[[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\]/ {
			split(substr($1, 2, 8), t, ":"); now = t[1] * 3600 + t[2] * 60 + t[3]
			if (name != "") { d = now - start; if (d < 0) d += 86400; printf "%6d s  %s\n", d, name }
			name = $2; start = now
		}' "$log" >"$LOGDIR/$s.times"
	if [ -s "$LOGDIR/$s.times" ]; then
		echo "latsnap: check-kernels: $s: slowest tests (all in $LOGDIR/$s.times):"
		sort -rn "$LOGDIR/$s.times" | head -n 5 | sed 's/^/  /'
	fi
	SUMMARY+=("$(printf 'latsnap: check-kernels: %-5s %-22s %s in %dm%02ds%s' "$s" "$release" "$verdict" \
		$(((t1 - t0) / 60)) $(((t1 - t0) % 60)) "${counts:+ ($counts)}")")
done
printf '%s\n' "${SUMMARY[@]}"
# The kernel x feature table, from 05-kernel.t's "# kernel-feature: NAME: VERDICT" lines.
table=$LOGDIR/features.md
{
	printf '| feature |'
	for s in $KERNELS; do printf ' %s |' "$(cat "${KERNELS_DIR:-$ROOT/build/kernels}/$s/release" 2>/dev/null || echo "$s")"; done
	printf '\n|---|'
	for s in $KERNELS; do printf -- '---|'; done
	printf '\n'
	for s in $KERNELS; do
		sed -n 's/^# kernel-feature: \([^:]*\): .*/\1/p' "$LOGDIR/$s.log" 2>/dev/null
	done | awk '!seen[$0]++' | while IFS= read -r f; do
		printf '| %s |' "$f"
		for s in $KERNELS; do
			v=$(grep -F "# kernel-feature: $f: " "$LOGDIR/$s.log" 2>/dev/null | tail -n 1)
			printf ' %s |' "${v#"# kernel-feature: $f: "}"
		done
		printf '\n'
	done
} >"$table"
if grep -q '^| [^-f]' "$table"; then
	echo "latsnap: check-kernels: kernel x feature ($table):"
	cat "$table"
fi
if [ "$failed" = 1 ]; then
	echo "latsnap: check-kernels: failed; logs in $LOGDIR" >&2
	exit 1
fi
