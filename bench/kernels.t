#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/kernels.t: make bench's cost sections (1 syscalls, 2 switches, 3 PostgreSQL with the BPF
# run time per program) in a guest of make check-kernels, so that a kernel's fallback paths
# (fexit/schedule before sched_exit_tp, the 3-argument sched_switch, no bpf_task_pt_regs) show
# their cost. Not in scripts/kernels/tests.list (minutes under TCG): run it as
#   make check-kernels KERNELS=6.1 KERNEL_TESTS=bench/kernels.t
# The guest is emulated (CPU work 5-10x slower, process starts ~100x): compare ratios within the
# run only, never its times with the host's. The tables are printed as TAP comments; the test
# fails when the bench does not run or measures nothing. --context none runs beside the default
# full context: what the context stream costs there, apart from the tracking; --exact-start too
# (issue 48: the clock at every syscall entry and exit, as before its cheap entry).
set -u
cd "$(dirname "$0")/.."
echo "1..2"
out=$(mktemp -d /tmp/latsnap-kbench.XXXXXX)
# Short runs: every configuration once per round, PostgreSQL at scale 1.
if env ROUNDS="${ROUNDS:-3}" N="${N:-100000}" PP_N="${PP_N:-5000}" PG_PAIRS="${PG_PAIRS:-2}" \
	PG_SECONDS="${PG_SECONDS:-15}" PG_SCALE="${PG_SCALE:-1}" PG_WARMUP="${PG_WARMUP:-2}" \
	PG_CONN_SECONDS="${PG_CONN_SECONDS:-5}" SECTIONS="1 2 3" \
	CONFIGS="${CONFIGS:-floor tracked untracked}" \
	PG_CONFIGS="${PG_CONFIGS:-untraced floor traced exact ctxnone}" BENCH_OUT="$out/bench.md" \
	bench/run.sh >"$out/log" 2>&1; then
	echo "ok 1 - bench/run.sh ran"
else
	echo "not ok 1 - bench/run.sh failed"
	sed 's/^/# /' "$out/log" | tail -n 40
fi
sed 's/^/# /' "$out/bench.md" 2>/dev/null
if grep -q '^| sys_enter | [0-9]' "$out/bench.md" 2>/dev/null; then
	echo "ok 2 - BPF run time per program measured"
else
	echo "not ok 2 - no BPF run time per program in the tables"
fi
rm -rf "$out"
