#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The fuzz harnesses, built without libFuzzer, replay their seed corpora (fuzz/corpus/NAME/)
# and every input that once crashed or hung one (fuzz/regress/NAME/): each must come through
# with the harness's invariants holding, under the sanitizers in make check-asan.
. "$(dirname "$0")/lib.sh"

# cannot_run N REASON: N tests that cannot run here fail under CI (CI=true) and are skipped
# otherwise, as lib.sh does with a missing prerequisite.
cannot_run() {
	local n=$1 i
	shift
	if [ "${CI:-}" = true ]; then
		for ((i = 0; i < n; i++)); do
			fail "$* (cannot run under CI)"
		done
	else
		skip_tests "$n" "$*"
	fi
}

names=(summary flame config rules args show ksyms report demangle)
plan $((2 * ${#names[@]}))
for name in "${names[@]}"; do
	bin=$BUILD/fuzz-replay/fuzz_$name
	if [ ! -x "$bin" ]; then
		cannot_run 2 "fuzz_$name: $bin not built (run make check)"
		continue
	fi
	dirs=("$ROOT/fuzz/corpus/$name")
	out=$(timeout -k 5 120 "$bin" "${dirs[@]}" 2>&1 >/dev/null)
	rc=$?
	n=$(printf '%s\n' "$out" | sed -n 's/^replay: \([0-9]*\) inputs$/\1/p')
	ok "[ $rc -eq 0 ] && [ ${n:-0} -gt 0 ]" "fuzz_$name: ${n:-0} seed inputs replay cleanly (exit $rc)"
	if [ -d "$ROOT/fuzz/regress/$name" ]; then
		out=$(timeout -k 5 120 "$bin" "$ROOT/fuzz/regress/$name" 2>&1 >/dev/null)
		rc=$?
		n=$(printf '%s\n' "$out" | sed -n 's/^replay: \([0-9]*\) inputs$/\1/p')
		ok "[ $rc -eq 0 ] && [ ${n:-0} -gt 0 ]" \
			"fuzz_$name: ${n:-0} past crash inputs replay cleanly (exit $rc)"
	else
		# Nothing to replay is not a missing prerequisite: a skip, under CI too.
		skip_tests 1 "fuzz_$name: no past crash input (no fuzz/regress/$name)"
	fi
done
