#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: what latsnap costs and what it catches, measured in one run, printed as Markdown
# tables of medians and ratios and written to build/bench.md (BENCH_OUT), with the machine and
# the versions in the header.
#   1. syscall cost: a getppid loop, ns per syscall
#   2. context switches: a pipe ping-pong between two processes on one CPU
#   3. PostgreSQL + pgbench, preloaded, under `latsnap record -t 200ms` with snapshots (each
#      --context level), with -a (every thread), with --no-snapshot, and the floor (empty
#      programs on latsnap's hooks); the BPF run time per
#      transaction per program (bpf_stats); issue 18's goals; and the connection time (pgbench
#      -C: each connection a fork of the preloaded postmaster)
#   4. the recorder: outlier end to summary.json on disk, snapshot size, latsnap's CPU and memory
#   5. capture under bursts: 32 threads slow at once, repeated
#   6. the preload library's unwind per signal (its user_stack.unwind_ns)
#   7. the stall scan of record --hang: per scan, with 10,000 idle threads more, tracked or not
#   8. a request probe pair (record --request uprobe:PATH:SYMBOL: its entry and return) per call
#   9. the idle policy: `record -a -t 50ms` on this machine, left idle but for two idle worker
#      pools (one started before latsnap, one after): outliers reported as latency, waits judged
#      idle, and the same with --include-idle (no policy) for comparison
#  10. the labelled set (tests/labelled/README.md): MariaDB, a JVM, Python, Go, Node and a C pool
#      under `latsnap record -t 50ms`, each with waits of known kind, then left idle LAB_IDLE_S
#      seconds (60): precision and recall of "latency" per program and overall, and the idle
#      threads among the outliers `latsnap report` counts; one program at a time (not in QUICK
#      mode by default: tests/integration/85-labelled.t runs the set in make check)
#  11. the primitives of latsnap's BPF programs (bench/prims.bpf.c), each alone on sys_enter
#      (a getppid loop) or sched_switch (a ping-pong): a clock read, a per-CPU slot, jiffies, a
#      task-storage lookup, a context record, a kernel and a user stack walk, ns per run
#  12. evidence under a CPU limit (issue 33): LIMIT_NAPS naps of the preloaded sleeper beside a
#      busy loop in a cgroup allowed 5 ms of CPU per 500 ms, snapshots on: the share of its nap
#      outliers with their unwound user stack, their kernel stack, and in a summary
#  13. evidence with every CPU saturated (issue 33): SAT_NAPS naps of the preloaded sleeper while
#      stress-ng spins on every CPU at the sleeper's priority, at nice -15, with one SCHED_FIFO
#      spinner more, and as SCHED_FIFO on every CPU (not in QUICK mode); the same shares as 12
#  14. the flood (issue 46): record -a -t 100ms with snapshots for MACHINE_SECONDS on this
#      machine as it is, alone and beside a second latsnap -a: snapshots, bytes, outliers, and
#      those of LTTng's daemons and latsnap's own processes (goal 0; not in QUICK mode)
# Configurations are alternated (A B C ... A B C ...) so that the machine's drift lands on all of
# them alike, each run right after an untraced one to which it is compared, and medians are
# reported. A peer that cannot run is a row "not run: why".
# QUICK=1: short runs and one round of everything (make check, about 75 s), no timing claims.
# Knobs (environment): ROUNDS, N (getppid calls), PP_N (round trips), IDLE_N and STALL_SECONDS
# (of 7), PG_PAIRS, PG_SECONDS, PG_WARMUP (seconds of pgbench before each measured run),
# PG_SCALE, REC_N (outliers for 4.), BURST_ROUNDS, NAPS (outliers per depth for 6.), BENCH_OUT,
# LAB_IDLE_S and LAB_PROGRAMS (of 10), SAT_NAPS and SAT_CONFIGS (of 13: normal high fifo1 rt);
# SECTIONS (which to run, default 1 to 14, without 10 and 14 under QUICK; 1 and 2 run together), CONFIGS (the
# configurations of 1 and 2, default all) and PG_CONFIGS (of 3: untraced floor traced exact ctxsched
# ctxnone all nosnap), to measure a change quickly.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	ROUNDS=${ROUNDS:-1} N=${N:-200000} PP_N=${PP_N:-20000}
	# make check's budget: the PostgreSQL runs (7 configurations) are most of the quick mode.
	PG_PAIRS=${PG_PAIRS:-1} PG_SECONDS=${PG_SECONDS:-1} PG_SCALE=${PG_SCALE:-1} PG_WARMUP=${PG_WARMUP:-0}
	PG_CONN_SECONDS=${PG_CONN_SECONDS:-1}
	REC_N=${REC_N:-3} BURST_ROUNDS=${BURST_ROUNDS:-3} NAPS=${NAPS:-20}
	IDLE_N=${IDLE_N:-500} STALL_SECONDS=${STALL_SECONDS:-1} CALLS_N=${CALLS_N:-20000} CALLS_ROUNDS=${CALLS_ROUNDS:-1}
	MACHINE_SECONDS=${MACHINE_SECONDS:-2}
	# make check's budget: section 3's variants of the traced run are left out (each is a
	# PostgreSQL start and a pgbench run); its table says so in their rows.
	PG_SKIP=${PG_SKIP:-exact ctxsched ctxnone nosnap}
else
	ROUNDS=${ROUNDS:-7} N=${N:-1000000} PP_N=${PP_N:-100000}
	PG_PAIRS=${PG_PAIRS:-5} PG_SECONDS=${PG_SECONDS:-15} PG_SCALE=${PG_SCALE:-5} PG_WARMUP=${PG_WARMUP:-1}
	PG_CONN_SECONDS=${PG_CONN_SECONDS:-5}
	REC_N=${REC_N:-10} BURST_ROUNDS=${BURST_ROUNDS:-20} NAPS=${NAPS:-200}
	IDLE_N=${IDLE_N:-10000} STALL_SECONDS=${STALL_SECONDS:-5} CALLS_N=${CALLS_N:-200000} CALLS_ROUNDS=${CALLS_ROUNDS:-7}
	MACHINE_SECONDS=${MACHINE_SECONDS:-60}
fi
# perf trace costs tens of microseconds a syscall: fewer calls keep its rounds as short as others'.
PERF_DIV=${PERF_DIV:-50}
BENCH_OUT=${BENCH_OUT:-build/bench.md}
if [ "$QUICK" = 1 ]; then
	SECTIONS=${SECTIONS:-1 2 3 4 5 6 7 8 9 11 12 13}
else
	SECTIONS=${SECTIONS:-1 2 3 4 5 6 7 8 9 10 11 12 13 14}
fi
LAB_IDLE_S=${LAB_IDLE_S:-60}
LAB_PROGRAMS=${LAB_PROGRAMS:-cpool python node go java mariadb pylock nodeexec pyasync ruby cxxpool rustpool phpflock housekeep pyproc rbcond perlpipe}
# Section 3's configurations, each run paired with the untraced one before it.
PG_CONFIGS=${PG_CONFIGS:-untraced floor traced exact ctxsched ctxnone all nosnap}
PG_SKIP=${PG_SKIP:-}
has() { [[ " $SECTIONS " == *" $1 "* ]]; }

BUILD=${LATSNAP_BUILD:-$ROOT/build}
LATSNAP=$BUILD/latsnap
PRELOAD=$BUILD/liblatsnap.so
WLD=$BUILD/workloads
BB=$BUILD/bench
BT_SCRIPT=$ROOT/bench/syscall-time.bt

