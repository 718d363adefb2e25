#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Idle is not latency: threads waiting *for* work are counted apart, not reported as outliers.
#  a) The labelled set: workpool (workers waiting on a condition variable for jobs, a reader
#     waiting on a pipe for input: idle; each job's mutex wait: latency), preloaded and not,
#     and sleeper, pipewait, mutexwait (latency only). Every span the workloads log is labelled
#     by what they did; the test counts latency reported and idle reported, and states precision
#     and recall.
#  b) The idle waits are not lost: the totals line counts them, stderr and summary.json list
#     them per thread and place; --include-idle and the rules (`idle`, `!idle`) override.
#  c) Redis 7, idle under record: no outlier; DEBUG SLEEP 0.3: that one, a requested sleep.
#  d) The machine with -a: workpools started before and after latsnap, idle: at most one
#     outlier reported as latency on the whole machine.
set -u
. "$(dirname "$0")/lib.sh"

require_record workpool sleeper pipewait mutexwait
require redis-server redis-cli

no_ust_wait
T=50ms
MIN_NS=65000000 # spans this long are outliers for sure (the threshold is 50 ms)

# spans LOG: the workload's logged waits of MIN_NS or more as JSON lines
# {"label": "latency"|"idle", "tid", "start", "end"}.
spans() { wl_spans "$1" "$MIN_NS" 'lock|read|nap'; }

# score LOG OUT: "TP FN FP TN" of the spans of LOG against the outliers of OUT: a span is
# reported when an outlier of its thread overlaps it.
score() {
	spans "$1" >"$TMPD/spans.json"
	wl_score "$TMPD/spans.json" "$2"
}

TP=0 FN=0 FP=0 TN=0
# tally NAME LOG OUT: adds the score of a run to the labelled set's, and checks it: every latency
# span reported, no idle span.
tally() {
	local tp fn fp tn
	read -r tp fn fp tn <<<"$(score "$2" "$3")"
	diag "$1: latency reported $tp, missed $fn; idle reported $fp, left out $tn"
	is "$fn" 0 "$1: every latency span is an outlier"
	is "$fp" 0 "$1: no idle span is an outlier"
	[ "$tp" -gt 0 ] 2>/dev/null || fail "$1: the run has latency spans to find ($tp)"
	TP=$((TP + ${tp:-0})) FN=$((FN + ${fn:-0})) FP=$((FP + ${fp:-0})) TN=$((TN + ${tn:-0}))
}

# --- a) the labelled set -----------------------------------------------------------------------
record_snap pool -t $T -o "$TMPD/pool.d" -- "$WL/workpool" 2 4 250 120
is "$RC" 0 "workpool preloaded: exit 0"
dump_outliers "$TMPD/pool.out"
tally "workpool preloaded" "$TMPD/pool.log" "$TMPD/pool.out"
SEL='select(.comm == "wp_worker" and .syscall == "futex")'
is "$(jcount "$TMPD/pool.out" "$SEL")" 4 "workpool preloaded: the 4 jobs' mutex waits, no other futex outlier"
is "$(jq -s -r "[.[] | $SEL | .cause] | unique | join(\",\")" "$TMPD/pool.out")" \
	"Userspace lock contention (pthread mutex)" "workpool preloaded: each named lock contention"
is "$(jq -s -r "[.[] | $SEL | any(.user_stack.frames[]?; .symbol == \"take_resource\")] | all" "$TMPD/pool.out")" \
	true "workpool preloaded: each one's user stack holds take_resource"
is "$(jcount "$TMPD/pool.out" 'select(.comm == "wp_reader")')" 0 "workpool preloaded: no outlier of the pipe reader"

# b) what is said of the idle waits.
IDLE_SPANS=$(spans "$TMPD/pool.log" | grep -c '"idle"')
N_IDLE=$(sed -nE 's/^latsnap: [0-9]+ outliers, .*\), ([0-9]+) idle$/\1/p' "$TMPD/pool.err")
between "${N_IDLE:-x}" "$IDLE_SPANS" 100 "the totals line counts the idle waits (${N_IDLE:-none}; $IDLE_SPANS logged of 65 ms or more)"
grep -qE '^latsnap:   wp_worker\[[0-9]+\] [0-9]+ x pthread_cond_wait in wait_for_job \(futex\), ' "$TMPD/pool.err"
ok $? "stderr lists the workers' idle waits: pthread_cond_wait in wait_for_job"
grep -qE '^latsnap:   wp_reader\[[0-9]+\] [0-9]+ x [^ ]*read[^ ]* in wait_for_input \(read\), ' "$TMPD/pool.err"
ok $? "stderr lists the reader's idle waits: read in wait_for_input" ||
	diag_file "$TMPD/pool.err" "  stderr: "
SUMS=$(find "$TMPD/pool.d" -name summary.json | sort)
[ -n "$SUMS" ] || fail "workpool preloaded: snapshots were written"
# shellcheck disable=SC2086
between "$(jq -s '[.[].idle[]? | .count] | add // 0' $SUMS)" 1 "${N_IDLE:-0}" \
	"summary.json: the snapshots' idle lists (each wait in the first snapshot after it: not those after the last one) add up to at most the totals line"
# shellcheck disable=SC2086
is "$(jq -s -r '[.[].idle[]? | select(.comm == "wp_worker") | .site] | unique | join(",")' $SUMS)" \
	"pthread_cond_wait in wait_for_job (futex)" "summary.json: the workers' place"
# shellcheck disable=SC2086
is "$(jq -s '[.[].idle[]? | (.pid | type) == "number" and (.tid | type) == "number" and
	(.total_ns >= 50000000 * .count)] | all' $SUMS)" true \
	"summary.json: each idle entry has its pid, tid and a total of at least count x the threshold"
