#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The fuzz harnesses, built without libFuzzer, replay their seed corpora (fuzz/corpus/NAME/)
# and every input that once crashed or hung one (fuzz/regress/NAME/): each must come through
# with the harness's invariants holding, under the sanitizers in make check-asan.
. "$(dirname "$0")/lib.sh"

names=(summary flame config rules args show ksyms report)
plan $((2 * ${#names[@]}))
for name in "${names[@]}"; do
	bin=$BUILD/fuzz-replay/fuzz_$name
	if [ ! -x "$bin" ]; then
		ok 1 "fuzz_$name: $bin not built (run make check)"
		ok 1 "fuzz_$name: past crash inputs"
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
		ok "$rc" "fuzz_$name: ${n:-0} past crash inputs replay cleanly (exit $rc)"
	else
		ok 0 "fuzz_$name: no past crash input"
	fi
done