for f in "$LATSNAP" "$PRELOAD" "$BB/getppid" "$WLD/sleeper" "$BB/empty-hooks" "$BB/pingpong" \
	"$WLD/unwind-nofp" "$BB/burst" "$BB/prims"; do
	[ -e "$f" ] || { echo "bench: $f missing: run make bench" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "bench: needs root (BPF, perf, postgres as another user)" >&2; exit 1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/latsnap-bench.XXXXXX")
chmod 755 "$TMP" # the postgres user works in here
RESULTS=$TMP/results # "SECTION CONFIG VALUE" lines, one per measurement
NOTES=$TMP/notes     # "SECTION CONFIG text" lines: why a row has no number
: >"$RESULTS"
: >"$NOTES"

# Every process this script starts in the background, so that cleanup ends those and only those.
BG_PIDS=()
PG_DATA=
PG_BIN=
PG_CG=

cleanup() {
	local pid
	for pid in "${BG_PIDS[@]}"; do
		kill -INT "$pid" 2>/dev/null || true
	done
	if [ -n "$PG_DATA" ] && [ -f "$PG_DATA/postmaster.pid" ]; then
		pg_as "$PG_BIN/pg_ctl" -D "$PG_DATA" stop -m immediate -w >/dev/null 2>&1 || true
	fi
	sleep 0.2
	for pid in "${BG_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	if [ -n "$PG_CG" ]; then
		rmdir "$PG_CG" 2>/dev/null || true
	fi
	if [ "${KEEP_TMP:-0}" = 1 ]; then
		echo "bench: kept $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { echo "bench: $*" >&2; }
record() { echo "$1 $2 $3" >>"$RESULTS"; }
# note SECTION CONFIG TEXT: the row shows TEXT instead of a number (the first note wins).
note() {
	grep -q "^$1 $2 " "$NOTES" || echo "$1 $2 $3" >>"$NOTES"
}

# With two CPUs or more the measured program runs alone on the last one and the tools on the
# others: the tracer's own work then does not land in the measured loop.
NCPU=$(nproc)
if [ "$NCPU" -ge 2 ]; then
	WL_CPU=$((NCPU - 1))
	PIN_WL=(taskset -c "$WL_CPU")
	PIN_TOOL=(taskset -c "$([ "$WL_CPU" = 1 ] && echo 0 || echo "0-$((WL_CPU - 1))")")
else
	PIN_WL=()
	PIN_TOOL=()
fi

# wait_for FILE REGEX SECONDS: until FILE has a line matching REGEX; 1 on timeout.
wait_for() {
	local f=$1 re=$2 t=$(($3 * 10)) i
	for ((i = 0; i < t; i++)); do
		grep -qE "$re" "$f" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# stop_bg PID: SIGINT, as a user's Ctrl-C, then wait for it; SIGKILL after 20 s.
stop_bg() {
	local pid=$1 i
	kill -INT "$pid" 2>/dev/null || true
	for ((i = 0; i < 200; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	forget "$pid"
}

# forget PID: it is gone, cleanup leaves its number alone.
forget() {
	local p keep=()
	for p in "${BG_PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	BG_PIDS=("${keep[@]}")
}

median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { exit 1 }
		printf "%.6g\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# result SECTION CONFIG: the median of its measurements, or nothing.
result() {
	awk -v s="$1" -v c="$2" '$1 == s && $2 == c { print $3 }' "$RESULTS" | median 2>/dev/null || true
}

# why SECTION CONFIG: its note, or "not run: no measurement".
why() {
	local w
	w=$(awk -v s="$1" -v c="$2" '$1 == s && $2 == c { $1 = ""; $2 = ""; sub(/^  /, ""); print; exit }' "$NOTES")
	echo "${w:-failed: no measurement}"
}

# --- 1 and 2: syscall cost and context switches ------------------------------------------------

# The loop's and the ping-pong's own figures from their stderr (merged with a wrapper's).
# "cpu" is the measured processes' own CPU time, "wall" their elapsed time: on a machine where
# other programs run too, only the first is theirs alone.
loop_ns() { sed -n "s/^getppid: .* \\([0-9.]*\\) ns\\/call $2.*/\\1/p" "$1" | tail -n 1; }
pp_ns() { sed -n "s/^pingpong: .* \\([0-9.]*\\) ns\\/round trip $2.*/\\1/p" "$1" | tail -n 1; }

# The untraced figures of the run just before: every other configuration's run is paired with
# one, and its added cost is the difference within the pair, so slow drift cancels out.
declare -A LAST=()

# measure SECTION CONFIG WRAPPER...: one run of SECTION's program under WRAPPER (maybe empty).
measure() {
	local sec=$1 cfg=$2 n v w
	shift 2
	if [ "$sec" = syscall ]; then
		n=$N
		[ "$cfg" = perf ] && n=$((N / PERF_DIV > 1000 ? N / PERF_DIV : 1000))
		"$@" "${PIN_WL[@]}" "$BB/getppid" "$n" >"$TMP/wl.out" 2>&1 || true
		v=$(loop_ns "$TMP/wl.out" cpu)
		w=$(loop_ns "$TMP/wl.out" wall)
	else
		n=$PP_N
		[ "$cfg" = perf ] && n=$((PP_N / PERF_DIV > 500 ? PP_N / PERF_DIV : 500))
		"$@" "${PIN_WL[@]}" "$BB/pingpong" "$n" >"$TMP/wl.out" 2>&1 || true
		v=$(pp_ns "$TMP/wl.out" cpu)
		w=$(pp_ns "$TMP/wl.out" wall)
	fi
	if [ -z "$v" ]; then
		note "$sec" "$cfg" "failed: $(tail -n 1 "$TMP/wl.out")"
		return 0
	fi
	record "$sec" "$cfg" "$v"
	[ -n "$w" ] && record "${sec}_wall" "$cfg" "$w"
	if [ "$cfg" = untraced ]; then
		LAST[$sec]=$v
	elif [ -n "${LAST[$sec]:-}" ]; then
		record "${sec}_d" "$cfg" "$(awk -v v="$v" -v b="${LAST[$sec]}" 'BEGIN { print v - b }')"
		record "${sec}_r" "$cfg" "$(awk -v v="$v" -v b="${LAST[$sec]}" 'BEGIN { print b / v }')"
	fi
}

# run_pair CONFIG WRAPPER...: the loop then the ping-pong, each under WRAPPER (maybe empty).
run_pair() {
	measure syscall "$@"
	measure pingpong "$@"
}

# not_run CONFIG WHY: both rows of a configuration that cannot run.
not_run() {
	note syscall "$1" "not run: $2"
	note pingpong "$1" "not run: $2"
}

# with_daemon CONFIG READY_REGEX COMMAND...: start COMMAND (a tracer) in the background, wait
# until its output says it is ready, run the pair untouched by any wrapper, stop it.
with_daemon() {
	local cfg=$1 re=$2 pid
	shift 2
	"${PIN_TOOL[@]}" "$@" >"$TMP/daemon.out" 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	if ! wait_for "$TMP/daemon.out" "$re" 60; then
		not_run "$cfg" "did not start: $(grep -v '^$' "$TMP/daemon.out" | tail -n 1)"
		stop_bg "$pid"
		return 0
	fi
	run_pair "$cfg"
	stop_bg "$pid"
}

cfg_untraced() { run_pair untraced; }
# The preload library alone, no latsnap: it must cost nothing until an outlier.
cfg_preloaded() { run_pair preloaded env LD_PRELOAD="$PRELOAD"; }
cfg_floor() { with_daemon floor '^ready' "$BB/empty-hooks"; }
cfg_tracked() {
	# --no-snapshot: the hooks and the preload library are those of a snapshot run; LTTng is
	# only ever busy after an outlier, and the loop has none.
	run_pair tracked "${PIN_TOOL[@]}" "$LATSNAP" record --no-snapshot --
}
cfg_nopreload() { run_pair nopreload "${PIN_TOOL[@]}" "$LATSNAP" record --no-snapshot --no-preload --; }
cfg_untracked() {
	# latsnap tracks an idle process: every hook runs for the loop, which it does not track.
	sleep 3600 &
	local idle=$!
	BG_PIDS+=("$idle")
	with_daemon untracked '^latsnap: record: tracking ' "$LATSNAP" record --no-snapshot -v -p "$idle"
	kill "$idle" 2>/dev/null || true
	wait "$idle" 2>/dev/null || true
	forget "$idle"
}
cfg_bpftrace() {
	if ! command -v bpftrace >/dev/null; then
		not_run bpftrace "bpftrace not installed (scripts/install-bench-deps.sh)"
		return 0
	fi
	with_daemon bpftrace '^ready' bpftrace "$BT_SCRIPT" 50000000
}
cfg_perf() {
	if ! command -v perf >/dev/null; then
		not_run perf "perf not installed (scripts/install-bench-deps.sh)"
		return 0
	fi
	run_pair perf "${PIN_TOOL[@]}" perf trace --duration 50 -o "$TMP/perf-trace.out" --
}

SC_CONFIGS="untraced ${CONFIGS:-floor tracked untracked bpftrace perf preloaded nopreload}"

# perf trace needs tracefs for the syscall tracepoints' formats.
if [ ! -d /sys/kernel/tracing/events ] && [ -d /sys/kernel/tracing ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

has 1 || has 2 || ROUNDS=0
say "1, 2: getppid x $N and ping-pong x $PP_N, $ROUNDS alternating rounds of: $SC_CONFIGS"
for ((r = 1; r <= ROUNDS; r++)); do
	for cfg in $SC_CONFIGS; do
		[ "$cfg" = untraced ] && continue
		say "  round $r: untraced, $cfg"
		cfg_untraced
		"cfg_$cfg"
	done
done

# --- 3: PostgreSQL ----------------------------------------------------------------------------

# runuser, not setpriv: setpriv changes the uid before the gid, which glibc cannot apply to every
# thread of a process that has more than one, as a preloaded one has (lttng-ust's): it aborts.
pg_as() { runuser -u postgres -- "$@"; }

PG_SOCK=$TMP/pg
PG_LOG=$TMP/pg.log
pg_tps() { sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$1" | tail -n 1; }

pg_wait_ready() {
	local i
	for ((i = 0; i < 300; i++)); do
		"$PG_BIN/pg_isready" -q -h "$PG_SOCK" -U postgres && return 0
		sleep 0.1
	done
	return 1
}

pg_stop() {
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DATA" stop -m fast -w >>"$PG_LOG" 2>&1 || true
}

# pg_round CONFIG: start the server (under latsnap when traced), warm it up, one pgbench run.
pg_round() {
	local cfg=$1 pid v u0='' u1='' txns c
	# synchronous_commit=off: commits do not wait for the disk, so the server is CPU-bound and
	# what tracing costs shows, instead of hiding behind fsync (and the disk's noise).
	local server=("$PG_BIN/postgres" -D "$PG_DATA" -k "$PG_SOCK" -c listen_addresses=
		-c synchronous_commit=off)
	# In the bench's CPU-accounting cgroup (when there is one) from the start: the server, and
	# latsnap when traced. Not pinned: the server would inherit it, and the untraced one has none.
	local hooks=''
	# Before this configuration's programs load: the others' are left out of its BPF times.
	bpf_ids >"$TMP/bpf-old-ids"
	if [ "$cfg" = floor ]; then
		# The floor: empty programs on latsnap's hooks, the server untraced.
		"${PIN_TOOL[@]}" "$BB/empty-hooks" >"$TMP/pg-hooks.out" 2>&1 &
		hooks=$!
		BG_PIDS+=("$hooks")
		wait_for "$TMP/pg-hooks.out" '^ready' 60 ||
			note postgres floor "failed: empty-hooks did not start"
	fi
	local all=''
	if [ "$cfg" = all ]; then
		# -a: every thread of the machine tracked (pgbench too), no preload library; latsnap in
		# the server's cgroup.
		: >"$TMP/pg-latsnap.err"
		(
			[ -n "$PG_CG" ] && echo "$BASHPID" >"$PG_CG/cgroup.procs"
			exec "$LATSNAP" record -v -a -t 200ms -o "$TMP/pg-snaps" >/dev/null 2>"$TMP/pg-latsnap.err"
		) &
		all=$!
		BG_PIDS+=("$all")
		wait_for "$TMP/pg-latsnap.err" 'tracking every thread' 60 ||
			note postgres all "failed: latsnap record -a did not start: $(tail -n 1 "$TMP/pg-latsnap.err")"
	fi
	(
		[ -n "$PG_CG" ] && echo "$BASHPID" >"$PG_CG/cgroup.procs"
		case $cfg in
		traced)
			exec "$LATSNAP" record -v -t 200ms -o "$TMP/pg-snaps" -- \
				runuser -u postgres -- "${server[@]}" >/dev/null 2>"$TMP/pg-latsnap.err"
			;;
		nosnap)
			exec "$LATSNAP" record -v -t 200ms --no-snapshot -- \
				runuser -u postgres -- "${server[@]}" >/dev/null 2>"$TMP/pg-latsnap.err"
			;;
		exact)
			exec "$LATSNAP" record -v -t 200ms --exact-start -o "$TMP/pg-snaps" -- \
				runuser -u postgres -- "${server[@]}" >/dev/null 2>"$TMP/pg-latsnap.err"
			;;
		ctxsched | ctxnone)
			exec "$LATSNAP" record -v -t 200ms --context "${cfg#ctx}" -o "$TMP/pg-snaps" -- \
				runuser -u postgres -- "${server[@]}" >/dev/null 2>"$TMP/pg-latsnap.err"
			;;
		*)
			exec runuser -u postgres -- "${server[@]}" >>"$PG_LOG" 2>&1
			;;
		esac
	) &
	pid=$!
	BG_PIDS+=("$pid")
	if ! pg_wait_ready; then
		note postgres "$cfg" "failed: server did not start: $(tail -n 1 "$([ "$cfg" = traced ] &&
			echo "$TMP/pg-latsnap.err" || echo "$PG_LOG")")"
		stop_bg "$pid"
		return 1
	fi
	# A short run first: the server's own caches warm up alike in both configurations.
	if [ "$PG_WARMUP" -gt 0 ]; then
		"$PG_BIN/pgbench" -h "$PG_SOCK" -U postgres -c 4 -j 2 -T "$PG_WARMUP" postgres \
			>/dev/null 2>&1 || true
	fi
	[ -n "$PG_CG" ] && u0=$(cg_usage_ns "$PG_CG")
	# latsnap's own CPU time (clock ticks) over the run: the subshell exec'd it, or -a's.
	local lpid='' l0='' l1='' w0 w1
	case $cfg in
	traced | exact | ctx* | nosnap) lpid=$pid ;;
	all) lpid=$all ;;
	esac
	[ -n "$lpid" ] && l0=$(awk '{ print $14 + $15 }' "/proc/$lpid/stat" 2>/dev/null)
	w0=$(date +%s%N)
	bpf_runs "$TMP/bpf-old-ids" >"$TMP/bpf0"
	"$PG_BIN/pgbench" -h "$PG_SOCK" -U postgres -c 4 -j 2 -T "$PG_SECONDS" postgres \
		>"$TMP/pgbench.out" 2>&1 || true
	bpf_runs "$TMP/bpf-old-ids" >"$TMP/bpf1"
	[ -n "$PG_CG" ] && u1=$(cg_usage_ns "$PG_CG")
	w1=$(date +%s%N)
	[ -n "$lpid" ] && l1=$(awk '{ print $14 + $15 }' "/proc/$lpid/stat" 2>/dev/null)
	if [ -n "$l0" ] && [ -n "$l1" ]; then
		record pg_latcpu "$cfg" "$(awk -v a="$l0" -v b="$l1" -v t="$(getconf CLK_TCK)" \
			-v w=$((w1 - w0)) 'BEGIN { printf "%.2f", (b - a) / t / (w / 1e9) * 100 }')"
	fi
	v=$(pg_tps "$TMP/pgbench.out")
	txns=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$TMP/pgbench.out")
	if [ -n "$v" ]; then
		record postgres "$cfg" "$v"
	else
		note postgres "$cfg" "failed: pgbench: $(tail -n 1 "$TMP/pgbench.out")"
	fi
	# BPF time per transaction, per program (kernel.bpf_stats_enabled, which adds ~35 ns a run).
	if [ -n "$txns" ] && [ "$txns" -gt 0 ]; then
		join "$TMP/bpf0" "$TMP/bpf1" 2>/dev/null | awk -v c="$cfg" -v n="$txns" '
			{ runs = $6 - $3; ns = $7 - $4
			  if (runs > 0) printf "pgbpf_runs %s:%s %.2f\npgbpf_ns %s:%s %.1f\n", c, $2, runs / n, c, $2, ns / runs
			  total += ns }
			END { if (NR) printf "pgbpf_total %s %.0f\n", c, total / n }' >>"$RESULTS"
	fi
	# CPU time of the server (and of latsnap, traced) per transaction, in microseconds: what
	# other programs on the machine take does not count, unlike in tps.
	if [ -n "$PG_CG" ] && [ -n "$txns" ] && [ "$txns" -gt 0 ]; then
		c=$(awk -v a="$u0" -v b="$u1" -v n="$txns" 'BEGIN { printf "%.2f", (b - a) / n / 1e3 }')
		record postgres_cpu "$cfg" "$c"
		if [ "$cfg" = untraced ]; then
			LAST[postgres]=$c
		elif [ -n "${LAST[postgres]:-}" ]; then
			record postgres_r "$cfg" "$(awk -v c="$c" -v b="${LAST[postgres]}" 'BEGIN { print b / c }')"
		fi
	fi
	# A new connection per transaction, each a backend forked by the (preloaded) postmaster:
	# what a fork of a preloaded process costs the application.
	"$PG_BIN/pgbench" -h "$PG_SOCK" -U postgres -C -c 1 -j 1 -T "$PG_CONN_SECONDS" -n \
		-f "$TMP/select1.sql" postgres >"$TMP/pgconn.out" 2>&1 || true
	v=$(sed -n 's/^average connection time = \([0-9.]*\) ms$/\1/p' "$TMP/pgconn.out")
	if [ -n "$v" ]; then
		record pgconn "$cfg" "$v"
	else
		note pgconn "$cfg" "failed: pgbench -C: $(tail -n 1 "$TMP/pgconn.out")"
	fi
	pg_stop
	wait "$pid" 2>/dev/null || true
	forget "$pid"
	if [ -n "$hooks" ]; then
		stop_bg "$hooks"
	fi
	if [ -n "$all" ]; then
		stop_bg "$all"
	fi
	case $cfg in
	traced | ctx* | all)
		sed -n "s/^latsnap: [0-9]* outliers/$cfg: &/p" "$TMP/pg-latsnap.err" | tail -n 1 >>"$TMP/pg-totals"
		# What the switches and wakeups did besides (-v): user stacks walked at preemptions, and
		# the context events written (a long wait's wakeup walks two stacks).
		sed -n -e "s/.*\(user stacks walked at a switch-out from user code: [0-9]*\).*/$cfg: \1/p" \
			-e "s/.*\(kernel context stream: [0-9]* events\).*/$cfg: \1/p" \
			-e "s/.*record: \(kernel stacks walked: .*\)/$cfg: \1/p" \
			"$TMP/pg-latsnap.err" | tail -n 3 >>"$TMP/pg-totals"
		;;
	esac
}