run_latsnap "$TMPD/rep.txt" "$TMPD/rep.err" report "$TMPD/pool.d"
is "$RC" 0 "report over the snapshots: exit 0"
grep -q 'wait_for_job' "$TMPD/rep.txt"
ok $? "report shows the idle waits apart" || diag_file "$TMPD/rep.txt" "  report: "

WL_LOG=$TMPD/nopre.log record_json "$TMPD/nopre.out" "$TMPD/nopre.err" -t $T --no-preload -- \
	"$WL/workpool" 2 4 250 120
dump_outliers "$TMPD/nopre.out"
tally "workpool, no preload (frame pointers only)" "$TMPD/nopre.log" "$TMPD/nopre.out"
like "$(jq -s -r "[.[] | $SEL | .cause] | unique | join(\",\")" "$TMPD/nopre.out")" \
	'^Userspace lock contention \((pthread mutex|futex)\)$' "no preload: each named lock contention"

WL_LOG=$TMPD/sl.log record_json "$TMPD/sl.out" "$TMPD/sl.err" -t $T -- "$WL/sleeper" 120 2 100
tally "sleeper" "$TMPD/sl.log" "$TMPD/sl.out"
WL_LOG=$TMPD/pw.log record_json "$TMPD/pw.out" "$TMPD/pw.err" -t $T -- "$WL/pipewait" 120
tally "pipewait" "$TMPD/pw.log" "$TMPD/pw.out"
WL_LOG=$TMPD/mw.log record_json "$TMPD/mw.out" "$TMPD/mw.err" -t $T -- "$WL/mutexwait" 150
tally "mutexwait" "$TMPD/mw.log" "$TMPD/mw.out"

PREC=$(awk -v tp=$TP -v fp=$FP 'BEGIN { printf "%.3f", tp + fp ? tp / (tp + fp) : 0 }')
RECALL=$(awk -v tp=$TP -v fn=$FN 'BEGIN { printf "%.3f", tp + fn ? tp / (tp + fn) : 0 }')
diag "labelled set: $TP latency reported, $FN missed, $FP idle reported, $TN idle left out:" \
	"precision $PREC, recall $RECALL"
is "$PREC $RECALL" "1.000 1.000" "labelled set: precision and recall 1"

# --- b) overrides ------------------------------------------------------------------------------
WL_LOG=$TMPD/inc.log record_json "$TMPD/inc.out" "$TMPD/inc.err" -t $T --include-idle -- \
	"$WL/workpool" 2 2 250 120
between "$(jcount "$TMPD/inc.out" 'select(.comm == "wp_worker" and (.cause == "Waiting on a condition variable"))')" \
	2 20 "--include-idle: the condition-variable waits are outliers, named as such"
grep -qE '\), 0 idle$' "$TMPD/inc.err"
ok $? "--include-idle: nothing is idle"

RULES=$TMPD/idle.rules
{
	"$LATSNAP" rules
	echo "500 comm:wp_reader = !idle"
	echo "500 user:take_resource = idle"
} >"$RULES"
WL_LOG=$TMPD/ru.log record_json "$TMPD/ru.out" "$TMPD/ru.err" -t $T --rules "$RULES" -- \
	"$WL/workpool" 2 2 250 120
between "$(jcount "$TMPD/ru.out" 'select(.comm == "wp_reader" and .cause == "Reading from a pipe")')" \
	2 20 "rules: '!idle' for wp_reader: its pipe reads are outliers"
is "$(jcount "$TMPD/ru.out" 'select(.comm == "wp_worker" and .syscall == "futex")')" 0 \
	"rules: 'idle' for user:take_resource: the mutex waits are not"
