#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make bench` keeps working: bench/run.sh in its quick mode (a few thousand iterations, one
# round) runs to the end and its table has every row, each with a number or, for a peer (bpftrace,
# perf), "not run: why". No assertion on the figures themselves: they mean nothing in quick mode
# and timings are never a test.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require jq perl taskset runuser
require_latsnap
require_workloads loop sleeper unwind-nofp
for b in empty-hooks pingpong burst; do
	[ -x "$BUILD/bench/$b" ] || skip_all "build/bench/$b not built (run make check)"
done

OUT=$TMPD/bench.md
# Its own TMPDIR: another bench running on the machine leaves its scratch in /tmp meanwhile.
mkdir -p "$TMPD/tmp" && chmod 755 "$TMPD" "$TMPD/tmp" # PostgreSQL runs as postgres in it
t0=$(date +%s)
TMPDIR=$TMPD/tmp QUICK=1 BENCH_OUT=$OUT timeout -k 5 300 "$ROOT/bench/run.sh" >"$TMPD/stdout" 2>"$TMPD/stderr"
RC=$?
is "$RC" 0 "QUICK=1 bench/run.sh: exit 0" || diag_file "$TMPD/stderr" "  stderr: "
diag "quick bench took $(($(date +%s) - t0)) s"
ok '[ -s "$OUT" ]' "it wrote the table to BENCH_OUT"
ok 'cmp -s "$OUT" "$TMPD/stdout"' "it printed the table it wrote"
like "$(head -n 1 "$OUT")" '^# latsnap bench' "the table has its title"
like "$(grep '^- machine: ' "$OUT")" 'CPUs.*kernel' "the header names the machine and the kernel"
like "$(grep '^- latsnap ' "$OUT")" 'clang .*libbpf ' "the header names the versions"
like "$(grep '^- floor: ' "$OUT")" 'the same hooks as bpf/latsnap.bpf.c' \
	"the floor's empty programs hook what latsnap's program hooks"

# cells LABEL: the value column of each table row whose first column is LABEL, one per line.
cells() {
	awk -F ' [|] ' -v l="$1" '$1 == "| " l { v = $2; sub(/ [|]$/, "", v); print v }' "$OUT"
}
is_number() { [[ $1 =~ ^[-+]?[0-9] ]]; }

# own LABEL N: N rows (one per table the label is in), each with a number.
own() {
	local label=$1 n=$2 got bad
	got=$(cells "$label")
	bad=$(printf '%s\n' "$got" | while IFS= read -r v; do is_number "$v" || echo "$v"; done)
	is "$(printf '%s\n' "$got" | grep -c .)" "$n" "row '$label': $n of them" || diag_file "$OUT"
	is "$bad" "" "row '$label': a number in each"
}

# peer LABEL N: N rows, each with a number or "not run: why".
peer() {
	local label=$1 n=$2 got bad
	got=$(cells "$label")
	bad=$(printf '%s\n' "$got" | while IFS= read -r v; do
		is_number "$v" || [[ $v =~ ^not\ run:\ .+ ]] || echo "$v"
	done)
	is "$(printf '%s\n' "$got" | grep -c .)" "$n" "row '$label': $n of them"
	is "$bad" "" "row '$label': a number or 'not run: why' in each"
}

# 1 and 2: the same configurations in both tables.
own "no tracing" 3
own "empty BPF programs on latsnap's hooks (the floor)" 2
own "latsnap, the program tracked" 2
own "latsnap running, the program not tracked" 2
own "no tracing, liblatsnap.so preloaded" 2
own "latsnap, the program tracked, --no-preload" 2
peer "bpftrace: per-thread syscall timing (bench/syscall-time.bt)" 2
peer "perf trace --duration 50" 2
# 3: `make check` installs the bench's packages first, PostgreSQL among them.
own "latsnap record -t 200ms, snapshots on (--context full, the default)" 1
# Quick mode runs the floor, the default and -a; the other variants say they were left out.
peer "latsnap record -t 200ms, snapshots on, --context sched" 1
peer "latsnap record -t 200ms, snapshots on, --context none" 1
own "latsnap record -a -t 200ms, snapshots on (every thread tracked, no preload)" 1
peer "latsnap record -t 200ms --no-snapshot" 1
is "$(grep -cE '^- BPF ns per transaction ≤ 1.5× the floor.s: (not )?met \([0-9]+ against [0-9]+ ns' "$OUT")" 2 \
	"issue 18's BPF goal judged for snapshots on and for -a, with the figures"
# 4
own "outlier's end to its summary.json on disk, median (ms)" 1
own "outlier's end to its summary.json on disk, max (ms)" 1
own "one snapshot, as \`record -v\` times it, median (ms)" 1
own "snapshot on disk, median (KiB)" 1
own "latsnap's peak RSS (MiB)" 1
like "$(grep -F "| latsnap's CPU while recording" "$OUT")" '\| [0-9.]+ \(' "row 'latsnap's CPU': a number"
# 5: every outlier is in a summary or counted as skipped.
own "outliers latsnap saw" 1
own "outliers in a summary.json" 1
own "share of outliers in a summary" 1
is "$(cells "unaccounted (seen − in a summary − skipped)")" 0 "bursts: no outlier unaccounted for"
is "$(cells "lost in the kernel")" 0 "bursts: none lost in the kernel"
# 6
own "shallow stack" 1
own "deep stack (50 more frames)" 1
# 7
own "a sleeping process tracked" 1
own "a sleeping process tracked; idle threads of another, untracked" 1
own "-a: every thread tracked; idle threads (waiting since before: left out)" 1
own "idle threads tracked (waiting since before: followed, not reported)" 1
# 8
own "calls, no probes" 1
own "probes on, untracked" 1
own "tracked: each call a request" 1

# 11: each primitive measured on its hook.
like "$(grep -F '| bpf_ktime_get_ns() into the CPU' "$OUT")" '[|] sys_enter [|] [0-9]+ [|]' \
	"row 'bpf_ktime_get_ns()': ns per run on sys_enter"
like "$(grep -F "| prev's kernel stack" "$OUT")" '[|] sched_switch [|] [0-9]+ [|]' \
	"row 'prev's kernel stack': ns per run on sched_switch"
# 12: the run under a CPU limit works (its shares are the bench's to judge, not a test's).
own "nap outliers (clock_nanosleep of sleeper)" 1
own "with the user stack unwound by the preload library" 1
own "with their kernel stack" 1
own "in a summary.json" 1
is "$(ls -d /sys/fs/cgroup/cpu/latsnap-bench-* /sys/fs/cgroup/latsnap-bench-* 2>/dev/null)" "" \
	"it removed its cgroup"

# 13: the runs with every CPU saturated work: each config's row has its counts, and no spinner
# is left behind.
for c in normal high; do
	like "$(grep -E "^[|] $c [|]" "$OUT")" "^[|] $c [|] [0-9.]+ [|] [0-9]+ [|] [0-9]+ [(][0-9.]+%[)] [|] [0-9]+ [(][0-9.]+%[)] [|] [0-9]+ [(][0-9.]+%[)] [|]" \
		"13: row '$c': the run's time, its nap outliers and their three shares"
done
is "$(pgrep -c -x stress-ng)" 0 "13: no stress-ng left running"

is "$(ls -d "$TMPD"/tmp/latsnap-bench.* 2>/dev/null)" "" \
	"it removed its scratch directory"

done_testing