# cg_usage_ns CGROUP: the CPU time of its processes so far, in ns (v1 cpuacct.usage, v2 cpu.stat).
cg_usage_ns() {
	if [ -r "$1/cpuacct.usage" ]; then
		cat "$1/cpuacct.usage"
	else
		awk '$1 == "usage_usec" { printf "%.0f\n", $2 * 1000 }' "$1/cpu.stat" 2>/dev/null
	fi
}

# bpf_runs [OLD-IDS]: "ID NAME RUN_CNT RUN_TIME_NS" of latsnap's programs (ls_*) and the floor's
# (empty_*), sorted by id for join; nothing without bpftool. Programs whose id is in the file
# OLD-IDS (bpf_ids before the configuration started) are left out: another latsnap on the machine
# (make check, another tree's tests) has programs of the same names, whose runs are not this one's.
bpf_runs() {
	bpftool -j prog show 2>/dev/null | jq -r '.[] | select(.name != null and
		(.name | test("^(ls|empty)_"))) | "\(.id) \(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"' |
		awk -v old="${1:-/dev/null}" 'BEGIN { while ((getline l < old) > 0) skip[l] = 1 }
			!($1 in skip)' | sort -k1,1 || true
}

# bpf_ids: the ids of the loaded programs of latsnap's and the floor's names, one a line.
bpf_ids() {
	bpftool -j prog show 2>/dev/null | jq -r '.[] | select(.name != null and
		(.name | test("^(ls|empty)_"))) | .id' || true
}

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if ! has 3; then
	PG_BIN=
