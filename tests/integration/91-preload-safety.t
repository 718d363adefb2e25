#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The preload library must never be the reason an application misbehaves, and its registration
# prctl (which any process can call) must never give anyone a hold on another process:
#  a) an application that installs its own handler for latsnap's signal gets no signal of
#     latsnap's from then on (signal-displaced), and says so once on stderr;
#  b) a thread that blocks the signal is not sent it (signal-blocked), so nothing is left pending;
#  c) in secure execution (a setuid program run by uid 65534) the library does nothing at all;
#  d) a process can register only itself: an unprivileged rogue naming a victim's pid anywhere in
#     the prctl changes nothing for the victim, and a handler it has not installed (or SIG_DFL)
#     is refused;
#     without the library (--no-preload) nothing is ever signalled;
#  e) 64 threads signalled at every 2 ms nap, next to threads in malloc (mmap/munmap), dlopen and
#     fork, keep their memory, errno and results, and every stack unwinds;
#  f) a thread signalled while it holds an application lock that another thread, holding the
#     loader's lock inside dl_iterate_phdr(), waits for: the handler must not wait for the loader
#     (it did, and the check-asan storm hung the same way through malloc's lock and dlclose);
#  g) the library brings no tracer into the application: no lttng-ust mapped, no thread of its;
#  h) a signal that lands while another thread forks is not unwound (the forking thread may hold
#     libunwind's locks), but answered: each nap's stack names its own function, never the next
#     nap's (they were taken for the unanswered signal's outlier: 28 of 151 naps before). And a
#     signal sent while the kernel writes the previous one's frame is answered by its own handler
#     after the first: the main thread faults on its stack, which the fork of 256 MB holds for
#     more than the threshold, and is signalled for that sleep before the first handler runs (the
#     second report was refused, and every later report went to the outlier before its own: 38
#     to 81 of ~180 naps named the other nap under stress-ng, 9 runs of 10).
# The unwound stacks are checked where latsnap puts them, in the outlier's JSON (user_stack of
# source "unwind"): the library reports them through the kernel and emits nothing to LTTng, so
# none of this needs a trace.
set -u
. "$(dirname "$0")/lib.sh"

require_root
require jq cc setpriv
require_latsnap
require_workloads ownhandler sigblocker sigstate rogue stress sleeper loaderlock forknap
[ -f "$BUILD/liblatsnap.so" ] || skip_all "$BUILD/liblatsnap.so not built (run make)"