echo "500 comm:wp_* futex:sometimes = idle" >"$TMPD/bad.rules"
RECORD_EXPECT_RC=2 record_json "$TMPD/bad.out" "$TMPD/bad.err" -t $T --rules "$TMPD/bad.rules" -- true
is "$RC" 2 "a bad futex: matcher is a usage error"
grep -q 'bad.rules:1' "$TMPD/bad.err"
ok $? "the error names the file and line" || diag_file "$TMPD/bad.err" "  stderr: "

# --- c) Redis ----------------------------------------------------------------------------------
RD=$TMPD/redis
mkdir -p "$RD"
# Its binary and libraries read once before: a first start on a fresh machine reads them from
# disk inside execve (a real wait, 100 ms seen, but not what this part counts).
redis-server --version >/dev/null 2>&1
timeout -k 5 60 "$LATSNAP" record --json -t 100ms -o "$RD/snaps" -- redis-server --port 0 \
	--unixsocket "$RD/sock" --save '' --appendonly no --dir "$RD" --logfile "$RD/redis.log" \
	--enable-debug-command local >"$RD/out" 2>"$RD/err" &
L=$!
track_bg "$L"
for _ in $(seq 100); do
	redis-cli -s "$RD/sock" ping >/dev/null 2>&1 && break
	sleep 0.1
done
is "$(redis-cli -s "$RD/sock" ping 2>&1)" PONG "redis: the server runs under latsnap record"
sleep 4 # idle: its background threads wait for jobs
T_SLEEP=$(awk '{ printf "%.0f", $1 * 1e9 }' /proc/uptime)
redis-cli -s "$RD/sock" debug sleep 0.3 >/dev/null 2>&1
sleep 1.5
redis-cli -s "$RD/sock" set k v >/dev/null
redis-cli -s "$RD/sock" shutdown nosave >/dev/null 2>&1
wait "$L"
is "$?" 0 "redis: latsnap record exits 0"
dump_outliers "$RD/out"
is "$(jcount "$RD/out")" 1 "redis: one outlier in all: DEBUG SLEEP's"
is "$(jfirst "$RD/out" 'select(.comm == "redis-server")' '.cause')" '"Requested sleep (nanosleep)"' \
	"redis: the main thread's requested sleep"
between "$(jfirst "$RD/out" 'select(.comm == "redis-server")' '.duration_ns')" 290000000 450000000 \
	"redis: ~300 ms"
between "$(jfirst "$RD/out" 'select(.comm == "redis-server")' '.start_ns')" \
	$((T_SLEEP - 2000000000)) $((T_SLEEP + 1000000000)) "redis: when DEBUG SLEEP ran"
grep -qE '^latsnap:   bio_[a-z_]+\[[0-9]+\] ' "$RD/err"
ok $? "redis: its bio threads' waits are listed idle" || diag_file "$RD/err" "  stderr: "

# --- d) the machine, with -a --------------------------------------------------------------------
# One pool idle since before latsnap (where tracking finds it waiting), one started after (the
# first waits of new threads); neither ever gets a job within the run.
WL_LOG=$TMPD/m1.log "$WL/workpool" 3 0 12000 0 &
M1=$!
track_bg "$M1"
sleep 0.5 # before latsnap starts: not on the machine it records
timeout -k 5 60 "$LATSNAP" record -v --no-snapshot --json -a -t $T -d 8s >"$TMPD/all.out" \
	2>"$TMPD/all.err" &
L=$!
track_bg "$L"
# Until it tracks, polled every 20 ms: this script's own sleeps are below the threshold (a
# `sleep 1` here would be a requested sleep on the machine, latency by the policy).
for _ in $(seq 1500); do
	grep -q 'record: tracking' "$TMPD/all.err" && break
	sleep 0.02
done
WL_LOG=$TMPD/m2.log "$WL/workpool" 3 0 9000 0 &
M2=$!
track_bg "$M2"
wait "$L"
is "$?" 0 "-a: latsnap record exits 0"
dump_outliers "$TMPD/all.out"
# A wait reported while it lasted and again at its end is one wait.
between "$(jq -s '[.[] | [.tid, .start_ns]] | unique | length' "$TMPD/all.out" 2>/dev/null)" 0 1 \
	"-a on the machine: at most one wait reported as latency"
is "$(jcount "$TMPD/all.out" 'select(.comm == "wp_worker" or .comm == "wp_reader")')" 0 \
	"-a: none of the idle pools"
N_IDLE=$(sed -nE 's/^latsnap: [0-9]+ outliers, .*\), ([0-9]+) idle$/\1/p' "$TMPD/all.err")
between "${N_IDLE:-x}" 1 100000 "-a: the idle waits counted apart (${N_IDLE:-none})"
kill "$M1" "$M2" 2>/dev/null
wait "$M1" "$M2" 2>/dev/null

done_testing