elif [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/pgbench" ] || ! id postgres >/dev/null 2>&1; then
	note postgres untraced "not run: PostgreSQL and pgbench not installed (scripts/install-bench-deps.sh)"
	note postgres traced "not run: PostgreSQL and pgbench not installed (scripts/install-bench-deps.sh)"
	PG_BIN=
else
	say "3: PostgreSQL, pgbench -s $PG_SCALE -c 4 -j 2 -T $PG_SECONDS, $PG_PAIRS alternating pairs"
	PG_DATA=$TMP/pg/data
	# cgroup v1 cpuacct, or v2 (cpu.stat usage_usec is coarser to read: v1 first). A cgroup v2
	# alone (make check-kernels' guests) had no CPU column before.
	PG_CG=/sys/fs/cgroup/cpuacct/latsnap-bench-$$
	if ! { mkdir "$PG_CG" 2>/dev/null && [ -r "$PG_CG/cpuacct.usage" ]; }; then
		rmdir "$PG_CG" 2>/dev/null || true
		PG_CG=/sys/fs/cgroup/latsnap-bench-$$
		if [ -f /sys/fs/cgroup/cgroup.controllers ] && mkdir "$PG_CG" 2>/dev/null &&
			[ -n "$(cg_usage_ns "$PG_CG")" ]; then
			:
		else
			rmdir "$PG_CG" 2>/dev/null || true
			PG_CG=''
		fi
	fi
	mkdir -p "$PG_SOCK"
	chown postgres: "$PG_SOCK"
	echo 'select 1;' >"$TMP/select1.sql"
	if pg_as "$PG_BIN/initdb" -D "$PG_DATA" -A trust -U postgres >>"$PG_LOG" 2>&1 &&
		pg_as "$PG_BIN/pg_ctl" -D "$PG_DATA" -o "-k $PG_SOCK -c listen_addresses=" -w start \
			>>"$PG_LOG" 2>&1 &&
		"$PG_BIN/pgbench" -h "$PG_SOCK" -U postgres -i -q -s "$PG_SCALE" postgres \
			>>"$PG_LOG" 2>&1; then
		pg_stop
		PG_STATS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
		sysctl -q -w kernel.bpf_stats_enabled=1 2>/dev/null || true
		for ((r = 1; r <= PG_PAIRS; r++)); do
			# Each configuration is compared with the round's untraced run.
			for cfg in $PG_CONFIGS; do
				if [[ " $PG_SKIP " == *" $cfg "* ]]; then
					note postgres "$cfg" "not run: QUICK=1 leaves it out (PG_SKIP)"
					continue
				fi
				say "  round $r: $cfg"
				pg_round "$cfg" || true
			done
		done
		sysctl -q -w kernel.bpf_stats_enabled="$PG_STATS" 2>/dev/null || true
	else
		pg_stop
		note postgres untraced "failed: set-up: $(tail -n 1 "$PG_LOG")"
		note postgres traced "failed: set-up: $(tail -n 1 "$PG_LOG")"
	fi
fi

# --- 4: the recorder --------------------------------------------------------------------------

if has 4; then
	say "4: the recorder: $REC_N outliers of 300 ms, 450 ms apart, under record -t 200ms"
	REC_DIR=$TMP/rec
	REC_ERR=$TMP/rec.err
	REC_CPU='' REC_RSS='' REC_WALL=''
	# COMMAND mode, so that only the workload is tracked (without a target latsnap would also track
	# any other process on the machine that loaded the preload library). latsnap ends with it, so its
	# CPU time and peak RSS are sampled while it runs; the last sample before it exits is kept.
	# 150 ms between naps: under the threshold, past --post: one snapshot per outlier.
	rec_t0=$(date +%s%N)
	"${PIN_TOOL[@]}" "$LATSNAP" record -v -t 200ms -o "$REC_DIR" -- "$WLD/sleeper" 300 "$REC_N" 150 \
		>/dev/null 2>"$REC_ERR" &
	rec_pid=$!
	BG_PIDS+=("$rec_pid")
	hz=$(getconf CLK_TCK)
	while [ -r "/proc/$rec_pid/stat" ] && ! grep -q '^State:.*Z' "/proc/$rec_pid/status" 2>/dev/null; do
		if read -r ut st < <(awk '{ print $14, $15 }' "/proc/$rec_pid/stat" 2>/dev/null) &&
			rss=$(awk '/^VmHWM:/ { print $2 }' "/proc/$rec_pid/status" 2>/dev/null) && [ -n "$rss" ]; then
			REC_WALL=$((($(date +%s%N) - rec_t0) / 1000000))
			REC_CPU=$(awk -v u="$ut" -v s="$st" -v hz="$hz" 'BEGIN { printf "%.2f", (u + s) / hz }')
			REC_RSS=$rss
		fi
		sleep 0.1
	done
	wait "$rec_pid" 2>/dev/null || true
	forget "$rec_pid"
	# Seconds from each outlier's end to its summary.json on disk: mtime (CLOCK_REALTIME) moved to
	# CLOCK_MONOTONIC, the outliers' clock, with the offset between the two read now.
	offset_ns=$(perl -MTime::HiRes=clock_gettime,CLOCK_REALTIME,CLOCK_MONOTONIC \
		-e 'printf "%.0f\n", (clock_gettime(CLOCK_REALTIME) - clock_gettime(CLOCK_MONOTONIC)) * 1e9')
	for f in "$REC_DIR"/*/summary.json; do
		[ -f "$f" ] || continue
		end=$(jq '[.outliers[].end_ns] | max // empty' "$f")
		[ -n "$end" ] || continue
		mt=$(perl -MTime::HiRes=stat -e 'printf "%.0f\n", (stat($ARGV[0]))[9] * 1e9' "$f")
		record rec_latency all "$(awk -v m="$mt" -v o="$offset_ns" -v e="$end" \
			'BEGIN { printf "%.1f", (m - o - e) / 1e6 }')"
		record rec_size all "$(du -sk "$(dirname "$f")" | awk '{ print $1 }')"
	done
	sed -n 's/.*record: snapshot .* took \([0-9.]*\) ms.*/\1/p' "$REC_ERR" | while read -r v; do
		record rec_took all "$v"
	done
	[ -n "$REC_CPU" ] && record rec_cpu all "$REC_CPU"
	[ -n "$REC_RSS" ] && record rec_rss all "$REC_RSS"
	REC_TOTALS=$(grep '^latsnap: [0-9]* outliers' "$REC_ERR" | tail -n 1 || true)
	REC_IN=$(find "$REC_DIR" -name summary.json -print0 2>/dev/null |
		xargs -0 -r jq -r '.outliers[] | "\(.tid) \(.end_ns)"' | sort -u | wc -l)
fi

# --- 5: capture under bursts ------------------------------------------------------------------

if has 5; then
	say "5: bursts: 32 threads nap 100 ms at once, $BURST_ROUNDS times, 300 ms apart, under -t 50ms"
	BURST_DIR=$TMP/burst
	BURST_ERR=$TMP/burst.err
	"$LATSNAP" record -t 50ms -o "$BURST_DIR" -- "$BB/burst" 32 "$BURST_ROUNDS" 100 300 \
		>/dev/null 2>"$BURST_ERR" || true
	BURST_TOTALS=$(grep '^latsnap: [0-9]* outliers' "$BURST_ERR" | tail -n 1 || true)
	# Each outlier once, however many snapshots cover it.
	BURST_IN=$(find "$BURST_DIR" -name summary.json -print0 2>/dev/null |
		xargs -0 -r jq -r '.outliers[] | "\(.tid) \(.end_ns)"' | sort -u | wc -l)
	BURST_SKIPPED_JSON=$(find "$BURST_DIR" -name summary.json -print0 2>/dev/null |
		xargs -0 -r jq '.skipped' | awk '{ s += $1 } END { print s + 0 }')
fi

# --- 6: the preload library's unwind ---------------------------------------------------------

if has 6; then
	say "6: unwind per signal: $NAPS outliers at 2 depths of a program without frame pointers"
	# unwind_run DEPTH: DEPTH extra recursive frames on top of the workload's fixed chain; one
	# "FRAMES UNWIND_NS" line per signal into $TMP/unwind-DEPTH, from the outliers' unwound
	# stacks (the library reports them through the kernel: no LTTng session needed).
	unwind_run() {
		local depth=$1
		"$LATSNAP" record --no-snapshot --json -t 2ms -- "$WLD/unwind-nofp" 5 "$NAPS" "$depth" \
			2>/dev/null |
			jq -r 'select(.user_stack.source == "unwind") |
				"\(.user_stack.frames | length) \(.user_stack.unwind_ns)"' \
				>"$TMP/unwind-$depth" 2>/dev/null || true
	}
	if command -v jq >/dev/null; then
		unwind_run 0
		unwind_run 50
	fi
fi

# --- 7: the stall scan (record --hang) ------------------------------------------------------

if has 7; then
	say "7: the stall scan: per scan, with the machine's tasks and with $IDLE_N idle threads more"
	# stall_run TAG TARGET...: record TARGET (-p PID, or -a) with --hang 250ms (a scan every
	# 62 ms), for STALL_SECONDS; its -v totals line "stall checks: N scans, X us each ..." into
	# $TMP/stall-TAG.
	stall_run() {
		local tag=$1
		shift
		"$LATSNAP" record -v --no-snapshot -t 50ms --hang 250ms -d "${STALL_SECONDS}s" "$@" \
			>/dev/null 2>"$TMP/stall-$tag.err" || true
		set -- "$tag"
		grep 'stall checks:' "$TMP/stall-$1.err" | tail -n 1 >"$TMP/stall-$1" || true
		# Every task of the machine: /proc/loadavg's "running/total".
		awk '{ split($4, t, "/"); print t[2] }' /proc/loadavg >"$TMP/stall-$1.tasks"
	}
	sleep 600 &
	STALL_SLEEP=$!
	stall_run base -p "$STALL_SLEEP"
	"$BB/idlethreads" "$IDLE_N" $((3 * STALL_SECONDS + 30)) 2>"$TMP/idle.err" &
	IDLE_PID=$!
	for _ in $(seq 600); do
		grep -q '^ready' "$TMP/idle.err" 2>/dev/null && break
		sleep 0.1
	done
	stall_run untracked -p "$STALL_SLEEP"
	stall_run all -a
	stall_run tracked -p "$IDLE_PID"
	kill "$STALL_SLEEP" "$IDLE_PID" 2>/dev/null || true
	wait "$STALL_SLEEP" "$IDLE_PID" 2>/dev/null || true
fi

# --- 8: a request probe pair -----------------------------------------------------------------

if has 8; then
	say "8: a request probe pair per call: $CALLS_N calls, untraced / probes on, untracked / tracked, $CALLS_ROUNDS rounds"
	# calls_run CONFIG: one round of the calls loop; its ns per call into $RESULTS as "calls CONFIG".
	calls_run() {
		local cfg=$1 v probe="uprobe:$BB/calls:request_op"
		case $cfg in
		untraced)
			v=$("$BB/calls" "$CALLS_N" 2>&1 | sed -n 's/^ns_per_call \([0-9.]*\).*/\1/p')
			;;
		untracked)
			sleep 60 &
			local sp=$!
			"$LATSNAP" record -v --no-snapshot -p "$sp" --request "$probe" -d 60s \
				>/dev/null 2>"$TMP/calls.err" &
			local lp=$!
			wait_for "$TMP/calls.err" 'record: tracking ' 60 || sleep 2
			v=$("$BB/calls" "$CALLS_N" 2>&1 | sed -n 's/^ns_per_call \([0-9.]*\).*/\1/p')
			kill -INT "$lp" 2>/dev/null || true
			kill "$sp" 2>/dev/null || true
			wait "$lp" "$sp" 2>/dev/null || true
			;;
		tracked)
			v=$("$LATSNAP" record --no-snapshot --no-preload --request "$probe" -- \
				"$BB/calls" "$CALLS_N" 2>&1 | sed -n 's/^ns_per_call \([0-9.]*\).*/\1/p')
			;;
		esac
		[ -n "$v" ] && record calls "$cfg" "$v"
	}
	for ((r = 0; r < CALLS_ROUNDS; r++)); do
		for cfg in untraced untracked tracked; do
			calls_run "$cfg"
		done
	done
fi

if has 9; then
	say "9: the idle policy: record -a -t 50ms for ${MACHINE_SECONDS}s on this machine, with and without it"
	# machine_run CONFIG FLAGS...: one -a run; "machine CONFIG-outliers N", "machine CONFIG-idle N"
	# and "machine CONFIG-cpu SECONDS" (latsnap's own user + system time) into $RESULTS.
	machine_run() {
		local cfg=$1 m1 m2 lp
		shift
		WL_LOG=/dev/null "$WLD/workpool" 3 0 $((MACHINE_SECONDS * 1000 + 8000)) 0 &
		m1=$!
		sleep 0.5
		"$LATSNAP" record -v --no-snapshot --json -a -t 50ms -d "${MACHINE_SECONDS}s" "$@" \
			>"$TMP/machine-$cfg.out" 2>"$TMP/machine-$cfg.err" &
		lp=$!
		sleep 1
		WL_LOG=/dev/null "$WLD/workpool" 3 0 $((MACHINE_SECONDS * 1000 + 4000)) 0 &
		m2=$!
		wait "$lp" || true
		kill "$m1" "$m2" 2>/dev/null || true
		wait "$m1" "$m2" 2>/dev/null || true
		record machine "$cfg-outliers" "$(grep -c '' "$TMP/machine-$cfg.out" || true)"
		record machine "$cfg-idle" "$(sed -nE 's/^latsnap: [0-9]+ outliers, .*\), ([0-9]+) idle$/\1/p' "$TMP/machine-$cfg.err")"
		record machine "$cfg-cpu" "$(sed -nE 's/.*own CPU time: ([0-9.]+) s user, ([0-9.]+) s system.*/\1 \2/p' "$TMP/machine-$cfg.err" | awk '{ print $1 + $2 }')"
	}
	machine_run policy
	machine_run nopolicy --include-idle
fi