NOBODY=65534
SIG=60
# uid 65534 must reach its logs and the setuid binary below TMPD.
chmod 711 "$TMPD"
as_nobody() { setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$@"; }
# A log file uid 65534 can append to.
nobody_file() { : >"$1" && chown $NOBODY:$NOBODY "$1"; }

# reg_count ERR PID: how many times stderr (-v) says PID registered (live, or found at start-up).
reg_count() {
	grep -c -E "latsnap: tracker: pid $2( \([^)]*\))? registered" "$1"
}

# reg_others ERR PID...: the registration lines about any other pid (other tests may run).
reg_others() {
	local err=$1 p re=''; shift
	for p in "$@"; do re="${re}|pid ${p}[ (]"; done
	grep -E 'latsnap: tracker: pid [0-9]+.* registered' "$err" | grep -v -E "${re#|}"
}

# unwound_count OUT FILTER: outliers FILTER selects that carry an unwound stack.
unwound_count() { jcount "$1" "$2 | select(.user_stack.source == \"unwind\")"; }

# record_v OUT ERR ARGS...: record_json for runs with -v, whose stderr on failure is shown without
# libbpf's chatter and the registrations.
record_v() {
	local out=$1 err=$2 t0
	shift 2
	t0=$(date +%s%N)
	timeout -k 5 "$LATSNAP_TIMEOUT" "$LATSNAP" record --no-snapshot --json "$@" >"$out" 2>"$err"
	RC=$?
	ELAPSED_MS=$((($(date +%s%N) - t0) / 1000000))
	if [ "$RC" != 0 ]; then
		diag "latsnap record --no-snapshot --json $* exited $RC after $ELAPSED_MS ms; its stderr, in part:"
		grep -v -E '^latsnap: libbpf:|registered through the preload library' "$err" | head -20 |
			while IFS= read -r line; do diag "  stderr: $line"; done
	fi
}

# signals_line ERR: the -v totals of signals sent to the preload library.
signals_line() { grep -m1 'signals to the preload library' "$1"; }

# bg_record OUT ERR ARGS...: `latsnap record --no-snapshot --json ARGS` in the background (BG),
# returns once it says it tracks every process that loads the library.
BG=
bg_record() {
	local out=$1 err=$2 i
	shift 2
	"$LATSNAP" record --no-snapshot --json "$@" >"$out" 2>"$err" &
	BG=$!
	track_bg "$BG"
	for ((i = 0; i < 300; i++)); do
		grep -qs 'tracking every process that loads' "$err" && return 0
		kill -0 "$BG" 2>/dev/null || break
		sleep 0.05
	done
	diag "latsnap record $* did not get ready; its stderr:"
	diag_file "$err" "  stderr: "
	return 1
}

# bg_record_stop: SIGINT, as a user would end it; RC is its exit status.
bg_record_stop() {
	local i
	kill -INT "$BG" 2>/dev/null
	for ((i = 0; i < 200; i++)); do
		kill -0 "$BG" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$BG" 2>/dev/null; then
		diag "latsnap record did not stop within 10 s of SIGINT"
		kill -KILL "$BG" 2>/dev/null
	fi
	wait "$BG"
	RC=$?
}

# Another latsnap running meanwhile (another test) tracks our registered workloads too: when its
# signal comes first, ours finds it pending and the outlier says signal-blocked. Our own runs carry
# this mark in their environment; a sampler notes the others, to explain such a failure.
export LATSNAP_T91_RUN=$$
(
	while :; do
		for p in $(pgrep -x latsnap); do
			tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "LATSNAP_T91_RUN=$$" ||
				echo "pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
		done
		sleep 0.2
	done
) >"$TMPD/others" 2>/dev/null &
track_bg $!
others() {
	[ -s "$TMPD/others" ] || return 0
	diag "  other latsnap processes ran during this test (their signal may have come first):"
	sort -u "$TMPD/others" | head -5 | while IFS= read -r line; do diag "    $line"; done
}

# naps_around PID NS: NAPS, the jq filter of PID's nanosleep outliers, and BEFORE and AFTER, those
# of them that started before and after NS (CLOCK_MONOTONIC); SPLIT_NS is NS.
naps_around() {
	SPLIT_NS=${2:-0}
	NAPS="select(.pid == ${1:-0} and (.syscall // \"\" | test(\"nanosleep\")))"
	BEFORE="$NAPS | select(.start_ns < ${2:-0})"
	AFTER="$NAPS | select(.start_ns > ${2:-0})"
}

# none_signalled_after TAG OUT PID WHEN FLAG MSG: the three naps AFTER ("three nanosleep outliers
# WHEN") say signalled: false, with a FLAG flag; BEFORE's nap has an unwound user stack and no
# outlier of PID that began after SPLIT_NS has one (test MSG). An outlier of the process's start
# (under a slow build, a loaded machine: its loader, its first page faults) may have one too:
# the library was in place then, its stack is the library's doing, as BEFORE's.
none_signalled_after() {
	local tag=$1 out=$2 pid=$3 when=$4 flag=$5 msg=$6
	is "$(jcount "$out" "$AFTER")" 3 "$tag) three nanosleep outliers $when"
	is "$(jq -s "[.[] | $AFTER | .signalled == false and (.flags | any(startswith(\"$flag\")))] | length > 0 and all" "$out")" \
		true "$tag) every outlier $when is signalled false with a $flag flag" ||
		dump_outlier_json "$out" "$AFTER | {start_ns, signalled, flags}"
	is "$(unwound_count "$out" "$BEFORE")/$(unwound_count "$out" "select(.pid == $pid and .start_ns > $SPLIT_NS)")" \
		1/0 "$msg" ||
		dump_outlier_json "$out" "select(.pid == $pid) | {start_ns, syscall, kind, signalled, user_stack: .user_stack.source, flags}"
}

T0=$(date +%s%N)

# --- a) the application installs its own handler for the signal ---------------------------------
T=$TMPD/a
mkdir -p "$T"
WL_LOG=$T/log record_json "$T/out" "$T/err" -- -t 30ms -- "$WL/ownhandler" 60 3 5
is "$RC" 0 "a) record -t 30ms -- ownhandler: exit 0"
PID=$(wl_log_get "$T/log" pid)
SWITCH=$(wl_log_get "$T/log" switch)
RAISED=$(wl_log_get "$T/log" raised)
HANDLED=$(wl_log_get "$T/log" handled)
ok '[ -n "$PID" ] && [ -n "$SWITCH" ] && [ -n "$RAISED" ]' "a) ownhandler ran (pid $PID) and logged its switch" ||
	diag_file "$T/log" "  log: "
is "$HANDLED" "$RAISED" "a) its handler ran exactly as often as it raised signal $SIG: latsnap sent it nothing"
is "$(wl_log_get "$T/log" from_kernel)" 0 "a) none of its handler's calls came from the kernel (si_code SI_KERNEL)"
is "$(grep -c -E "latsnap: tracker: pid ${PID:-x} \([^)]*\) installed its own handler for signal $SIG:" "$T/err")" 1 \
	"a) stderr says exactly once that it installed its own handler for signal $SIG" || diag_file "$T/err" "  stderr: "
naps_around "$PID" "$SWITCH"
is "$(jcount "$T/out" "$BEFORE")" 1 "a) one nanosleep outlier before the switch" || dump_outliers "$T/out"
is "$(jfirst "$T/out" "$BEFORE" .signalled)" true "a) the outlier before the switch is signalled" || others
none_signalled_after a "$T/out" "${PID:-0}" "after the switch" signal-displaced \
	"a) the nap before the switch has its unwound user stack, no outlier after it (none from the application's handler)"

# --- b) a thread that blocks the signal --------------------------------------------------------
T=$TMPD/b
mkdir -p "$T"
# One nap before blocking: a control, that the library unwinds when it may.
WL_LOG=$T/log record_v "$T/out" "$T/err" -v -t 30ms -- "$WL/sigblocker" 60 3 1
is "$RC" 0 "b) record -t 30ms -- sigblocker: exit 0"
PID=$(wl_log_get "$T/log" pid)
BLOCKED=$(wl_log_get "$T/log" blocked)
is "$(wl_log_get "$T/log" pending)" 0 "b) signal $SIG is not pending in the thread that blocks it" ||
	diag_file "$T/log" "  log: "
naps_around "$PID" "$BLOCKED"
is "$(jfirst "$T/out" "$BEFORE" .signalled)" true "b) control: the nap before blocking is signalled" ||
	{ dump_outliers "$T/out"; others; }
none_signalled_after b "$T/out" "${PID:-0}" "while blocked" signal-blocked \
	"b) the control's nap has its unwound user stack, no outlier while the signal is blocked"
diag "b) $(signals_line "$T/err")"

# --- c) secure execution -----------------------------------------------------------------------
T=$TMPD/c
mkdir -p "$T/sec"
chmod 755 "$T" "$T/sec"
# Linked against the library (LD_PRELOAD is not honoured in secure execution); an $ORIGIN rpath
# would be ignored there, an absolute one is not.
if cc -O2 -o "$T/sec/sigstate" "$ROOT/tests/workloads/sigstate.c" -I "$ROOT/tests/workloads" \
	-L "$BUILD" -Wl,--no-as-needed -llatsnap -Wl,-rpath,"$BUILD" -ldl 2>"$T/cc.err" &&
	chmod 4755 "$T/sec/sigstate"; then
	pass "c) built a setuid-root sigstate linked against liblatsnap.so"
	nobody_file "$T/log.nobody"
	if bg_record "$T/out" "$T/err" -v -t 50ms -d 30s; then
		WL_LOG=$T/log.nobody as_nobody "$T/sec/sigstate" 150
		RC_NOBODY=$?
		# The control: the same binary run by root is not in secure execution.
		WL_LOG=$T/log.root "$T/sec/sigstate" 150
		RC_ROOT=$?
		bg_record_stop
	else
		RC=1 RC_NOBODY=1 RC_ROOT=1
	fi
	is "$RC" 0 "c) latsnap record -v (no target) ends with 0 on SIGINT"
	PN=$(wl_log_get "$T/log.nobody" pid)
	PR=$(wl_log_get "$T/log.root" pid)
	is "$RC_NOBODY" 0 "c) setuid sigstate run by uid $NOBODY: exit 0"
	is "$(wl_log_get "$T/log.nobody" at_secure)" 1 "c) run by uid $NOBODY it is in secure execution (AT_SECURE 1)" ||
		diag_file "$T/log.nobody" "  log: "
	is "$(wl_log_get "$T/log.nobody" handler)" dfl "c) secure: the library installed no handler for signal $SIG"
	is "$(wl_log_get "$T/log.nobody" abi_sig)" 0 "c) secure: the library is loaded but did not register (abi sig 0)"
	is "$(reg_count "$T/err" "${PN:-x}")" 0 "c) secure: no registration of pid $PN"
	is "$(jcount "$T/out" "select(.pid == ${PN:-0})")" 0 "c) secure: no outlier for it (not tracked)" ||
		dump_outliers "$T/out"
	is "$RC_ROOT" 0 "c) control, run by root: exit 0"
	is "$(wl_log_get "$T/log.root" at_secure)/$(wl_log_get "$T/log.root" handler)/$(wl_log_get "$T/log.root" abi_sig)" \
		"0/other/$SIG" "c) control: not secure, the library's handler is in, registered for signal $SIG" ||
		diag_file "$T/log.root" "  log: "
	is "$(reg_count "$T/err" "${PR:-x}")" 1 "c) control: stderr says pid $PR registered" ||
		diag_file "$T/err" "  stderr: "
	is "$(jfirst "$T/out" "select(.pid == ${PR:-0} and (.syscall // \"\" | test(\"nanosleep\")))" .signalled)" true \
		"c) control: its nap is an outlier, signalled" || { dump_outliers "$T/out"; others; }
else
	fail "c) built a setuid-root sigstate linked against liblatsnap.so"
	diag_file "$T/cc.err" "  cc: "
	skip_tests 11 "no setuid sigstate"
fi

# --- d) isolation: a process registers only itself ---------------------------------------------
T=$TMPD/d
mkdir -p "$T"
chmod 755 "$T"
nobody_file "$T/log.rogue"
if bg_record "$T/out" "$T/err" -v -t 50ms -d 30s; then
	# The victim: root's, without the library, asleep while the rogue tries.
	env -u LD_PRELOAD WL_LOG="$T/log.victim" "$WL/sleeper" 700 1 &
	VPID=$!
	as_nobody env -u LD_PRELOAD WL_LOG="$T/log.rogue" "$WL/rogue" "$VPID" 100
	RC_ROGUE=$?
	wait "$VPID"
	RC_VICTIM=$?
	bg_record_stop
else
	RC=1 RC_ROGUE=1 RC_VICTIM=1 VPID=x
fi
RPID=$(wl_log_get "$T/log.rogue" pid)
is "$RC" 0 "d) latsnap record -v (no target) ends with 0 on SIGINT"
is "$RC_ROGUE" 0 "d) rogue (uid $NOBODY): exit 0"
is "$(wl_log_get "$T/log.rogue" victim)" "$VPID" "d) rogue aimed at the victim's pid $VPID"
is "$(awk '$1 == "prctl" { n++; if ($3 != -1 || $4 != 22) bad++ } END { print n + 0, bad + 0 }' "$T/log.rogue")" "19 0" \
	"d) all 19 of the rogue's prctl calls failed with EINVAL (the kernel knows no such option)" ||
	diag_file "$T/log.rogue" "  rogue: "
is "$(reg_count "$T/err" "$VPID")" 0 "d) the victim is never registered"
is "$(reg_count "$T/err" "${RPID:-x}")" 1 \
	"d) the rogue is registered once: its proper registration, not the SIG_DFL, wrong-handler or victim-pid ones" ||
	diag "$(grep -E "latsnap: tracker: pid ${RPID:-x}( \([^)]*\))? registered" "$T/err")"
OTHERS=$(reg_others "$T/err" "$VPID" "${RPID:-x}")
[ -z "$OTHERS" ] || diag "d) registrations of unrelated processes (other tests running?):" "$OTHERS"
is "$RC_VICTIM" 0 "d) the victim exits 0"
is "$(jcount "$T/out" "select(.pid == $VPID)")" 0 "d) no outlier for the victim (never tracked)" ||
	dump_outliers "$T/out"
is "$(jcount "$T/out" "select(.pid == ${RPID:-0})")" 1 "d) one outlier for the rogue (its own nap, once registered)" ||
	dump_outliers "$T/out"
is "$(jfirst "$T/out" "select(.pid == ${RPID:-0})" .signalled)" true "d) the rogue's outlier is signalled" ||
	{ dump_outliers "$T/out"; others; }
is "$(wl_log_get "$T/log.rogue" handled)/$(wl_log_get "$T/log.rogue" from_kernel)" 1/1 \
	"d) the rogue got that signal in its own handler, from the kernel, once"
QTID=$(wl_log_get "$T/log.rogue" quiet_tid)
is "$(jcount "$T/out" "select(.tid == ${QTID:-0})")" 0 "d) nothing from the rogue's quieted thread"

# Without the library, nothing is signalled and nothing registers.
WL_LOG=$T/log.np record_v "$T/out.np" "$T/err.np" -v -t 50ms --no-preload -- "$WL/sleeper" 100
PID=$(wl_log_get "$T/log.np" pid)
is "$RC" 0 "d) record --no-preload -- sleeper 100: exit 0"
is "$(jcount "$T/out.np" "select(.pid == ${PID:-0})")" 1 "d) --no-preload: one outlier" || dump_outliers "$T/out.np"
is "$(jfirst "$T/out.np" "select(.pid == ${PID:-0})" '[.signalled, (.flags | any(startswith("signal-")))]' | tr -d ' ')" \
	"[false,false]" "d) --no-preload: the outlier is not signalled, and no signal-* flag"
is "$(reg_count "$T/err.np" "${PID:-x}")" 0 "d) --no-preload: no registration"

# --- e) stress ---------------------------------------------------------------------------------
# stress_checks N LOG ERR OUT WORKERS: what the workload says of itself, and its unwound stacks.
stress_checks() {
	local n=$1 log=$2 err=$3 out=$4 workers=$5 role pid mine
	# The workload's watchdog ends a run that deadlocked (status 3) and names the stuck threads.
	if is "$(wl_log_get "$log" hung)" "" "$n: no thread stuck after the deadline (no deadlock)"; then
		is "$(awk '$1 == "worker" && $3 == "ok"' "$log" | wc -l)" "$workers" \
			"$n: all $workers workers ok (buffer checksum and errno intact, no nap cut short)" ||
			diag "$(awk '$1 == "worker" && $3 != "ok" { print "  " $0 " (iters sum_bad errno_bad eintr)" }' "$log" | head -10)"
		for role in malloc dlopen fork; do
			is "$(wl_log_get "$log" "$role")" ok \
				"$n: $role ok ($(wl_log_get "$log" "$role" 3) done, $(wl_log_get "$log" "$role" 4) failed)" ||
				diag "  $(grep "^why $role" "$log")"
		done
	else
		diag "  $(wl_log_get "$log" hung) threads stuck, $(wl_log_get "$log" hung 3) of them with signal $SIG blocked (inside the preload library's handler, or fork):"
		diag "$(awk '$1 == "stuck" { print "    " $0 }' "$log")"
		skip_tests 4 "$n: the stress deadlocked, its threads never reported"
	fi
	pid=$(wl_log_get "$log" pid)
	mine="select(.pid == ${pid:-0})"
	# Every stack the handlers reported is whole: nothing made a walk give up. (A stall's stack,
	# unwound from outside, has no status: the handler did not walk it.)
	is "$(jcount "$out" "$mine | select(.user_stack.source == \"unwind\" and (.user_stack.status // 0) != 0)")/$(jcount "$out" "$mine | select(.flags | any(startswith(\"user-stack-partial\")))")" \
		0/0 "$n: every unwound user stack went to its end (status 0, no user-stack-partial flag)" ||
		dump_outlier_json "$out" "$mine | select(.user_stack.status != 0 and .user_stack.status != null) | {tid, syscall, user_stack: {status: .user_stack.status, n: (.user_stack.frames | length)}, flags}"
	awk '$1 == "tid" { print $3, $2 }' "$log" >"$out.tids"
	diag "$n: $(signals_line "$err" | sed 's/^latsnap: //')"
	diag "$n: $(jcount "$out" "$mine | select(.user_stack.source == \"unwind\")") unwound stacks from $(jq -r "$mine | select(.user_stack.source == \"unwind\") | .tid" "$out" | sort -u | wc -l) threads; unwind_ns $(jq -r "$mine | .user_stack.unwind_ns // empty" "$out" | sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "min %d median %d max %d", v[1], v[int((NR + 1) / 2)], v[NR] }')"
	# Signalled, yet no stack: latsnap says why (too many waiting, or none within 200 ms, which
	# ring-buffer losses explain). Counted here, for the record.
	diag "$n: signalled without a stack: $(jq -r "$mine | select(.signalled) | .flags[] | select(startswith(\"no-unwound-stack\")) | .[0:70]" "$out" | sort | uniq -c | awk '{ $1 = $1 " x"; print }' | paste -sd';')"
	diag "$n: $(grep -m1 -E '^latsnap: [0-9]+ outliers' "$err" | sed 's/^latsnap: //')"
}

# role_syscalls OUT TIDS: "ROLE SYSCALL signalled" for each syscall outlier of the stress.
role_syscalls() {
	jq -r 'select(.kind == "syscall") | "\(.tid) \(.syscall) \(.signalled)"' "$1" 2>/dev/null |
		awk 'NR == FNR { r[$1] = $2; next } { role = r[$1]; sub(/^worker[0-9]+$/, "worker", role);
			print (role == "" ? "other" : role), $2, $3 }' "$2" -
}

T=$TMPD/e
mkdir -p "$T"
WL_LOG=$T/log1 record_v "$T/out1" "$T/err1" -v -t 1ms -- "$WL/stress" 3
is "$RC" 0 "e) record -t 1ms -- stress 3 (64 threads napping 2 ms): exit 0"
stress_checks "e) -t 1ms" "$T/log1" "$T/err1" "$T/out1" 64
NTIDS=$(jq -r "select(.pid == $(wl_log_get "$T/log1" pid | grep . || echo 0) and .user_stack.source == \"unwind\") | .tid" "$T/out1" |
	sort -u | awk 'NR == FNR { w[$1] = 1; next } w[$1]' <(awk '$1 == "tid" && $2 ~ /^worker/ { print $3 }' "$T/log1") - | wc -l)
between "$NTIDS" 32 64 "e) -t 1ms: unwound user stacks from at least 32 of the 64 workers (got $NTIDS)"

# A lower threshold and fewer workers: the syscalls of malloc, dlopen and fork become outliers
# too (they are slowed by the napping workers), so the signal lands right after them.
WL_LOG=$T/log2 record_v "$T/out2" "$T/err2" -v -t 100us -- "$WL/stress" 2 8
is "$RC" 0 "e) record -t 100us -- stress 2 8: exit 0"
stress_checks "e) -t 100us" "$T/log2" "$T/err2" "$T/out2" 8
role_syscalls "$T/out2" "$T/out2.tids" | sort | uniq -c | sort -rn >"$T/dist2"
diag "e) -t 100us: syscall outliers by thread role, syscall and signalled (count role syscall signalled):"
grep -v ' worker ' "$T/dist2" | head -25 | while IFS= read -r line; do diag "   $line"; done
MALLOC_SIG=$(awk '$2 ~ /^malloc/ && $3 ~ /^(mmap|munmap|brk|madvise|mremap)$/ && $4 == "true" { n += $1 } END { print n + 0 }' "$T/dist2")
DLOPEN_SIG=$(awk '$2 == "dlopen" && $3 ~ /^(openat|open|read|pread64|mmap|munmap|mprotect|close|newfstatat|fstat)$/ && $4 == "true" { n += $1 } END { print n + 0 }' "$T/dist2")
ok '[ "$MALLOC_SIG" -ge 1 ]' "e) -t 100us: signalled right after a syscall inside malloc/free ($MALLOC_SIG times)"
ok '[ "$DLOPEN_SIG" -ge 1 ]' "e) -t 100us: signalled right after a syscall inside dlopen/dlclose ($DLOPEN_SIG times)"
# A slow clone of the fork thread used to be reported signal-blocked and never signalled: the
# library's fork wrapper blocked signals across fork, as lttng-ust's fork handling requires.
# With no lttng-ust and no wrapper, a signal right after a slow clone (in the parent) is as
# harmless as after any syscall: the children all exit 0 ("fork ok" above counts them), and
# those outliers get their stacks, through fork_main.
FORK_TID=$(awk '$1 == "tid" && $2 == "fork" { print $3; exit }' "$T/log2")
CLONE_SEL="select(.tid == ${FORK_TID:-0} and (.syscall // \"\" | test(\"^clone\")) and .signalled)"
CLONE_UNW="$CLONE_SEL | select(.user_stack.source == \"unwind\")"
read -r FORKS_OK FORKS_BAD < <(echo "$(wl_log_get "$T/log2" fork 3) $(wl_log_get "$T/log2" fork 4)")
ok '[ "${FORKS_OK:-0}" -gt 0 ] && [ "${FORKS_BAD:-x}" = 0 ]' \
	"e) -t 100us: every child of the fork thread exited 0 ($FORKS_OK reaped with status 0, $FORKS_BAD not)"
CLONES=$(jcount "$T/out2" "$CLONE_SEL")
CLONES_UNW=$(jcount "$T/out2" "$CLONE_UNW")
ok '[ "$CLONES_UNW" -ge 1 ]' "e) -t 100us: slow clones of the fork thread were signalled and unwound ($CLONES_UNW of $CLONES signalled)"
is "$(jcount "$T/out2" "$CLONE_UNW | select(.user_stack.status != 0 or ([.user_stack.frames[].symbol] | index(\"fork_main\") | not))")" 0 \
	"e) -t 100us: each of those stacks is whole and goes through fork_main" ||
	dump_outlier_json "$T/out2" "$CLONE_UNW | {status: .user_stack.status, symbols: [.user_stack.frames[].symbol]}"
# A signalled clone without a stack must say why, like any other outlier.
is "$(jcount "$T/out2" "$CLONE_SEL | select(.user_stack.source != \"unwind\" and (.flags | any(startswith(\"no-unwound-stack\")) | not))")" 0 \
	"e) -t 100us: a signalled clone without its stack is flagged no-unwound-stack"
diag "e) -t 100us: signalled clones without a stack: $((CLONES - CLONES_UNW)) of $CLONES: $(jq -r "$CLONE_SEL | .flags[] | select(startswith(\"no-unwound-stack\")) | .[0:60]" "$T/out2" | sort | uniq -c | paste -sd';')"

# --- f) the loader's lock ---------------------------------------------------------------------
T=$TMPD/f
mkdir -p "$T"
WL_LOG=$T/log record_v "$T/out" "$T/err" -t 20ms -- "$WL/loaderlock" 3 80
is "$RC" 0 "f) record -t 20ms -- loaderlock 3 80: exit 0 (3 exits: the watchdog found it hung)"
is "$(wl_log_get "$T/log" hung)$(grep -c '^hung' "$T/log")" 0 "f) no thread hung: the holder's handler did not wait for the loader's lock" ||
	diag "  $(grep '^hung' "$T/log")"
is "$(wl_log_get "$T/log" done)" 3 "f) all 3 rounds done"
ITER=$(awk '$1 == "tid" && $2 == "iterator" { print $3 }' "$T/log")
HOLDER=$(awk '$1 == "tid" && $2 == "holder" { print $3 }' "$T/log")
HSEL="select(.tid == ${HOLDER:-0} and .syscall == \"clock_nanosleep\" and .signalled)"
is "$(jcount "$T/out" "$HSEL")" 3 "f) the holder's 3 naps of 80 ms (app lock held) were outliers and signalled"
# Frames: the holder's stack goes from its nap through holder_main; the iterator's, caught waiting
# for the app lock (a futex) inside its dl_iterate_phdr() callback, through glibc's loader and on
# up. The iterator's naps before it are outliers too: only its futex waits are taken here.
ISEL="select(.tid == ${ITER:-0} and .syscall == \"futex\" and .signalled and .user_stack.source == \"unwind\")"
HNAMES=$(stack_names "$WL/loaderlock" "$T/log" "$T/out" "$HSEL | select(.user_stack.source == \"unwind\")")
INAMES=$(stack_names "$WL/loaderlock" "$T/log" "$T/out" "$ISEL" -1)
like "$HNAMES" 'holder_nap.* holder_main' "f) the holder's stack unwound: holder_nap, then holder_main ($HNAMES)" ||
	dump_outlier_json "$T/out" "$HSEL | {user_stack, flags}"
like "$INAMES" 'take_app_lock.* iterator_main' "f) the iterator's too, through dl_iterate_phdr: take_app_lock ... iterator_main ($INAMES)" ||
	dump_outlier_json "$T/out" "select(.tid == ${ITER:-0}) | {syscall, signalled, user_stack, flags}"
like "$(stack_symbols "$T/out" "$ISEL" -1)" 'take_app_lock .*dl_iterate_phdr' \
	"f) and latsnap names dl_iterate_phdr between the callback and the walk's caller"
is "$(jcount "$T/out" "select((.tid == ${HOLDER:-0} or .tid == ${ITER:-0}) and .user_stack.source == \"unwind\" and .user_stack.status != 0)")" 0 \
	"f) every unwound user stack of both threads went to its end (status 0)"

# --- g) no tracer in the application ----------------------------------------------------------
# The library loads nothing but libunwind: lttng-ust in an application would mean its listener
# threads (named COMM-ust), its registration with the session daemon and its fork handling, all
# at the application's expense. Looked at while a preloaded sleeper runs under latsnap.
T=$TMPD/g
mkdir -p "$T"
# maps_and_threads PID: "LIBLATSNAP LIBLTTNG_UST THREADS UST_THREADS" of a running process.
maps_and_threads() {
	local maps=/proc/$1/maps
	echo "$(grep -c '/liblatsnap\.so' "$maps" 2>/dev/null) $(grep -c 'liblttng-ust' "$maps" 2>/dev/null)" \
		"$(cat /proc/"$1"/task/*/comm 2>/dev/null | wc -l) $(cat /proc/"$1"/task/*/comm 2>/dev/null | grep -c -e '-ust$')"
}
# wait_pid LOG: the "pid" line of a workload's log, once it is there (5 s at most).
wait_pid() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -qs '^pid ' "$1" && break
		sleep 0.05
	done
	wl_log_get "$1" pid
}
WL_LOG=$T/log "$LATSNAP" record --no-snapshot --json -t 50ms -- "$WL/sleeper" 500 4 >"$T/out" 2>"$T/err" &
BG=$!
track_bg $BG
PID=$(wait_pid "$T/log")
sleep 0.3
read -r LIB UST THREADS UST_THREADS < <(maps_and_threads "${PID:-0}")
ok '[ -n "$PID" ] && [ "$LIB" -ge 1 ]' "g) the preloaded sleeper (pid $PID) has liblatsnap.so mapped"
is "$UST" 0 "g) no liblttng-ust mapped in it" || diag "$(grep liblttng-ust "/proc/${PID:-0}/maps" | head -3)"
is "$THREADS/$UST_THREADS" 1/0 "g) one thread, its own: no thread named *-ust" ||
	diag "threads: $(cat /proc/"${PID:-0}"/task/*/comm 2>/dev/null | paste -sd' ')"
wait $BG
is "$?" 0 "g) record -- sleeper 500 4: exit 0"
is "$(jcount "$T/out" "select(.pid == ${PID:-0} and .signalled and .user_stack.source == \"unwind\")")" 4 \
	"g) its 4 naps were signalled and unwound all the same" || dump_outliers "$T/out"
# The control, so that the checks above can fail: the same sleeper with lttng-ust preloaded.
UST_LIB=$(ldconfig -p | awk '/liblttng-ust\.so\.1 / { print $NF; exit }')
if [ -n "$UST_LIB" ]; then
	LD_PRELOAD=$UST_LIB WL_LOG=$T/log.ust "$WL/sleeper" 500 2 >/dev/null 2>&1 &
	CPID=$!
	track_bg $CPID
	wait_pid "$T/log.ust" >/dev/null
	sleep 0.3
	read -r LIB UST THREADS UST_THREADS < <(maps_and_threads $CPID)
	ok '[ "$UST" -ge 1 ] && [ "$UST_THREADS" -ge 1 ]' \
		"g) control: with liblttng-ust preloaded, the same checks see it mapped and its threads ($UST_THREADS *-ust of $THREADS)"
	kill $CPID 2>/dev/null
	wait $CPID 2>/dev/null
else
	skip_tests 1 "no liblttng-ust.so.1 for the control"
fi

diag "wall time: $((($(date +%s%N) - T0) / 1000000)) ms"
# --- h) signals while another thread forks ------------------------------------------------------
T=$TMPD/h
mkdir -p "$T"
WL_LOG=$T/log record_json "$T/out" "$T/err" -- -v -t 5ms -- "$WL/forknap" 2 10 256
is "$RC" 0 "h) record -v -t 5ms -- forknap 2 10 256: exit 0"
MAIN=$(wl_log_get "$T/log" pid)
awk '$1 == "a" || $1 == "b" { print $1, $3, $4 }' "$T/log" >"$T/spans"
# Each nap outlier of the main thread: "KIND NAMED FORKING", KIND from the workload's own log
# (the nap whose span holds the outlier's start), NAMED the nap function its unwound stack names
# (- for none), FORKING 1 when flagged as signalled during a fork.
jq -r --argjson t "${MAIN:-0}" 'select(.tid == $t and (.syscall // "" | test("nanosleep$"))) |
	"\(.start_ns) \([.user_stack.frames[]? | select(.symbol == "nap_a" or .symbol == "nap_b") | .symbol][0] // "-" | sub("nap_"; "")) \([.flags[]? | select(startswith("no-unwound-stack") and contains("forking"))] | length)"' \
	"$T/out" 2>/dev/null |
	awk 'NR == FNR { k[NR] = $1; s[NR] = $2; e[NR] = $3; n = NR; next }
	     { for (i = 1; i <= n; i++) if ($1 >= s[i] - 200000 && $1 <= e[i]) { print k[i], $2, $3; break } }' \
		"$T/spans" - >"$T/naps"
NAPS=$(grep -c '' "$T/naps")
ok '[ "$NAPS" -ge 20 ]' "h) most naps are outliers ($NAPS of $(grep -c '' "$T/spans"))"
is "$(awk '$2 != "-" && $2 != $1' "$T/naps" | wc -l)" 0 \
	"h) no nap's unwound stack names the other nap's function (a stack taken for another outlier)" ||
	diag "$(awk '$2 != "-" && $2 != $1' "$T/naps" | head -5)"
is "$(awk '$2 == "-" && $3 == 0' "$T/naps" | wc -l)" 0 "h) a nap without its function is flagged: signalled while forking"
FORKING=$(awk '$3 == 1' "$T/naps" | wc -l)
ok '[ "$FORKING" -ge 1 ]' "h) signals landed while the forker was in fork() ($FORKING of $NAPS naps, $(wl_log_get "$T/log" forks) forks)"
# How often the second signal came (a sleep of the main thread's that the library answered: with
# its stack, or flagged as signalled while forking): the kernel's timing decides, so this is
# told, not asserted.
diag "h) sleeps of the main thread answered by the library: $(jq -r --argjson t "${MAIN:-0}" \
	'select(.tid == $t and .syscall == null and (.user_stack.source == "unwind" or
		any(.flags[]?; startswith("no-unwound-stack: signalled while")))) | .tid' \
	"$T/out" 2>/dev/null | wc -l)"
read -r SENT REPORTED < <(sed -n 's/.*signals to the preload library: \([0-9]*\) sent.*; \([0-9]*\) stacks reported back.*/\1 \2/p' "$T/err")
ok '[ -n "${SENT:-}" ] && [ "$SENT" = "$REPORTED" ]' "h) every signal sent was answered (${SENT:-?} sent, ${REPORTED:-?} reported)"

done_testing