if has 14; then
	say "14: the flood: record -a -t 100ms with snapshots for ${MACHINE_SECONDS}s on this machine, alone and beside a second latsnap -a"
	# flood_run CONFIG: one -a run with snapshots; "flood CONFIG-snapshots N", "-bytes B",
	# "-outliers N" and "-own N" (outliers of LTTng's daemons and of latsnap's processes,
	# by the pids they had at the end) into $RESULTS.
	flood_run() {
		local cfg=$1 other='' own
		rm -rf "$TMP/flood-$cfg" "$TMP/flood-$cfg-other"
		if [ "$cfg" = second ]; then
			"$LATSNAP" record -a -t 100ms -o "$TMP/flood-$cfg-other" \
				-d "$((MACHINE_SECONDS + 6))s" >/dev/null 2>&1 &
			other=$!
			sleep 3
		fi
		"$LATSNAP" record --json -a -t 100ms -o "$TMP/flood-$cfg" -d "${MACHINE_SECONDS}s" \
			>"$TMP/flood-$cfg.out" 2>"$TMP/flood-$cfg.err" || true
		own=$(pgrep -d, -f '^(/[^ ]*/)?(lttng-sessiond|lttng-consumerd|lttng-relayd|latsnap)( |$)' || true)
		if [ -n "$other" ]; then
			kill -INT "$other" 2>/dev/null || true
			wait "$other" 2>/dev/null || true
		fi
		record flood "$cfg-snapshots" "$(ls -d "$TMP/flood-$cfg"/*/summary.json 2>/dev/null | wc -l)"
		record flood "$cfg-bytes" "$(du -scb "$TMP/flood-$cfg"/*/ 2>/dev/null | tail -n 1 | cut -f1)"
		record flood "$cfg-outliers" "$(grep -c '' "$TMP/flood-$cfg.out" || true)"
		record flood "$cfg-own" "$(jq -s "[.[] | select(.pid as \$p | [${own:-0}] | index(\$p))] | length" \
			"$TMP/flood-$cfg.out" 2>/dev/null || echo '?')"
	}
	flood_run alone
	flood_run second
fi

if has 10; then
	say "10: the labelled set, each program left idle ${LAB_IDLE_S}s: $LAB_PROGRAMS"
	for p in $LAB_PROGRAMS; do
		LATSNAP_BUILD=$BUILD LATSNAP_TIMEOUT=$((LAB_IDLE_S + 120)) \
			tests/labelled/run.sh "$p" "$TMP/lab-$p" "$LAB_IDLE_S" >"$TMP/lab-$p.run" 2>&1 ||
			note labelled "$p" "not run: $(tail -n 1 "$TMP/lab-$p.run")"
		[ -s "$TMP/lab-$p/result.json" ] || note labelled "$p" "not run: no score ($(tail -n 1 "$TMP/lab-$p.run"))"
	done
fi

# --- 11: the primitives ----------------------------------------------------------------------

PRIMS_N=${PRIMS_N:-$([ "$QUICK" = 1 ] && echo 20000 || echo 2000000)}
PRIMS_ROUNDS=${PRIMS_ROUNDS:-$([ "$QUICK" = 1 ] && echo 1 || echo 5)}
if has 11; then
	PRIMS=$("$BB/prims" list 2>/dev/null || true)
	say "11: the primitives ($(echo $PRIMS | wc -w) programs), $PRIMS_ROUNDS rounds"
	for ((r = 0; r < PRIMS_ROUNDS; r++)); do
		for v in $PRIMS; do
			# Switches are ten times dearer to make than syscalls: a tenth as many.
			n=$PRIMS_N
			[[ $v == switch_* ]] && n=$((PRIMS_N / 10))
			out=$("$BB/prims" "$v" "$n" 2>"$TMP/prims.err") || {
				note prims "$v" "not run: $(tail -n 1 "$TMP/prims.err")"
				continue
			}
			record prims "$v" "$(awk '{ print $4 }' <<<"$out")"
		done
	done
fi

# --- 12: evidence under a CPU limit -----------------------------------------------------------

LIMIT_NAPS=${LIMIT_NAPS:-$([ "$QUICK" = 1 ] && echo 4 || echo 40)}
if has 12; then
	say "12: evidence under a CPU limit: $LIMIT_NAPS naps beside a busy loop, 5 ms of CPU per 500 ms"
	LIMIT_CG=$(scripts/cpu-limit.sh make "latsnap-bench-$$") || LIMIT_CG=
	if [ -z "$LIMIT_CG" ]; then
		note limit all "not run: no cgroup with a CPU limit could be made (cgroup v1 cpu or v2 cpu.max)"
	else
		cat >"$TMP/limited.sh" <<-EOS
			#!/bin/sh
			echo \$\$ >"$LIMIT_CG/cgroup.procs"
			( while :; do :; done ) &
			B=\$!
			"$WLD/sleeper" 60 $LIMIT_NAPS
			kill \$B
		EOS
		chmod +x "$TMP/limited.sh"
		"$LATSNAP" record --json -t 20ms -o "$TMP/limit" -- "$TMP/limited.sh" \
			>"$TMP/limit.out" 2>"$TMP/limit.err" || true
		scripts/cpu-limit.sh remove "$LIMIT_CG" || true
		LIMIT_SEL='select(.comm == "sleeper" and .syscall == "clock_nanosleep")'
		record limit naps "$(jq -c "$LIMIT_SEL" "$TMP/limit.out" | grep -c '' || true)"
		record limit unwound "$(jq -c "$LIMIT_SEL | select(.user_stack.source == \"unwind\")" "$TMP/limit.out" | grep -c '' || true)"
		record limit kstack "$(jq -c "$LIMIT_SEL | select(.kernel_stacks | length > 0)" "$TMP/limit.out" | grep -c '' || true)"
		record limit summary "$(find "$TMP/limit" -name summary.json -print0 2>/dev/null |
			xargs -0 -r jq -c ".outliers[] | $LIMIT_SEL | [.tid, .end_ns]" | sort -u | wc -l)"
		# What the misses said of themselves (a miss is never silent: each is flagged).
		jq -r "$LIMIT_SEL | select(.user_stack.source != \"unwind\") | .flags[]?" "$TMP/limit.out" |
			sed 's/:.*//' | sort | uniq -c | sed 's/^ *//' >"$TMP/limit.flags"
	fi
fi

# --- 13: evidence with every CPU saturated ----------------------------------------------------
# stress-ng spins on every CPU (its own process group, so that all its workers go at once);
# latsnap and the sleeper run at nice 0 beside it. rt: SCHED_FIFO on every CPU leaves the rest of
# the machine the 5% that RT throttling (sched_rt_runtime_us) keeps back: not in QUICK mode.

SAT_NAPS=${SAT_NAPS:-$([ "$QUICK" = 1 ] && echo 3 || echo 40)}
SAT_CONFIGS=${SAT_CONFIGS:-$([ "$QUICK" = 1 ] && echo "normal high" || echo "normal high fifo1 rt")}
SAT_SEL='select(.comm == "sleeper" and .syscall == "clock_nanosleep")'

# sat_start CONFIG: the spinners of CONFIG, in the background; their group ids in SAT_PGS.
sat_start() {
	local spin=(stress-ng --cpu 0 --cpu-method loop --timeout 900 --quiet)
	SAT_PGS=()
	case $1 in
	normal) setsid "${spin[@]}" & SAT_PGS+=($!) ;;
	high) setsid nice -n -15 "${spin[@]}" & SAT_PGS+=($!) ;;
	fifo1)
		setsid "${spin[@]}" & SAT_PGS+=($!)
		setsid chrt -f 10 stress-ng --cpu 1 --taskset 0 --cpu-method loop --timeout 900 \
			--quiet & SAT_PGS+=($!)
		;;
	rt) setsid chrt -f 10 "${spin[@]}" & SAT_PGS+=($!) ;;
	esac
	BG_PIDS+=("${SAT_PGS[@]}")
}

sat_stop() {
	local pg
	for pg in "${SAT_PGS[@]}"; do
		kill -KILL -- "-$pg" 2>/dev/null || true
		wait "$pg" 2>/dev/null || true
		forget "$pg"
	done
}

if has 13; then
	if ! command -v stress-ng >/dev/null; then
		for c in $SAT_CONFIGS; do
			note "sat-$c" all "not run: no stress-ng (scripts/install-deps.sh installs it)"
		done
	else
		for c in $SAT_CONFIGS; do
			say "13: evidence with every CPU saturated ($c): $SAT_NAPS naps"
			sat_start "$c"
			sleep 1
			t0=$(date +%s%N)
			"$LATSNAP" record --json -t 20ms -o "$TMP/sat-$c" -- "$WLD/sleeper" 60 "$SAT_NAPS" \
				>"$TMP/sat-$c.out" 2>"$TMP/sat-$c.err" || true
			record "sat-$c" seconds "$(( ($(date +%s%N) - t0) / 1000000 ))"
			sat_stop
			record "sat-$c" naps "$(jq -c "$SAT_SEL" "$TMP/sat-$c.out" | grep -c '' || true)"
			record "sat-$c" unwound "$(jq -c "$SAT_SEL | select(.user_stack.source == \"unwind\")" "$TMP/sat-$c.out" | grep -c '' || true)"
			record "sat-$c" kstack "$(jq -c "$SAT_SEL | select(.kernel_stacks | length > 0)" "$TMP/sat-$c.out" | grep -c '' || true)"
			record "sat-$c" summary "$(find "$TMP/sat-$c" -name summary.json -print0 2>/dev/null |
				xargs -0 -r jq -c ".outliers[] | $SAT_SEL | [.tid, .end_ns]" | sort -u | wc -l)"
			jq -r "$SAT_SEL | select(.user_stack.source != \"unwind\" or (.kernel_stacks | length) == 0) | .flags[]?" \
				"$TMP/sat-$c.out" | sed 's/:.*//' | sort | uniq -c | sed 's/^ *//' >"$TMP/sat-$c.flags"
		done
	fi
fi

# --- the tables -------------------------------------------------------------------------------

fmt() { awk -v v="$1" -v f="$2" 'BEGIN { printf f, v }'; }

declare -A LABEL=(
	[untraced]="no tracing"
	[floor]="empty BPF programs on latsnap's hooks (the floor)"
	[tracked]="latsnap, the program tracked"
	[untracked]="latsnap running, the program not tracked"
	[bpftrace]="bpftrace: per-thread syscall timing (bench/syscall-time.bt)"
	[perf]="perf trace --duration 50"
	[preloaded]="no tracing, liblatsnap.so preloaded"
	[nopreload]="latsnap, the program tracked, --no-preload"
)

# Do the empty programs hook exactly what latsnap's program hooks? (Not the stall scan's task
# iterator: user space runs it, no thread runs through it. Nor cgroup_attach_task: loaded only
# with record --cgroup, which the bench does not use.)
# The hooks a program file attaches by default: not its iterators, nor those loaded only when
# asked for (sk_data_ready: a keyed --request pair's upstream).
hooks() {
	grep -ho 'SEC("[a-z_]*/[a-z_]*")' "$@" |
		grep -v -e '"iter/' -e 'cgroup_attach_task' -e 'sk_data_ready' | sort -u | tr '\n' ' '
}
LATSNAP_BPF="bpf/latsnap.bpf.c bpf/latsnap/*.bpf.h" # the object's parts
# shellcheck disable=SC2086
if [ "$(hooks $LATSNAP_BPF)" = "$(hooks bench/empty.bpf.c)" ]; then
	HOOKS_NOTE="the same hooks as bpf/latsnap.bpf.c: $(hooks bench/empty.bpf.c | sed 's/SEC("\([^"]*\)")/\1/g')"
else
	HOOKS_NOTE="WARNING: bench/empty.bpf.c hooks $(hooks bench/empty.bpf.c) but bpf/latsnap.bpf.c hooks $(hooks $LATSNAP_BPF)"
fi

# cost_table SECTION FORMAT: the rows of table 1 or 2.
cost_table() {
	local sec=$1 f=$2 cfg v w best d fd thr
	fd=$(result "${sec}_d" floor)
	for cfg in $SC_CONFIGS; do
		v=$(result "$sec" "$cfg")
		if [ -z "$v" ]; then
			echo "| ${LABEL[$cfg]} | $(why "$sec" "$cfg") | | | | |$([ "$sec" = pingpong ] && echo " |")"
			continue
		fi
		best=$(awk -v s="$sec" -v c="$cfg" '$1 == s && $2 == c { print $3 }' "$RESULTS" | sort -g | head -n 1)
		d=$(result "${sec}_d" "$cfg")
		if [ "$cfg" = untraced ]; then
			d=— ratio=— thr=1.000
		else
			ratio=$(awk -v d="$d" -v f="$fd" 'BEGIN { printf (d != "" && f > 0) ? "%.2f" : "n/a", d / f }')
			thr=$(result "${sec}_r" "$cfg")
			thr=$([ -n "$thr" ] && fmt "$thr" %.3f || echo n/a)
			d=$([ -n "$d" ] && fmt "$d" "%+${f#%}" || echo n/a)
		fi
		w=$(result "${sec}_wall" "$cfg")
		w=$([ -n "$w" ] && fmt "$w" "$f" || echo n/a)
		if [ "$sec" = pingpong ]; then
			echo "| ${LABEL[$cfg]} | $(fmt "$v" "$f") | $(fmt "$best" "$f") | $w | $d | $ratio | $thr |"
		else
			echo "| ${LABEL[$cfg]} | $(fmt "$v" "$f") | $(fmt "$best" "$f") | $w | $d | $ratio |"
		fi
	done
}

ver() { "$@" 2>/dev/null | head -n 1 || true; }
pkgver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "not installed"; }

{
	echo "# latsnap bench"
	echo
	echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(hostname), $([ "$QUICK" = 1 ] && echo "QUICK mode: figures not meaningful" || echo "full run")"
	echo
	echo "- machine: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1), $NCPU CPUs, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo); $(. /etc/os-release && echo "$PRETTY_NAME"); kernel $(uname -r)"
	echo "- latsnap $(git describe --always --dirty 2>/dev/null || echo unknown); clang $(clang -dumpversion 2>/dev/null || echo '?'); libbpf $(pkg-config --modversion libbpf 2>/dev/null || echo '?'); lttng-ust $(pkgver liblttng-ust-dev); lttng-tools $(pkgver lttng-tools)"
	echo "- peers: $(ver bpftrace --version); $(ver perf --version); PostgreSQL $(pkgver postgresql-15)"
	echo "- pinning: $([ "$NCPU" -ge 2 ] && echo "measured programs on CPU $WL_CPU, tracers on CPU ${PIN_TOOL[2]}" || echo none)"
	echo "- floor: $HOOKS_NOTE"
	echo
	echo "## 1. Syscall cost: getppid loop, $N calls (perf trace: $((N / PERF_DIV > 1000 ? N / PERF_DIV : 1000))), $ROUNDS rounds"
	echo
	echo "Times are the loop's own CPU time (BPF programs run in its context; other programs on its CPU"
	echo "do not count), medians; \"wall\" is its elapsed time. Each configuration's run comes right after"
	echo "an untraced one: \"added\" is the median of those paired differences, \"× the floor\" that"
	echo "divided by the floor's."
	echo
	echo "| configuration | ns per syscall | best | wall | added ns per syscall | added, × the floor |"
	echo "|---|---:|---:|---:|---:|---:|"
	cost_table syscall %.1f
	echo
	echo "## 2. Context switches: pipe ping-pong between two processes on one CPU, $PP_N round trips (perf trace: $((PP_N / PERF_DIV > 500 ? PP_N / PERF_DIV : 500))), $ROUNDS rounds"
	echo
	echo "Each round trip: 2 writes, 2 reads, 2 wakeups, 2 context switches. Times are the CPU time of both"
	echo "processes per round trip (on one CPU: the wall time less other programs'), paired with untraced"
	echo "runs as in 1; throughput is the inverse, as a ratio within each pair."
	echo
	echo "| configuration | ns per round trip | best | wall | added ns per round trip | added, × the floor | throughput, × untraced |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	cost_table pingpong %.0f
	if has 3; then
		echo
		echo "## 3. PostgreSQL $(pkgver postgresql-15 | cut -d- -f1): pgbench -s $PG_SCALE -c 4 -j 2 -T $PG_SECONDS (TPC-B-like), median of $PG_PAIRS alternating runs"
		echo
		echo "Traced: the server under \`latsnap record -t 200ms -o DIR -- postgres ...\` (liblatsnap.so preloaded, snapshots on)."
		echo "The server runs with synchronous_commit=off (CPU-bound: the worst case for a tracer), restarted"
		echo "for each run, after a ${PG_WARMUP} s warm-up; pgbench itself is not traced."
		echo
		echo "The CPU columns count the server's processes (and latsnap's, traced) through a cgroup (v1 cpuacct, or v2 cpu.stat):"
		echo "unlike tps, they do not move with what other programs take; the ratio is per pair."
		echo
		echo "| configuration | tps | tps, × untraced | CPU µs per transaction | throughput from CPU, × untraced | each run (tps) |"
		echo "|---|---:|---:|---:|---:|---|"
		base=$(result postgres untraced)
		for cfg in $PG_CONFIGS; do
			v=$(result postgres "$cfg")
			case $cfg in
			traced) label="latsnap record -t 200ms, snapshots on (--context full, the default)" ;;
			exact) label="latsnap record -t 200ms --exact-start, snapshots on" ;;
			ctxsched) label="latsnap record -t 200ms, snapshots on, --context sched" ;;
			ctxnone) label="latsnap record -t 200ms, snapshots on, --context none" ;;
			all) label="latsnap record -a -t 200ms, snapshots on (every thread tracked, no preload)" ;;
			nosnap) label="latsnap record -t 200ms --no-snapshot" ;;
			floor) label="the floor: empty programs on latsnap's hooks, the server untraced" ;;
			*) label="no tracing" ;;
			esac
			runs=$(awk -v c="$cfg" '$1 == "postgres" && $2 == c { printf "%s%.0f", sep, $3; sep = ", " }' "$RESULTS")
			cpu=$(result postgres_cpu "$cfg")
			cpu=$([ -n "$cpu" ] && fmt "$cpu" %.1f || echo "not run: no CPU-accounting cgroup")
			cr=$([ "$cfg" = untraced ] && echo 1.000 || result postgres_r "$cfg")
			cr=$([ -n "$cr" ] && fmt "$cr" %.3f || echo n/a)
			if [ -z "$v" ]; then
				echo "| $label | $(why postgres "$cfg") | | | | |"
			elif [ -n "$base" ]; then
				echo "| $label | $(fmt "$v" %.1f) | $(awk -v v="$v" -v b="$base" 'BEGIN { printf "%.3f", v / b }') | $cpu | $cr | $runs |"
			else
				echo "| $label | $(fmt "$v" %.1f) | — | $cpu | $cr | $runs |"
			fi
		done
		# Issue 18's goals, from the medians above.
		fcpu=$(result postgres_r floor)
		tcpu=$(result postgres_r traced)
		ftot=$(result pgbpf_total floor)
		ttot=$(result pgbpf_total traced)
		goal() { # goal TEXT MET-AWK-EXPRESSION
			if [ -z "$3" ]; then
				echo "- $1: not measured"
			elif awk "BEGIN { exit !($2) }"; then
				echo "- $1: met ($3)"
			else
				echo "- $1: not met ($3)"
			fi
		}
		echo
		echo "latsnap's own CPU during the pgbench runs (no outlier: nothing slow), % of one CPU, medians:"
		echo
		echo "| configuration | latsnap's CPU |"
		echo "|---|---:|"
		for cfg in $PG_CONFIGS; do
			v=$(result pg_latcpu "$cfg")
			[ -n "$v" ] && echo "| $cfg | $(fmt "$v" %.2f)% |"
		done
		echo
		# run_goals CPU-RATIO BPF-TOTAL: the three goals every configuration of issue 18 has.
		run_goals() {
			goal "CPU per transaction ≥ 0.95× untraced" "${1:-0} >= 0.95" "${1:+$(fmt "$1" %.3f)×}"
			goal "CPU per transaction ≥ 0.98× the floor's" \
				"${1:-0} >= 0.98 * ${fcpu:-1}" "${1:+$(awk -v t="$1" -v f="${fcpu:-0}" 'BEGIN { printf "%.3f×", f ? t / f : 0 }')}"
			goal "BPF ns per transaction ≤ 1.5× the floor's" "${2:-0} <= 1.5 * ${ftot:-0}" \
				"${2:+$(awk -v t="$2" -v f="${ftot:-0}" 'BEGIN { printf "%.0f against %.0f ns, %.2f×", t, f, f ? t / f : 0 }')}"
		}
		echo "Goals (issue 18), snapshots on:"
		echo
		run_goals "$tcpu" "$ttot"
		lcpu=$(result pg_latcpu traced)
		goal "latsnap's own CPU while nothing is slow ≤ 1% of one CPU" "${lcpu:-100} <= 1" "${lcpu:+$(fmt "$lcpu" %.2f)%}"
		atot=$(result pgbpf_total all)
		echo
		echo "Goals (issue 18), with -a (every thread of the machine tracked, pgbench's too):"
		echo
		run_goals "$(result postgres_r all)" "$atot"
		echo
		echo "BPF run time per transaction, per program (kernel.bpf_stats_enabled, which adds ~35 ns a run), medians:"
		echo
		echo "| program | floor: runs per txn | floor: ns per run | snapshots on: runs per txn | snapshots on: ns per run | --context sched | --context none | -a | --no-snapshot: ns per run |"
		echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
		for prog in sys_enter sys_exit sched_switch sched_waking sched_exit sched_process_fork sched_process_exec sched_process_exit block_rq_issue block_rq_complete; do
			fr=$(result pgbpf_runs "floor:empty_$prog")
			fn=$(result pgbpf_ns "floor:empty_$prog")
			tr=$(result pgbpf_runs "traced:ls_$prog")
			tn=$(result pgbpf_ns "traced:ls_$prog")
			nn=$(result pgbpf_ns "nosnap:ls_$prog")
			sn=$(result pgbpf_ns "ctxsched:ls_$prog")
			zn=$(result pgbpf_ns "ctxnone:ls_$prog")
			an=$(result pgbpf_ns "all:ls_$prog")
			[ -z "$fr$tr" ] && continue
			echo "| $prog | ${fr:+$(fmt "$fr" %.1f)} | ${fn:+$(fmt "$fn" %.1f)} | ${tr:+$(fmt "$tr" %.1f)} | ${tn:+$(fmt "$tn" %.1f)} | ${sn:+$(fmt "$sn" %.1f)} | ${zn:+$(fmt "$zn" %.1f)} | ${an:+$(fmt "$an" %.1f)} | ${nn:+$(fmt "$nn" %.1f)} |"
		done
		echo "| total ns per transaction | ${ftot:-} | | ${ttot:-} | | $(result pgbpf_total ctxsched) | $(result pgbpf_total ctxnone) | ${atot:-} | $(result pgbpf_total nosnap) |"
		echo
		# issue 48: the floor and latsnap side by side per hook, in one run, as the issue's table.
		echo "Per hook, latsnap (snapshots on) against the floor (empty programs), ns per transaction = runs per"
		echo "transaction x ns per run; the total is every program's:"
		echo
		echo "| hook | runs per txn | latsnap ns/run | empty ns/run | latsnap ns per txn | empty ns per txn | --exact-start ns/run |"
		echo "|---|---:|---:|---:|---:|---:|---:|"
		for prog in sys_enter sys_exit sched_switch sched_waking; do
			fr=$(result pgbpf_runs "floor:empty_$prog")
			fn=$(result pgbpf_ns "floor:empty_$prog")
			tr=$(result pgbpf_runs "traced:ls_$prog")
			tn=$(result pgbpf_ns "traced:ls_$prog")
			xn=$(result pgbpf_ns "exact:ls_$prog")
			[ -z "$fr$tr" ] && continue
			echo "| $prog | ${tr:+$(fmt "$tr" %.1f)} | ${tn:+$(fmt "$tn" %.0f)} | ${fn:+$(fmt "$fn" %.0f)} |" \
				"${tr:+$(awk -v r="$tr" -v n="${tn:-0}" 'BEGIN { printf "%.0f", r * n }')} |" \
				"${fr:+$(awk -v r="$fr" -v n="${fn:-0}" 'BEGIN { printf "%.0f", r * n }')} |" \
				"${xn:+$(fmt "$xn" %.0f)} |"
		done
		if [ -n "${ttot:-}" ] && [ -n "${ftot:-}" ]; then
			xtot=$(result pgbpf_total exact)
			echo "| all | | | | $(fmt "$ttot" %.0f) ($(awk -v t="$ttot" -v f="$ftot" 'BEGIN { printf "%.2fx", (f > 0 ? t / f : 0) }')) | $(fmt "$ftot" %.0f) | ${xtot:+$(fmt "$xtot" %.0f) ($(awk -v t="$xtot" -v f="$ftot" 'BEGIN { printf "%.2fx", (f > 0 ? t / f : 0) }'))} |"
		fi
		echo
		echo "Connections: \`pgbench -C -c 1 -T $PG_CONN_SECONDS\` running \`select 1\`, a new connection (a fork of the"
		echo "postmaster, preloaded when traced) for each; pgbench's average connection time, median of the runs."
		echo
		echo "| configuration | connection time (ms) | − untraced (ms) | each run (ms) |"
		echo "|---|---:|---:|---|"
		base=$(result pgconn untraced)
		for cfg in untraced traced; do
			v=$(result pgconn "$cfg")
			label=$([ "$cfg" = traced ] && echo "connections, latsnap record -t 200ms" || echo "connections, no tracing")
			runs=$(awk -v c="$cfg" '$1 == "pgconn" && $2 == c { printf "%s%.2f", sep, $3; sep = ", " }' "$RESULTS")
			if [ -z "$v" ]; then
				echo "| $label | $(why pgconn "$cfg") | | |"
			elif [ -n "$base" ]; then
				echo "| $label | $(fmt "$v" %.2f) | $(awk -v v="$v" -v b="$base" 'BEGIN { printf "%+.2f", v - b }') | $runs |"
			else
				echo "| $label | $(fmt "$v" %.2f) | — | $runs |"
			fi
		done
		if [ -s "$TMP/pg-totals" ]; then
			echo
			echo "latsnap's totals in the traced runs:"
			echo
			sed 's/^/    /' "$TMP/pg-totals"
		fi
	fi
	if has 4; then
		echo
		echo "## 4. The recorder: $REC_N outliers of 300 ms, 450 ms apart, \`record -t 200ms\` (default --post 100ms, --buffer-size 4M)"
		echo
		echo "| measure | value |"
		echo "|---|---:|"
		row() { # row LABEL VALUE-OR-EMPTY WHY
			if [ -n "$2" ]; then echo "| $1 | $2 |"; else echo "| $1 | $3 |"; fi
		}
		lat=$(result rec_latency all)
		latmax=$(awk '$1 == "rec_latency" { print $3 }' "$RESULTS" | sort -g | tail -n 1)
		row "outlier's end to its summary.json on disk, median (ms)" "$([ -n "$lat" ] && fmt "$lat" %.1f)" "failed: no snapshot"
		row "outlier's end to its summary.json on disk, max (ms)" "$([ -n "$latmax" ] && fmt "$latmax" %.1f)" "failed: no snapshot"
		took=$(result rec_took all)
		row "one snapshot, as \`record -v\` times it, median (ms)" "$([ -n "$took" ] && fmt "$took" %.1f)" "failed: no snapshot timing"
		size=$(result rec_size all)
		row "snapshot on disk, median (KiB)" "$([ -n "$size" ] && fmt "$size" %.0f)" "failed: no snapshot"
		row "snapshots written / outliers seen / in a summary.json / skipped" "$(find "$REC_DIR" -name summary.json 2>/dev/null | wc -l) / $(echo "$REC_TOTALS" | awk '{ print $2 }') / $REC_IN / $(echo "$REC_TOTALS" | awk '{ print $6 }')" ""
		cpu=$(result rec_cpu all)
		row "latsnap's CPU while recording (s, over ${REC_WALL:-?} ms)" "$([ -n "$cpu" ] && echo "$cpu ($(awk -v c="$cpu" -v w="${REC_WALL:-0}" 'BEGIN { printf "%.1f%%", w ? 100 * c * 1000 / w : 0 }') of one CPU)")" "failed: latsnap did not start"
		rss=$(result rec_rss all)
		row "latsnap's peak RSS (MiB)" "$([ -n "$rss" ] && awk -v r="$rss" 'BEGIN { printf "%.1f", r / 1024 }')" "failed: latsnap did not start"
		echo
		echo "latsnap: \`${REC_TOTALS:-no totals line}\`"
	fi
	if has 5; then
		echo
		echo "## 5. Capture under bursts: 32 threads nap 100 ms at once, $BURST_ROUNDS times, 300 ms apart, \`record -t 50ms\`"
		echo
		echo "| measure | value |"
		echo "|---|---:|"
		if [[ $BURST_TOTALS =~ ^latsnap:\ ([0-9]+)\ outliers,\ ([0-9]+)\ snapshots,\ ([0-9]+)\ skipped,\ ([0-9]+)\ lost ]]; then
			b_out=${BASH_REMATCH[1]} b_snap=${BASH_REMATCH[2]} b_skip=${BASH_REMATCH[3]} b_lost=${BASH_REMATCH[4]}
			echo "| outliers expected (threads × rounds) | $((32 * BURST_ROUNDS)) |"
			echo "| outliers latsnap saw | $b_out |"
			echo "| snapshots | $b_snap |"
			echo "| outliers in a summary.json | $BURST_IN |"
			echo "| counted as skipped (totals line; sum of summary.json \"skipped\") | $b_skip; $BURST_SKIPPED_JSON |"
			echo "| lost in the kernel | $b_lost |"
			echo "| unaccounted (seen − in a summary − skipped) | $((b_out - BURST_IN - b_skip)) |"
			echo "| share of outliers in a summary | $(awk -v i="$BURST_IN" -v o="$b_out" 'BEGIN { printf o ? "%.1f%%" : "n/a", 100 * i / o }') |"
		else
			echo "| outliers in a summary.json | failed: no totals line: $(tail -n 1 "$BURST_ERR") |"
		fi
	fi
	if has 6; then
		echo
		echo "## 6. The preload library's unwind per signal (user_stack.unwind_ns): $NAPS outliers per row, 5 ms naps, \`record -t 2ms\`, code without frame pointers"
		echo
		echo "| stack | median (µs) | p90 (µs) | max (µs) | frames | signals |"
		echo "|---|---:|---:|---:|---:|---:|"
		for depth in 0 50; do
			label=$([ "$depth" = 0 ] && echo "shallow stack" || echo "deep stack ($depth more frames)")
			if [ -s "$TMP/unwind-$depth" ]; then
				# frames: the most frequent depth (a few signals land in other syscalls).
				sort -k2 -n "$TMP/unwind-$depth" | awk -v l="$label" '{ n[$1]++; v[NR] = $2 } END {
					for (d in n) { if (n[d] > best) { best = n[d]; f = d } }
					printf "| %s | %.1f | %.1f | %.1f | %d | %d |\n", l, v[int((NR + 1) / 2)] / 1e3,
						v[int(NR * 0.9 + 0.5)] / 1e3, v[NR] / 1e3, f, NR }'
			else
				echo "| $label | failed: no unwound stack in the outliers | | | | |"
			fi
		done
	fi
	if has 7; then
		echo
		echo "## 7. The stall scan (\`record --hang\`): $STALL_SECONDS s of \`record -p PID --hang 250ms\` (or -a), a scan every 62 ms"
		echo
		echo "A BPF task iterator visits the threads of each tracked process (every task with -a); a thread is"
		echo "handed over when it has waited longer than the threshold. Nothing runs on the threads' own hooks."
		echo "\"CPU at --hang 1s\" is one scan's time every 250 ms (the default --hang with -t 50ms), in % of"
		echo "one CPU (a scan taking more than 1% of its period makes the period longer)."
		echo
		echo "| threads | tasks on the machine | scans | µs per scan (mean) | µs (max) | threads handed over per scan | CPU at --hang 1s |"
		echo "|---|---|---:|---:|---:|---:|---:|"
		for tag in base untracked all tracked; do
			case $tag in
			base) what="a sleeping process tracked" ;;
			untracked) what="a sleeping process tracked; idle threads of another, untracked" ;;
			all) what="-a: every thread tracked; idle threads (waiting since before: left out)" ;;
			*) what="idle threads tracked (waiting since before: followed, not reported)" ;;
			esac
			if [ -s "$TMP/stall-$tag" ]; then
				awk -v t="$(cat "$TMP/stall-$tag.tasks")" -v w="$what" '{
					for (i = 1; i <= NF; i++) {
						if ($(i + 1) == "scans,") n = $i
						if ($(i + 1) == "us" && $(i + 2) == "each") m = $i
						if ($(i + 1) == "us" && $(i + 2) == "at") x = $i
						if ($(i + 1) == "threads") h = $i
					}
					printf "| %s | %d | %d | %.1f | %.1f | %.0f | %.3f%% |\n", w, t, n, m, x,
						n ? h / n : 0, m / (100 * m > 250000 ? 100 * m : 250000) * 100 }' "$TMP/stall-$tag"
			else
				echo "| $what | failed: no stall totals (see $TMP/stall-$tag.err) | | | | | |"
			fi
		done
	fi
	if has 8; then
		echo
		echo "## 8. A request probe pair (\`record --request uprobe:PATH:request_op\`, its entry and return), $CALLS_N calls of a function that does nothing, median of $CALLS_ROUNDS rounds"
		echo
		echo "\"probes on, untracked\": latsnap runs with the probes attached, the calling process not tracked"
		echo "(the two uprobes' traps and an early return of the BPF program: the floor of any uprobe tool);"
		echo "\"tracked\": every call is a request of a tracked thread (its start and end taken)."
		echo
		echo "| configuration | ns per call | added ns per call (request) |"
		echo "|---|---:|---:|"
		cbase=$(result calls untraced)
		for cfg in untraced untracked tracked; do
			v=$(result calls "$cfg")
			case $cfg in
			untraced) label="calls, no probes" ;;
			untracked) label="probes on, untracked" ;;
			*) label="tracked: each call a request" ;;
			esac
			if [ -z "$v" ] || [ -z "$cbase" ]; then
				echo "| $label | not run | |"
			else
				echo "| $label | $(fmt "$v" %.0f) | $(awk -v v="$v" -v b="$cbase" 'BEGIN { printf "%+.0f", v - b }') |"
			fi
		done
	fi
	if has 9; then
		echo
		echo "## 9. The idle policy: \`record -a -t 50ms\` for ${MACHINE_SECONDS} s on this machine, idle but for two idle worker pools (3 workers and a pipe reader each, one started before latsnap, one after)"
		echo
		echo "| configuration | outliers reported as latency | waits judged idle | latsnap's CPU (s) |"
		echo "|---|---:|---:|---:|"
		for cfg in policy nopolicy; do
			case $cfg in
			policy) label="the idle policy (default)" ;;
			*) label="--include-idle (no idle list, no policy)" ;;
			esac
			echo "| $label | $(result machine "$cfg-outliers") | $(result machine "$cfg-idle") | $(result machine "$cfg-cpu") |"
		done
		echo
		echo "What the policy left as latency, by thread and cause:"
		echo
		jq -r '"- \(.comm) \(.syscall // "off-CPU") \(.duration_ns / 1e6 | floor) ms: \(.cause)"' \
			"$TMP/machine-policy.out" 2>/dev/null | sort | uniq -c | sort -rn | head -n 20 | sed 's/^ *//'
	fi
	if has 14; then
		echo
		echo "## 14. The flood: \`record -a -t 100ms\` with snapshots for ${MACHINE_SECONDS} s on this machine, idle (goal: no snapshot, no outlier of LTTng's or latsnap's own)"
		echo
		echo "| configuration | snapshots | bytes written | outliers | of LTTng's daemons and latsnap's processes |"
		echo "|---|---:|---:|---:|---:|"
		for cfg in alone second; do
			case $cfg in
			alone) label="alone" ;;
			*) label="beside a second \`latsnap record -a\` with snapshots" ;;
			esac
			echo "| $label | $(result flood "$cfg-snapshots") | $(result flood "$cfg-bytes") | $(result flood "$cfg-outliers") | $(result flood "$cfg-own") |"
		done
		echo
		echo "The outliers, by thread and cause:"
		echo
		cat "$TMP"/flood-*.out 2>/dev/null | jq -r '"- \(.comm) \(.syscall // "off-CPU") \(.duration_ns / 1e6 | floor) ms: \(.cause)"' 2>/dev/null |
			sort | uniq -c | sort -rn | head -n 20 | sed 's/^ *//'
	fi
	if has 10; then
		echo
		echo "## 10. The labelled set: \`record -t 50ms\` on programs with waits of known kind, each left idle ${LAB_IDLE_S} s (tests/labelled/README.md)"
		echo
		echo "| program | latency waits | found | filed idle | missed | outliers | on idle waits | precision | recall | idle threads in report |"
		echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		for p in $LAB_PROGRAMS; do
			r=$TMP/lab-$p/result.json
			if [ -s "$r" ] && ! grep -q "^labelled $p " "$NOTES"; then
				jq -r --arg p "$p" '"| \($p) | \(.tp + .fn) | \(.tp) | \(.filed_idle) | \(.missed) | \(.correct_outliers + .fp) | \(.fp) | \(.precision * 1000 | round / 1000) | \(.recall * 1000 | round / 1000) | \(.report_idle_threads | length) |"' "$r"
			else
				echo "| $p | $(why labelled "$p") | | | | | | | | |"
			fi
		done
		# shellcheck disable=SC2086
		ls "$TMP"/lab-*/result.json >/dev/null 2>&1 && jq -s -r '
			(map(.correct_outliers) | add) as $r | (map(.fp) | add) as $f |
			(map(.tp) | add) as $t | (map(.fn) | add) as $n |
			"| all | \($t + $n) | \($t) | \(map(.filed_idle) | add) | \(map(.missed) | add) | \($r + $f) | \($f) | \(if $r + $f > 0 then ($r / ($r + $f) * 1000 | round / 1000) else 1 end) | \(if $t + $n > 0 then ($t / ($t + $n) * 1000 | round / 1000) else 0 end) | \(map(.report_idle_threads | length) | add) |"' \
			"$TMP"/lab-*/result.json
		echo
		echo "Goal (issue 29): precision and recall >= 0.95, no idle thread in the report of an idle MariaDB, JVM or Go. The idle threads latsnap reported as latency:"
		echo
		for p in $LAB_PROGRAMS; do
			[ -s "$TMP/lab-$p/result.json" ] || continue
			jq -r --arg p "$p" '.report_idle_threads[] | "- \($p): \(.comm)[\(.tid)]"' "$TMP/lab-$p/result.json"
		done
	fi
	if has 11; then
		echo
		echo "## 11. The primitives of latsnap's BPF programs (bench/prims.bpf.c), each alone on the hook, median ns per run of $PRIMS_ROUNDS rounds"
		echo
		echo "kernel.bpf_stats' own clock reads are in every row: compare a row with its hook's empty program."
		echo "issue 31: a program's cost that its design requires is the sum of the primitives it must run."
		echo
		echo "| primitive | hook | ns per run | above the empty program |"
		echo "|---|---|---:|---:|"
		for v in $PRIMS; do
			hook=sys_enter
			[[ $v == switch_* ]] && hook=sched_switch
			base=$(result prims "${v%%_*}_empty")
			val=$(result prims "$v")
			case ${v#*_} in
			empty) label="an empty program (the floor)" ;;
			slot) label="the CPU's slot (array lookup, a store)" ;;
			clock) label="bpf_ktime_get_ns() into the CPU's slot" ;;
			jiffies) label="bpf_jiffies64() into the CPU's slot" ;;
			storage) label="a task-storage lookup (current)" ;;
			storage2) label="two task-storage lookups (prev, next)" ;;
			record) label="a context record (the slot's head, a ring entry, two comms)" ;;
			kstack) label="prev's kernel stack (bpf_get_task_stack)" ;;
			ustack) label="the user stack (bpf_get_stack, BPF_F_USER_STACK)" ;;
			*) label=$v ;;
			esac
			if [ -z "$val" ]; then
				echo "| $label | $hook | $(why prims "$v") | |"
			else
				echo "| $label | $hook | $(fmt "$val" %.0f) | $(awk -v v="$val" -v b="${base:-$val}" 'BEGIN { printf "%+.0f", v - b }') |"
			fi
		done
	fi
	if has 12; then
		echo
		echo "## 12. Evidence under a CPU limit: $LIMIT_NAPS naps of 60 ms (sleeper, preloaded) beside a busy loop in a cgroup allowed 5 ms of CPU per 500 ms, \`record -t 20ms\`, snapshots on"
		echo
		echo "The nap's thread comes back from its syscall into a throttled group: the preload library's"
		echo "handler may run a period later. Goal (issue 33): at least 99% of each, every miss flagged."
		echo
		ln=$(result limit naps)
		if [ -z "$ln" ]; then
			echo "$(why limit all)"
		else
			echo "| measure | outliers | share |"
			echo "|---|---:|---:|"
			for m in naps unwound kstack summary; do
				v=$(result limit "$m")
				case $m in
				naps) label="nap outliers (clock_nanosleep of sleeper)" ;;
				unwound) label="with the user stack unwound by the preload library" ;;
				kstack) label="with their kernel stack" ;;
				*) label="in a summary.json" ;;
				esac
				echo "| $label | ${v:-0} | $(awk -v v="${v:-0}" -v n="$ln" 'BEGIN { printf n ? "%.1f%%" : "n/a", 100 * v / n }') |"
			done
			if [ -s "$TMP/limit.flags" ]; then
				echo
				echo "The misses' flags: $(paste -sd';' "$TMP/limit.flags")."
			fi
		fi
	fi
	if has 13; then
		echo
		echo "## 13. Evidence with every CPU saturated: $SAT_NAPS naps of 60 ms (sleeper, preloaded), \`record -t 20ms\`, snapshots on, stress-ng spinning on every CPU"
		echo
		echo "latsnap and the sleeper at nice 0. normal: the spinners at nice 0 too; high: at nice -15;"
		echo "fifo1: one SCHED_FIFO spinner more, on CPU 0; rt: SCHED_FIFO on every CPU (RT throttling"
		echo "leaves the rest 5%). Goal (issue 33): at least 99% of each, every miss flagged."
		echo
		echo "| spinners | run (s) | nap outliers | unwound user stack | kernel stack | in a summary.json | the misses' flags |"
		echo "|---|---:|---:|---:|---:|---:|---|"
		for c in $SAT_CONFIGS; do
			ln=$(result "sat-$c" naps)
			if [ -z "$ln" ]; then
				echo "| $c | $(why "sat-$c" all) | | | | | |"
				continue
			fi
			row="| $c | $(fmt "$(result "sat-$c" seconds)" "%.0f" | awk '{ printf "%.1f", $1 / 1000 }') | $ln"
			for m in unwound kstack summary; do
				v=$(result "sat-$c" "$m")
				row="$row | ${v:-0} ($(awk -v v="${v:-0}" -v n="$ln" 'BEGIN { printf n ? "%.1f%%" : "n/a", 100 * v / n }'))"
			done
			echo "$row | $(paste -sd';' "$TMP/sat-$c.flags" 2>/dev/null) |"
		done
	fi
} >"$TMP/bench.md"

mkdir -p "$(dirname "$BENCH_OUT")"
cp "$TMP/bench.md" "$BENCH_OUT"
cat "$BENCH_OUT"
